//! What-ifs on nodes: `--drain NODE` (cordoned and evicted as `kubectl drain` does, the
//! node kept), `--remove-node NODE` and `--lose KEY=VALUE` (nodes deleted, or a zone lost
//! in an outage); the controllers' pods come back pending and are queued.

use crate::error::{Result, refuse};
use crate::runtime::Runtime;
use std::collections::HashSet;
use topospread::api::ControllerKind;
use topospread::convert::DEFAULT_NAMESPACE;
use topospread::snapshot::Snapshot;
use topospread::{DrainAction, Drained};
use topospread_k8s::load::{Loaded, Object};

/// The nodes `--remove-node` and `--lose` name, in order, each once; an unknown node, a
/// malformed `KEY=VALUE` or one no node carries is an error naming it.
pub fn nodes_to_remove(
    snapshot: &Snapshot,
    remove: &[String],
    lose: &[String],
) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |n: String| {
        if !out.contains(&n) {
            out.push(n);
        }
    };
    for name in remove {
        if snapshot.node_id(name).is_none() {
            refuse!("--remove-node {name}: node {name:?} not found");
        }
        push(name.clone());
    }
    let symbols = snapshot.symbols();
    for arg in lose {
        let Some((key, value)) = arg.split_once('=') else {
            refuse!("--lose {arg}: want KEY=VALUE, e.g. topology.kubernetes.io/zone=us-east-1a");
        };
        let wanted = symbols.get(key).zip(symbols.get(value));
        let matching: Vec<String> = snapshot
            .nodes()
            .iter()
            .filter(|n| wanted.is_some_and(|(k, v)| n.node.labels.get(k) == Some(v)))
            .map(|n| n.node.name.to_string())
            .collect();
        if matching.is_empty() {
            refuse!("--lose {arg}: no node is labelled {key}={value}");
        }
        matching.into_iter().for_each(&mut push);
    }
    Ok(out)
}

/// The what-ifs on nodes, in one request.
#[derive(Clone, Copy, Debug, Default)]
pub struct NodeWhatIfs<'a> {
    /// `--drain`: cordoned, their pods evicted as `kubectl drain` does.
    pub drain: &'a [String],
    /// `--remove-node`: the Node objects deleted.
    pub remove: &'a [String],
    /// `--lose KEY=VALUE`: every node so labelled deleted.
    pub lose: &'a [String],
}

impl NodeWhatIfs<'_> {
    /// Whether any is asked for.
    pub fn is_empty(&self) -> bool {
        self.drain.is_empty() && self.remove.is_empty() && self.lose.is_empty()
    }
}

/// Removes the nodes `--remove-node` and `--lose` name, then drains those `--drain`
/// names (nothing when none is given). The static pods among `objects` go with a
/// removed node, never recreated elsewhere, and stay on a drained one.
pub(crate) fn drain(
    runtime: &mut Runtime,
    snapshot: &mut Snapshot,
    what: NodeWhatIfs<'_>,
    objects: &[Loaded],
) -> Result<Option<Drained>> {
    if what.is_empty() {
        return Ok(None);
    }
    for name in what.drain {
        if snapshot.node_id(name).is_none() {
            refuse!("--drain {name}: node {name:?} not found");
        }
        if what.remove.contains(name) {
            refuse!("--drain {name}: also given to --remove-node; choose one");
        }
    }
    let statics = static_pods(objects);
    let mut out = Drained::default();
    let nodes = nodes_to_remove(snapshot, what.remove, what.lose)?;
    if let Some(n) = what.drain.iter().find(|n| nodes.contains(n)) {
        refuse!("--drain {n}: the node is also lost with --lose; choose one");
    }
    if !nodes.is_empty() {
        out = runtime.drain(snapshot, &nodes, &statics)?;
    }
    if !what.drain.is_empty() {
        let local = local_storage(objects);
        let action = |pod: &topospread::api::Pod, full: &str| -> DrainAction {
            kubectl_drain_action(pod, full, &statics, &local)
        };
        let d = runtime.cordon_and_drain(snapshot, what.drain, &action)?;
        out.cordoned = d.cordoned;
        out.kept = d.kept;
        out.refused = d.refused;
        out.blocked = d.blocked;
        out.replaced.extend(d.replaced);
    }
    Ok(Some(out))
}

/// kubectl drain's filters in its order (`skipDeletedFilter`, `daemonSetFilter` with
/// `--ignore-daemonsets`, `mirrorPodFilter`, `localStorageFilter`, `unreplicatedFilter`),
/// with its messages as it prints them (`cannot delete ` and the filter's fatal text).
fn kubectl_drain_action(
    pod: &topospread::api::Pod,
    full: &str,
    statics: &HashSet<String>,
    local: &HashSet<String>,
) -> DrainAction {
    if pod.terminating {
        return DrainAction::Keep;
    }
    let kind = pod.controller.as_ref().map(|c| &c.kind);
    if kind == Some(&ControllerKind::DaemonSet) || statics.contains(full) {
        return DrainAction::Keep;
    }
    if local.contains(full) {
        return DrainAction::Refuse(
            "cannot delete Pods with local storage (use --delete-emptydir-data to override)".into(),
        );
    }
    if kind.is_none() {
        return DrainAction::Refuse(
            "cannot delete Pods declare no controller (use --force to override)".into(),
        );
    }
    DrainAction::Evict
}

/// The pods among `objects` with an emptyDir volume (`namespace/name`), which kubectl's
/// `localStorageFilter` refuses to evict without `--delete-emptydir-data`.
fn local_storage(objects: &[Loaded]) -> HashSet<String> {
    objects
        .iter()
        .filter_map(|l| match &l.object {
            Object::Pod(p) => p
                .spec
                .as_ref()
                .and_then(|s| s.volumes.as_ref())
                .is_some_and(|v| v.iter().any(|v| v.empty_dir.is_some()))
                .then(|| {
                    let ns = p.metadata.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE);
                    format!("{ns}/{}", p.metadata.name.as_deref().unwrap_or_default())
                }),
            Object::CompactPod(p) => p
                .eviction_blockers
                .as_ref()
                .is_some_and(|b| b.empty_dir.is_some())
                .then(|| format!("{}/{}", p.namespace, p.name)),
            _ => None,
        })
        .collect()
}

/// `kubernetes.io/config.mirror`: the annotation the kubelet puts on a static pod's mirror.
const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";

/// The mirror pods of static pods among `objects`, as `namespace/name`: annotated
/// `kubernetes.io/config.mirror`, or controlled by their Node (what the kubelet sets).
fn static_pods(objects: &[Loaded]) -> HashSet<String> {
    objects
        .iter()
        .filter_map(|l| match &l.object {
            Object::Pod(p) => {
                let m = &p.metadata;
                let annotated = m
                    .annotations
                    .as_ref()
                    .is_some_and(|a| a.contains_key(MIRROR_ANNOTATION));
                let node_owned = m
                    .owner_references
                    .iter()
                    .flatten()
                    .any(|o| o.controller == Some(true) && o.kind == "Node");
                (annotated || node_owned).then(|| {
                    let ns = m.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE);
                    format!("{ns}/{}", m.name.as_deref().unwrap_or_default())
                })
            }
            Object::CompactPod(p) => (p.mirror
                || p.controller
                    .as_ref()
                    .is_some_and(|(kind, _)| kind == "Node"))
            .then(|| format!("{}/{}", p.namespace, p.name)),
            _ => None,
        })
        .collect()
}
