//! `-o yaml`: the cluster a run leaves, written back as manifests that read back to the
//! same cluster: nodes (drained ones cordoned), workloads, the claims controllers made
//! and the volumes provisioned for them, with their bindings, then every pod where it
//! landed.

use crate::error::{DriverError as Error, Result};
use crate::world::World;
use std::collections::{HashMap, HashSet};
use topospread::Drained;
use topospread::snapshot::{PodId, Snapshot};
use topospread_k8s::load::{CompactPod, Loaded, Object};

mod volumes;

/// A drained node as `kubectl cordon` and the node lifecycle controller leave it:
/// `spec.unschedulable` and the `node.kubernetes.io/unschedulable:NoSchedule` taint.
fn cordoned(n: &k8s_openapi::api::core::v1::Node) -> k8s_openapi::api::core::v1::Node {
    let mut n = n.clone();
    let spec = n.spec.get_or_insert_with(Default::default);
    spec.unschedulable = Some(true);
    let taints = spec.taints.get_or_insert_with(Vec::new);
    if !taints
        .iter()
        .any(|t| t.key == "node.kubernetes.io/unschedulable" && t.effect == "NoSchedule")
    {
        taints.push(k8s_openapi::api::core::v1::Taint {
            key: "node.kubernetes.io/unschedulable".into(),
            effect: "NoSchedule".into(),
            ..Default::default()
        });
    }
    n
}

/// The resulting snapshot as multi-document YAML: nodes, workloads, then pods with
/// `spec.nodeName` set, ready to be read back. A drained node is written cordoned;
/// after `--remove-node`/`--lose`, the removed nodes and the pods they ran are left out; so are the pods preemption evicted
/// (`preempted`); each replacement a controller made is written as its own pod (the
/// evicted pod's spec under the new name).
pub fn cluster_yaml(
    objects: &[Loaded],
    world: &World,
    drained: Option<&Drained>,
    preempted: &[(String, Option<PodId>)],
    out: &mut dyn std::io::Write,
) -> Result<()> {
    let snapshot = &world.snapshot;
    let removed_nodes: HashSet<&str> = drained
        .map(|d| d.nodes.iter().map(String::as_str).collect())
        .unwrap_or_default();
    let evicted = evicted_pods(drained, preempted);
    let removed = removed_pods(world);
    // The documents are written as they come, and each pod is cloned (or read back),
    // placed and written one at a time: `-o yaml` of a 50,000-pod dump held a second
    // typed copy of every pod and every document twice (as a list, then joined).
    let mut first = true;
    let mut push = |v: &dyn erased::Yaml| -> Result<()> {
        let yaml = v.yaml()?;
        let separator = if std::mem::take(&mut first) {
            ""
        } else {
            "---\n"
        };
        out.write_all(separator.as_bytes())
            .and_then(|()| out.write_all(yaml.as_bytes()))
            .map_err(|source| Error::Io {
                context: "writing the cluster".into(),
                source,
            })
    };
    // Pods come last, in this order: those of the input, then those the run made.
    let mut pods: Vec<ToWrite> = Vec::new();
    for l in objects {
        match &l.object {
            Object::Node(n) => {
                let name = n.metadata.name.as_deref().unwrap_or_default();
                if drained.is_some_and(|d| d.cordoned.iter().any(|c| c == name)) {
                    push(&cordoned(n))?;
                } else if !removed_nodes.contains(name) {
                    push(n)?;
                }
            }
            Object::Pod(p) => {
                let name = p.metadata.name.as_deref().unwrap_or_default();
                let ns = p.metadata.namespace.as_deref().unwrap_or("default");
                if !removed.contains(&(ns, name)) {
                    pods.push(ToWrite::Whole(p));
                }
            }
            Object::CompactPod(p) => {
                if !removed.contains(&(p.namespace.as_str(), p.name.as_str())) {
                    pods.push(ToWrite::Kept(p));
                }
            }
            Object::Service(o) => push(o)?,
            Object::ReplicaSet(o) => push(o)?,
            Object::ReplicationController(o) => push(o)?,
            Object::StatefulSet(o) => push(o)?,
            Object::Deployment(o) => push(o)?,
            Object::DaemonSet(o) => push(o)?,
            Object::Job(o) => push(o)?,
            Object::CronJob(o) => push(o)?,
            Object::PriorityClass(o) => push(o)?,
            Object::PodDisruptionBudget(o) => push(o)?,
            Object::Namespace(o) => push(o)?,
            Object::PersistentVolumeClaim(o) => push(&volumes::bound_claim(o, snapshot))?,
            Object::PersistentVolume(o) => push(&volumes::bound_volume(o, snapshot))?,
            Object::StorageClass(o) => push(o)?,
            Object::CsiNode(o) => push(o)?,
            Object::LimitRange(o) => push(o)?,
            Object::RuntimeClass(o) => push(o)?,
            Object::ResourceQuota(o) => push(o)?,
            Object::SchedulerConfiguration(_) | Object::Unserved(_) => {}
        }
    }
    for l in &world.expansion.replica_sets {
        if let Object::ReplicaSet(rs) = &l.object {
            push(rs)?;
        }
    }
    for claim in created_claims(world) {
        push(&claim)?;
    }
    for volume in volumes::provisioned(objects, snapshot) {
        push(&volume)?;
    }
    let created = world.rollouts.iter().flat_map(|r| &r.created_pods);
    // An OrderedReady StatefulSet's ordinals it never created are not in the cluster.
    let made = world.expansion.pods.iter().map(|p| &p.pod).filter(|p| {
        let name = p.metadata.name.as_deref().unwrap_or_default();
        let ns = p.metadata.namespace.as_deref().unwrap_or("default");
        !world
            .expansion
            .ordered
            .iter()
            .any(|o| o.namespace == ns && o.holds(name))
    });
    // A StatefulSet's pods its rolling update recreated, from the update revision.
    let recreated = world
        .expansion
        .ordered
        .iter()
        .filter_map(|o| o.update.as_ref())
        .flat_map(|u| &u.recreated);
    pods.extend(made.chain(created).chain(recreated).map(ToWrite::Whole));
    // Pods the removed nodes ran leave; their controllers' replacements come in.
    for p in pods {
        let mut p = p.pod()?;
        place(snapshot, &mut p);
        let ns = p.metadata.namespace.as_deref().unwrap_or("default");
        let name = p.metadata.name.as_deref().unwrap_or_default();
        let Some(replacement) = evicted.get(&(ns, name)) else {
            push(&p)?;
            continue;
        };
        if let Some((id, pod)) = replacement.and_then(|id| snapshot.pod(id).map(|pod| (id, pod))) {
            let mut r = p;
            r.metadata.name = Some(pod.name.to_string());
            r.metadata.uid = None;
            r.metadata.resource_version = None;
            r.metadata.creation_timestamp = None;
            r.status = None;
            let spec = r.spec.get_or_insert_with(Default::default);
            spec.node_name = snapshot
                .pod_node(id)
                .map(|n| snapshot.node(n).node.name.to_string());
            push(&r)?;
        }
    }
    Ok(())
}

/// Pods evicted by the what-ifs (lost with their node, replaced, a removed node's daemon
/// and mirror pods) or by preemption, by (namespace, name), with the replacement each got
/// (if any).
fn evicted_pods<'a>(
    drained: Option<&'a Drained>,
    preempted: &'a [(String, Option<PodId>)],
) -> HashMap<(&'a str, &'a str), Option<PodId>> {
    let drained_pods = drained.into_iter().flat_map(|d| {
        let replaced = d.replaced.iter().map(|(v, id)| (v.as_str(), Some(*id)));
        let gone = d.lost.iter().chain(&d.daemon_pods).chain(&d.mirror_pods);
        replaced.chain(gone.map(|g| (g.as_str(), None)))
    });
    let preempted = preempted.iter().map(|(v, r)| (v.as_str(), *r));
    // A later entry wins, as when they were inserted one by one.
    drained_pods
        .chain(preempted)
        .filter_map(|(victim, replacement)| Some((victim.split_once('/')?, replacement)))
        .collect()
}

/// Pods the run deleted (scaled away, replaced by a rollout or a StatefulSet's update)
/// by (namespace, name), gathered once instead of searched for each pod.
fn removed_pods(world: &World) -> HashSet<(&str, &str)> {
    let expansion = &world.expansion;
    let rolled = world.rollouts.iter().filter_map(|r| {
        let (ns, _) = r.deployment.split_once('/')?;
        Some(r.deleted.iter().map(move |d| (ns, d.as_str())))
    });
    let updated = expansion.ordered.iter().filter_map(|o| {
        let u = o.update.as_ref()?;
        Some(
            u.replaced
                .iter()
                .map(|p| (o.namespace.as_str(), p.as_str())),
        )
    });
    expansion
        .removed
        .iter()
        .map(|r| (r.namespace.as_str(), r.pod.as_str()))
        .chain(rolled.flatten())
        .chain(updated.flatten())
        .collect()
}

/// Places `pod` where the snapshot has it: on a node, or held unbound (a replacement that
/// stayed Pending), which is written as pending: no nodeName, phase Pending.
fn place(snapshot: &Snapshot, pod: &mut k8s_openapi::api::core::v1::Pod) {
    let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
    let Some(id) = pod
        .metadata
        .name
        .as_deref()
        .and_then(|name| snapshot.pod_id(ns, name))
    else {
        return;
    };
    let spec = pod.spec.get_or_insert_with(Default::default);
    match snapshot.pod_node(id) {
        Some(n) => spec.node_name = Some(snapshot.node(n).node.name.to_string()),
        None if spec.node_name.is_some() => {
            spec.node_name = None;
            pod.status = Some(k8s_openapi::api::core::v1::PodStatus {
                phase: Some("Pending".into()),
                ..Default::default()
            });
        }
        None => {}
    }
}

/// A pod [`cluster_yaml`] writes: whole, or compact and read back from what was kept of
/// it as written.
enum ToWrite<'a> {
    Whole(&'a k8s_openapi::api::core::v1::Pod),
    Kept(&'a CompactPod),
}

impl ToWrite<'_> {
    /// The pod, a copy to place.
    fn pod(&self) -> Result<k8s_openapi::api::core::v1::Pod> {
        let p = match self {
            ToWrite::Whole(p) => return Ok((*p).clone()),
            ToWrite::Kept(p) => p,
        };
        match p.written() {
            Some(Ok(pod)) => Ok(pod),
            Some(Err(e)) => Err(Error::Render(format!(
                "pod {}/{}: reading back what was kept of it: {e}",
                p.namespace, p.name
            ))),
            None => Err(Error::Render(format!(
                "pod {}/{} was read in compact form and cannot be written back (-o yaml keeps pods as written)",
                p.namespace, p.name
            ))),
        }
    }
}

/// The claims StatefulSets created (those of ordinals they never created are not in the
/// cluster), each with the binding the run gave it.
fn created_claims(world: &World) -> Vec<k8s_openapi::api::core::v1::PersistentVolumeClaim> {
    let parallel = world
        .expansion
        .claims
        .iter()
        .filter_map(|l| match &l.object {
            Object::PersistentVolumeClaim(c) => Some(&**c),
            _ => None,
        });
    let ordered = world
        .expansion
        .ordered
        .iter()
        .flat_map(|o| &o.created_claims);
    parallel
        .chain(ordered)
        .map(|c| volumes::bound_claim(c, &world.snapshot))
        .collect()
}

/// Serializing the different object types through one call.
mod erased {
    /// An object that serializes to one YAML document.
    use crate::error::{DriverError as Error, Result};

    pub(super) trait Yaml {
        fn yaml(&self) -> Result<String>;
    }
    impl<T: serde::Serialize> Yaml for T {
        fn yaml(&self) -> Result<String> {
            serde_saphyr::to_string(self).map_err(|e| Error::Render(e.to_string()))
        }
    }
}
