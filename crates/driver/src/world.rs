//! The cluster as the controllers first leave it: the files' objects in a snapshot, the
//! workloads expanded into their ReplicaSets, claims and pods (each pod through the API
//! server's admission), the OrderedReady StatefulSets' first sync, and the queue of
//! pending pods in PrioritySort order.

use crate::error::{DriverError, Result, refuse};
use crate::notes;
use std::collections::HashSet;
use topospread::api::Symbols;
use topospread::api::resources::RequestOptions;
use topospread::plugins::volumebinding;
use topospread::snapshot::{PodId, Snapshot};
use topospread_k8s::admission::Admission;
use topospread_k8s::build::{self, Refused};
use topospread_k8s::load::{Loaded, Object};
use topospread_k8s::notes::Note;
use topospread_k8s::workloads::{
    ExpandOptions, Expansion, Ordinal, Scale, Synced, WorkloadFeatures, expand_with,
};

/// Whether the cluster's provisioners run when claims are created.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Provisioning<'a> {
    /// Claims stay as given (a bare controller-manager: the scenario cases).
    #[default]
    Off,
    /// Immediate claims get their volumes as they are created, in `zone` when one is
    /// chosen (`--provision-zone`), else where the provisioner would put them.
    On {
        /// The chosen zone.
        zone: Option<&'a str>,
    },
}

/// How the world is built.
#[derive(Clone, Copy, Debug)]
pub struct BuildOptions<'a> {
    /// Fixes generated names.
    pub seed: u64,
    /// The cap on pods the workloads may make (`--max-pods`).
    pub max_pods: usize,
    /// `--scale`: replica counts replacing the manifests'.
    pub scale: &'a [Scale],
    /// The controllers' gates and clock.
    pub workloads: WorkloadFeatures,
    /// How pods' requests are computed (the release's `PodLevelResources`).
    pub requests: RequestOptions,
    /// Whether provisioners run.
    pub provisioning: Provisioning<'a>,
}

/// A snapshot with the workloads' pods added and the pending ones queued; cloned to
/// schedule one prepared cluster several times (explain's trials).
#[derive(Clone)]
pub struct World {
    /// Nodes and every pod (bound or pending).
    pub snapshot: Snapshot,
    /// The snapshot before controllers removed pods (scale-downs), when they did.
    pub before_removal: Option<Snapshot>,
    /// The rollouts carried out so far (simulate fills it).
    pub rollouts: Vec<topospread_k8s::workloads::RolloutReport>,
    /// The workloads' pods and ReplicaSets.
    pub expansion: Expansion,
    /// Pending pods, in PrioritySort order.
    pub queue: Vec<PodId>,
    /// Things to tell the user about the objects (finished pods left out, claims left
    /// unbound, what is not modelled), one per object: summarised by the caller.
    pub notes: Vec<Note>,
    /// Lines to tell the user after those notes (workloads not expanded, storage objects
    /// refused), one each.
    pub errors: Vec<String>,
    /// Pods Priority admission refused (a PriorityClass that does not exist): never in
    /// the snapshot, reported like pending pods.
    pub refused: Vec<Refused>,
}

/// Builds the world from admitted `objects` (compact pods interned in `symbols`):
/// workloads expanded under `options` (`seed` fixes names, up to `max_pods` pods, with
/// `scale`'s replica counts), every pod admitted; the pods controllers remove leave the
/// snapshot before anything is scheduled.
pub fn build(objects: &[Loaded], symbols: &Symbols, options: BuildOptions<'_>) -> Result<World> {
    let expansion = expand_with(
        objects,
        ExpandOptions {
            seed: options.seed,
            max_pods: options.max_pods,
            scale: options.scale,
            features: options.workloads,
        },
    )
    .map_err(|(e, _)| {
        if e.file == "--scale" {
            DriverError::Refused(e.to_string())
        } else {
            DriverError::Refused(format!("{e} (--max-pods raises the limit)"))
        }
    })?;
    let all = objects
        .iter()
        .chain(&expansion.replica_sets)
        .chain(&expansion.claims);
    let built = match options.provisioning {
        Provisioning::Off => build::build_with_symbols(all, options.requests, symbols.clone())?,
        Provisioning::On { zone } => {
            let built = build::build_provisioning_in(all, options.requests, symbols.clone(), zone)?;
            if let Some(zone) = zone {
                check_provision_zone(&built.snapshot, zone)?;
            }
            built
        }
    };
    let mut snapshot = built.snapshot;
    let mut refused = built.refused;
    // Rollouts' pods use the same quotas as every other pod created here.
    let mut expansion = expansion;
    for r in &mut expansion.rollouts {
        r.admission = std::sync::Arc::new(built.admission.clone());
    }
    for set in &mut expansion.ordered {
        set.admission = std::sync::Arc::new(built.admission.clone());
    }
    admit_pods(&mut snapshot, &expansion, &built.admission, &mut refused)?;
    // The cluster as it is, for reports' "before", when controllers remove pods from it.
    let condemned = expansion
        .ordered
        .iter()
        .any(|o| !o.condemned.is_empty() || o.updating());
    let before_removal = (!expansion.removed.is_empty() || condemned).then(|| snapshot.clone());
    first_sync(&mut snapshot, &mut expansion, &mut refused)?;
    let mut notes = built.storage_notes.clone();
    // The claims OrderedReady sets created with their first ordinals.
    let created_claims: Vec<Loaded> = expansion
        .ordered
        .iter()
        .flat_map(|o| {
            o.created_claims.iter().map(|c| Loaded {
                source: o.source.clone(),
                object: Object::PersistentVolumeClaim(Box::new(c.clone())),
            })
        })
        .collect();
    notes.extend(build::unbound_claim_notes(&snapshot, &created_claims));
    notes.extend(notes::finished(objects));
    notes.extend(notes::unmodelled(objects, &expansion));
    notes.extend(expansion.notes.iter().cloned());
    notes.extend(notes::unknown_nominations(&snapshot));
    let errors = expansion
        .errors
        .iter()
        .map(|e| format!("{e}: workload not expanded"))
        .chain(
            built
                .refused_storage
                .iter()
                .map(|r| format!("{r} (refused, left out)")),
        )
        .collect();
    let queue = pending_queue(&snapshot);
    Ok(World {
        snapshot,
        before_removal,
        rollouts: Vec::new(),
        expansion,
        queue,
        notes,
        errors,
        refused,
    })
}

/// Adds the workloads' pods to the snapshot through the API server's admission (refusals
/// into `refused`); an OrderedReady StatefulSet's missing ordinals are held for its
/// controller, which creates them one at a time.
fn admit_pods(
    snapshot: &mut Snapshot,
    expansion: &Expansion,
    admission: &Admission,
    refused: &mut Vec<Refused>,
) -> Result<()> {
    // An OrderedReady StatefulSet's new pods are created one ordinal at a time, the
    // first of them now if every ordinal below it is Running and Ready.
    let held: HashSet<(&str, &str)> = expansion
        .ordered
        .iter()
        .flat_map(|o| {
            o.ordinals.iter().filter_map(|p| match p {
                Ordinal::Missing(p) => Some((o.namespace.as_str(), p.metadata.name.as_deref()?)),
                _ => None,
            })
        })
        .collect();
    for p in &expansion.pods {
        let ns = p.pod.metadata.namespace.as_deref().unwrap_or_default();
        let name = p.pod.metadata.name.as_deref().unwrap_or_default();
        if held.contains(&(ns, name)) {
            continue;
        }
        if let Some(r) = build::admit_and_add_with(snapshot, &p.pod, &p.source.file, admission)? {
            refused.push(r);
        }
    }
    Ok(())
}

/// The OrderedReady sets' first sync, before the scheduler runs; then the pods the
/// controllers removed leave the snapshot.
fn first_sync(
    snapshot: &mut Snapshot,
    expansion: &mut Expansion,
    refused: &mut Vec<Refused>,
) -> Result<()> {
    // The OrderedReady sets' first sync: each creates its first missing ordinal, or
    // deletes condemned pods (bound ones go at once, one per sync) when every ordinal
    // is Running and Ready.
    let mut removed = Vec::new();
    loop {
        let mut deleted = false;
        for set in &mut expansion.ordered {
            match set.sync(snapshot, &mut |s, id| {
                s.remove_pod(id);
            })? {
                Synced::Refused(r) => refused.push(*r),
                Synced::Deleted(r) => {
                    removed.push(r);
                    deleted = true;
                }
                // A rolling update deleted pods: their ordinals come back next sync.
                Synced::Updated(_) => deleted = true,
                Synced::Created(_) | Synced::Nothing => {}
            }
        }
        if !deleted {
            break;
        }
    }
    expansion.removed.extend(removed);
    for r in &expansion.removed {
        if let Some(id) = snapshot.pod_id(&r.namespace, &r.pod) {
            snapshot.remove_pod(id);
        }
    }
    Ok(())
}

/// The pending pods in PrioritySort order (higher priority first, then file order), the
/// order the queue first pops them in.
fn pending_queue(snapshot: &Snapshot) -> Vec<PodId> {
    let mut queue = Vec::new();
    for (id, pod) in snapshot.pods() {
        if snapshot.pod_node(id).is_some() || pod.terminating {
            continue;
        }
        queue.push((id, pod.priority));
    }
    queue.sort_by_key(|q| std::cmp::Reverse(q.1));
    queue.into_iter().map(|(id, _)| id).collect()
}

/// `--provision-zone` must name a zone some node is in.
fn check_provision_zone(snapshot: &Snapshot, zone: &str) -> Result<()> {
    let symbols = snapshot.symbols();
    let known = symbols.get(volumebinding::ZONE_LABEL).is_some_and(|key| {
        snapshot.nodes().iter().any(|n| {
            n.node
                .labels
                .get(key)
                .is_some_and(|v| symbols.resolve(v) == zone)
        })
    });
    if known {
        return Ok(());
    }
    refuse!(
        "--provision-zone {zone:?}: no node has {}={zone}",
        volumebinding::ZONE_LABEL
    );
}
