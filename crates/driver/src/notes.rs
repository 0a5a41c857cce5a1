//! What the driver tells the user about the cluster it built: one [`Note`] per object,
//! for the caller to summarise (one line per kind of note).

use topospread::plugins::volumebinding::TopologyChoice;
use topospread::snapshot::Snapshot;
use topospread_k8s::build;
use topospread_k8s::load::{Loaded, Object};
use topospread_k8s::notes::Note;
use topospread_k8s::workloads::Expansion;

/// One note per Immediate claim whose volume was provisioned, naming the claim and where
/// its volume went: the provisioner's choice is an assumption the user may override
/// (`--provision-zone`).
pub fn provisions(snapshot: &Snapshot) -> Vec<Note> {
    snapshot
        .immediate_provisions()
        .iter()
        .map(|p| {
            let place: Vec<String> = p.topology.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let place = if place.is_empty() {
                "every node".to_string()
            } else {
                place.join(",")
            };
            let subject = format!(
                "persistentvolumeclaim/{}/{} in {place}",
                p.namespace, p.claim
            );
            let provisioner = &p.provisioner;
            let message = match p.choice {
                TopologyChoice::Provisioner => format!(
                    "Immediate StorageClass: volume provisioned by {provisioner} when the claim \
                     was created, in the topology external-provisioner picks for the claim's \
                     name (--provision-zone to choose)"
                ),
                TopologyChoice::Chosen => format!(
                    "Immediate StorageClass: volume provisioned by {provisioner} when the claim \
                     was created, in the --provision-zone zone"
                ),
                TopologyChoice::ChosenNotOffered => format!(
                    "Immediate StorageClass: the --provision-zone zone is not among those its \
                     class and driver offer; volume provisioned by {provisioner} where \
                     external-provisioner puts it"
                ),
                TopologyChoice::None => format!(
                    "Immediate StorageClass: volume provisioned by {provisioner} when the claim \
                     was created, reachable from every node (no allowedTopologies, and no \
                     CSINode gives the driver's topology keys; --provision-zone to pin a zone)"
                ),
            };
            Note::new(subject, message)
        })
        .collect()
}

/// One note per pending pod whose `status.nominatedNodeName` names a node the cluster
/// does not have: kube-scheduler keeps such a nomination, but no Filter reads it and the
/// pod's cycle evaluates every node (`evaluateNominatedNode` finds no node).
pub(crate) fn unknown_nominations(snapshot: &Snapshot) -> Vec<Note> {
    snapshot
        .pods()
        .filter(|(id, p)| snapshot.pod_node(*id).is_none() && !p.terminating)
        .filter_map(|(_, p)| {
            let node = p.nominated_node_name.as_deref()?;
            snapshot.node_id(node).is_none().then(|| {
                Note::new(
                    format!(
                        "pod {}/{} (nominated to {})",
                        snapshot.symbols().resolve(p.namespace),
                        p.name,
                        topospread_k8s::load::escape_control(node)
                    ),
                    "status.nominatedNodeName names a node not in the cluster: the nomination is ignored",
                )
            })
        })
        .collect()
}

/// A note for each pod to schedule (pending in the input, or made by a workload)
/// that asks the scheduler for what topospread does not model
/// ([`topospread_k8s::notes::unmodelled`]).
pub(crate) fn unmodelled(objects: &[Loaded], expansion: &Expansion) -> Vec<Note> {
    let subject = |file: &str, pod: &k8s_openapi::api::core::v1::Pod| {
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        format!("{file}: pod/{}", topospread_k8s::load::escape_control(name))
    };
    let pending = objects.iter().filter_map(|l| match &l.object {
        Object::Pod(p) if p.spec.as_ref().is_none_or(|s| s.node_name.is_none()) => {
            Some((subject(&l.source.file, p), &**p))
        }
        _ => None,
    });
    let made = expansion
        .pods
        .iter()
        .map(|p| (subject(&p.source.file, &p.pod), &p.pod));
    // A rollout's pods are made as it runs: its template speaks for them.
    let rollouts = expansion.rollouts.iter().map(|r| {
        let who = format!(
            "{}: deployment/{} (its new pods)",
            r.source.file, r.deployment
        );
        (who, &r.template)
    });
    // Extended resources some node lists in its allocatable.
    let advertised: std::collections::BTreeSet<String> = objects
        .iter()
        .filter_map(|l| match &l.object {
            Object::Node(n) => n.status.as_ref()?.allocatable.as_ref(),
            _ => None,
        })
        .flat_map(|a| a.keys().cloned())
        .collect();
    pending
        .chain(made)
        .chain(rollouts)
        .flat_map(|(who, pod)| {
            let extended =
                topospread_k8s::notes::unadvertised_extended_resources(&who, pod, &advertised);
            topospread_k8s::notes::unmodelled(&who, pod)
                .into_iter()
                .chain(extended)
        })
        .collect()
}

/// One note per pod left out of the snapshot because it has finished (phase Succeeded
/// or Failed), all with one message so they summarise to one line.
pub fn finished(objects: &[Loaded]) -> Vec<Note> {
    objects
        .iter()
        .filter_map(|l| {
            let name = match &l.object {
                Object::Pod(p) if build::is_finished(p) => {
                    p.metadata.name.as_deref().unwrap_or_default()
                }
                Object::CompactPod(p) if p.is_finished() => &p.name,
                _ => return None,
            };
            Some(Note::new(
                format!(
                    "{}: pod/{}",
                    l.source.file,
                    topospread_k8s::load::escape_control(name)
                ),
                "left out: phase Succeeded or Failed (the scheduler does not see finished pods)",
            ))
        })
        .collect()
}
