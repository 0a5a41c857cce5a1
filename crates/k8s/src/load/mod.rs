//! Kubernetes manifests from YAML or JSON text, typed with k8s-openapi: multi-document
//! files, `kind: List` and typed lists (`NodeList`, `PodList`: what `kubectl get -o yaml`
//! and the API return), concatenated JSON lists (`kubectl cluster-info dump`). Objects of
//! kinds the scheduler does not read (custom resources included) are skipped with a
//! [`Note`]. Pure: the caller reads the file; errors name the file, the object and the
//! field.
//!
//! The rooms: `error` ([`LoadError`], [`Source`]), `object` ([`Object`]), `served` (the
//! apiVersions some release does not serve, [`Unserved`]), `kinds` (which kinds are read,
//! skipped or refused), `documents` (a file's text into documents, lists flattened),
//! `typing` (one object's value into its type, [`parse_object`]), and `stream`, the
//! streaming reader [`parse_manifests`] runs.

mod compact;
mod documents;
mod error;
mod json;
mod kinds;
mod lenient;
mod object;
mod position;
mod served;
mod stream;
mod typing;
mod yaml_json;

pub use compact::{CompactPod, Compactor, EvictionBlockers};
pub use documents::{escape_control, object_name, parse_documents, parse_yaml_documents};
pub use error::{LoadError, Source};
pub use kinds::kustomize_dir;
pub use object::Object;
pub use served::{ServedApi, Unserved, api_serving};
pub use stream::{
    parse_manifests_reader, parse_manifests_reader_compact, parse_manifests_reader_with,
};
pub use typing::{parse_object, typed};

use crate::notes::Note;
use documents::{is_list, parse_document, parse_yaml_documents_at, yaml_options};
use kinds::{SKIPPED_KINDS, builtin, is_kustomization, unmodelled_kind};

/// An object with where it came from.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// Where it came from.
    pub source: Source,
    /// The object.
    pub object: Object,
}

/// What one file held.
#[derive(Clone, Debug, Default)]
pub struct Manifests {
    /// The objects, in file order.
    pub objects: Vec<Loaded>,
    /// Objects skipped on purpose (kinds the scheduler does not read), one note each.
    pub skipped: Vec<Note>,
    /// Converts bound pods to compact form as they are read, when asked for.
    compactor: Option<Compactor>,
    /// How many objects have been offered to the compactor.
    compacted: usize,
    /// How many threads read a list's items (0: one per core, up to 8).
    workers: usize,
    /// Fields the objects' types lack, when collected ([`Manifests::collecting_unknown_fields`]).
    pub unknown_fields: Vec<UnknownField>,
    /// Whether an unknown field is collected instead of failing the file.
    collect_unknown: bool,
    /// The unknown fields of the object being typed.
    pending_unknown: Vec<String>,
}

/// A field an object's type does not have (a typo such as `allowPrivilegedEscalation`),
/// collected while the rest of the object loads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownField {
    /// Where the object is.
    pub source: Source,
    /// The object, as `kind/name`.
    pub object: String,
    /// The field path.
    pub field: String,
}

impl Manifests {
    /// Bound pods read from now on are compacted by `compactor` (none: kept whole).
    pub fn set_compactor(&mut self, compactor: Option<Compactor>) {
        self.compactor = compactor;
        self.compacted = self.objects.len();
    }

    /// The compactor, given back (with its symbols) for the next input or the build.
    pub fn take_compactor(&mut self) -> Option<Compactor> {
        self.compactor.take()
    }

    /// Manifests whose objects load past unknown fields, each kept in
    /// [`Manifests::unknown_fields`] (for `validate`, which reports them all).
    pub fn collecting_unknown_fields() -> Self {
        Self {
            collect_unknown: true,
            ..Self::default()
        }
    }
}

impl Manifests {
    /// Offers the objects read since the last call to the compactor, if there is one.
    fn compact_new(&mut self) {
        let Some(compactor) = self.compactor.as_mut() else {
            return;
        };
        let from = self.compacted.min(self.objects.len());
        compactor.compact(&mut self.objects[from..]);
        self.compacted = self.objects.len();
    }
}

/// How deep `kind: List` documents may nest (kubectl flattens nested lists).
pub const MAX_LIST_DEPTH: usize = 4;

/// Parses every manifest in a YAML or JSON file (see [`parse_manifests_reader`]).
pub fn parse_manifests(text: &str, file: &str) -> Result<Manifests, LoadError> {
    parse_manifests_reader(text.as_bytes(), file)
}

/// Parses every manifest through one value tree per document: the reference the
/// streaming reader is checked against.
#[cfg(test)]
pub(crate) fn parse_manifests_tree(text: &str, file: &str) -> Result<Manifests, LoadError> {
    let mut out = Manifests::default();
    for (i, doc) in parse_documents(text, file)?.iter().enumerate() {
        let source = Source {
            file: file.to_string(),
            document: i + 1,
            item: None,
        };
        parse_document(doc, &source, None, 0, &mut out)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
