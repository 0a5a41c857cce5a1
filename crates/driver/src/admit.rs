//! The API server's side of creating the files' objects: a workload named again is
//! applied over the earlier one as `kubectl apply` updates it, then every object is
//! validated as the API server validates it on create.

use crate::error::{DriverError, Result};
use topospread_k8s::load::Loaded;
use topospread_k8s::notes::Note;
use topospread_k8s::validation::{ApiServerFeatures, Refusal, validate_objects_with};

/// What admission left out and had to say.
#[derive(Debug, Default)]
pub struct Admitted {
    /// One note per object a later file was applied over.
    pub notes: Vec<Note>,
    /// Objects refused by themselves (an update of an immutable field, a workload whose
    /// selector does not match its template...): left out of the objects, reported.
    pub refused: Vec<Refusal>,
}

/// Applies workloads named again over the earlier objects, then validates every object
/// under `features`; objects refused by themselves leave `objects` (returned in
/// [`Admitted::refused`]), a refusal that stops the whole cluster is the error.
pub fn admit_objects(objects: &mut Vec<Loaded>, features: &ApiServerFeatures) -> Result<Admitted> {
    let applied = topospread_k8s::apply::apply_over(objects);
    let mut admitted = Admitted {
        notes: applied.notes,
        refused: applied.refused,
    };
    let (object_only, fatal): (Vec<_>, Vec<_>) = validate_objects_with(objects, features)
        .into_iter()
        .partition(|r| r.object_only);
    if let Some(e) = fatal.into_iter().next() {
        return Err(DriverError::Refused(e.to_string()));
    }
    if !object_only.is_empty() {
        objects.retain(|l| {
            !object_only
                .iter()
                .any(|r| r.source == l.source && r.kind == l.object.kind())
        });
        admitted.refused.extend(object_only);
    }
    Ok(admitted)
}
