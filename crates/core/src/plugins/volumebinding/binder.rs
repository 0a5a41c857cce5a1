//! The scheduler's volume binder (`binder.go`): a pod's claims sorted into bound and
//! unbound, the per-node search for volumes to bind or to provision (`FindPodVolumes`),
//! and the binding itself once a node is chosen (`AssumePodVolumes` and `BindPodVolumes`,
//! with the PV controller's and the provisioner's part done at once).

use crate::api::{
    ClaimRef, Labels, NodeSelectorMatcher, NodeSelectorTermMatcher, Op, PersistentVolume,
    PersistentVolumeClaim, Pod, PodVolume, Requirement, Selector, Symbols,
};
use crate::framework::{Code, Status};
use crate::snapshot::{NodeId, PodId, Snapshot};
use std::collections::BTreeSet;

/// `ErrReasonBindConflict`.
pub const ERR_REASON_BIND_CONFLICT: &str =
    "node(s) didn't find available persistent volumes to bind";
/// `ErrReasonNodeConflict`, as kubernetes PR 129887 words it from 1.33.
pub const ERR_REASON_NODE_CONFLICT: &str = "node(s) didn't match PersistentVolume's node affinity";
/// `ErrReasonNodeConflict` up to 1.32.
pub const ERR_REASON_NODE_CONFLICT_BEFORE_1_33: &str = "node(s) had volume node affinity conflict";
/// `ErrReasonPVNotExist`.
pub const ERR_REASON_PV_NOT_EXIST: &str =
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";
/// PreFilter's reason for claims the PV controller should already have bound.
pub const ERR_REASON_UNBOUND_IMMEDIATE: &str = "pod has unbound immediate PersistentVolumeClaims";
/// The provisioner of classes that cannot provision (`NotSupportedProvisioner`).
pub const NOT_SUPPORTED_PROVISIONER: &str = "kubernetes.io/no-provisioner";

/// A pod's claims as the binder sorts them (`PodVolumeClaims`).
#[derive(Clone, Debug, Default)]
pub struct PodClaims {
    /// Claims fully bound to a volume.
    pub bound: Vec<PersistentVolumeClaim>,
    /// Unbound claims of a `WaitForFirstConsumer` class: bound where the pod lands.
    pub delayed: Vec<PersistentVolumeClaim>,
    /// Unbound claims the PV controller should have bound (Immediate, or pre-bound by
    /// `spec.volumeName`).
    pub immediate: Vec<PersistentVolumeClaim>,
}

/// `isPVCFullyBound`: a volume named and the bind-completed annotation set.
pub fn is_fully_bound(claim: &PersistentVolumeClaim) -> bool {
    claim.volume_name.is_some() && claim.bind_completed
}

fn unresolvable(reason: String) -> Status {
    Status::new(Code::UnschedulableAndUnresolvable, reason)
}

/// The pod's claims, checked as `podHasPVCs` does, then sorted as `GetPodVolumeClaims`
/// does. `Ok(None)`: the pod uses no claim. A missing, lost, terminating or foreign
/// claim is UnschedulableAndUnresolvable with upstream's words.
pub fn pod_claims(pod: &Pod, snapshot: &Snapshot) -> Result<Option<PodClaims>, Status> {
    let symbols = snapshot.symbols();
    let namespace = symbols.resolve(pod.namespace);
    let mut claims = Vec::new();
    for (name, ephemeral) in pod.volumes.iter().filter_map(PodVolume::claim) {
        let Some(claim) = snapshot.persistent_volume_claim(pod.namespace, name) else {
            return Err(unresolvable(if ephemeral {
                format!(
                    "waiting for ephemeral volume controller to create the persistentvolumeclaim {name:?}"
                )
            } else {
                format!("persistentvolumeclaim {name:?} not found")
            }));
        };
        if claim.lost {
            return Err(unresolvable(format!(
                "persistentvolumeclaim {name:?} bound to non-existent persistentvolume {:?}",
                claim.volume_name.as_deref().unwrap_or("")
            )));
        }
        if claim.terminating {
            return Err(unresolvable(format!(
                "persistentvolumeclaim {name:?} is being deleted"
            )));
        }
        if ephemeral && claim.owner_pod_uid.as_deref() != Some(&*pod.uid) {
            return Err(unresolvable(format!(
                "PVC {namespace}/{name} was not created for pod {namespace}/{} (pod is not owner)",
                pod.name
            )));
        }
        claims.push(claim);
    }
    if claims.is_empty() {
        return Ok(None);
    }
    let mut out = PodClaims::default();
    for claim in claims {
        if is_fully_bound(claim) {
            out.bound.push(claim.clone());
            continue;
        }
        let delayed = snapshot
            .storage_class(&claim.storage_class)
            .is_some_and(|c| c.wait_for_first_consumer);
        if delayed && claim.volume_name.is_none() {
            out.delayed.push(claim.clone());
        } else {
            out.immediate.push(claim.clone());
        }
    }
    Ok(Some(out))
}

/// What binding the pod's volumes on one node takes (`PodVolumes`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodVolumes {
    /// Claims matched to an existing volume: (claim name, volume name).
    pub static_bindings: Vec<(Box<str>, Box<str>)>,
    /// Claims to provision a volume for.
    pub dynamic_provisions: Vec<Box<str>>,
}

/// `FindMatchingVolume`: the volume pre-bound to the claim, else the smallest available
/// volume of the claim's class that is large enough, of the claim's volume mode, matched
/// by its selector, reachable from the node (when one is given) and offering the
/// claim's access modes (the scheduler's path checks them here, the PV controller's
/// through its index by access modes). `None` when none fits.
pub fn find_matching_volume<'a>(
    claim: &PersistentVolumeClaim,
    node_labels: Option<&Labels>,
    excluded: &BTreeSet<Box<str>>,
    delay_binding: bool,
    snapshot: &'a Snapshot,
) -> Option<&'a PersistentVolume> {
    let symbols = snapshot.symbols();
    let mut smallest: Option<&PersistentVolume> = None;
    for v in snapshot.persistent_volumes() {
        if excluded.contains(&v.name)
            || (v.claim_ref.is_some() && !v.is_bound_to(claim, symbols))
            || v.capacity < claim.request
            || v.volume_mode != claim.volume_mode
            || v.terminating
        {
            continue;
        }
        let affinity_ok = node_labels.is_none_or(|l| v.node_affinity_matches(l, symbols));
        if v.is_bound_to(claim, symbols) {
            return affinity_ok.then_some(v);
        }
        if node_labels.is_none() && delay_binding {
            continue;
        }
        if !v.available
            || claim
                .selector
                .as_ref()
                .is_some_and(|s| !s.matches(&v.labels, symbols))
            || v.storage_class != claim.storage_class
            || !affinity_ok
            || !v.access_modes.contains(claim.access_modes)
        {
            continue;
        }
        if smallest.is_none_or(|s| s.capacity > v.capacity) {
            smallest = Some(v);
        }
    }
    smallest
}

/// `FindPodVolumes` for one node: the bindings it would take, or the reasons the node
/// does not fit (UnschedulableAndUnresolvable, a bound volume's node affinity not
/// matching the node worded as `node_conflict`), or an error status.
pub fn find_pod_volumes(
    claims: &PodClaims,
    node: NodeId,
    snapshot: &Snapshot,
    node_conflict: &'static str,
) -> Result<PodVolumes, Status> {
    let symbols = snapshot.symbols();
    let info = snapshot.node(node);
    let labels = &info.node.labels;
    let mut out = PodVolumes::default();
    let (mut bound_ok, mut unbound_ok, mut pvs_found) = (true, true, true);
    'check: {
        for claim in &claims.bound {
            let name = claim.volume_name.as_deref().unwrap_or("");
            let Some(pv) = snapshot.persistent_volume(name) else {
                pvs_found = false;
                break 'check;
            };
            if !pv.node_affinity_matches(labels, symbols) {
                bound_ok = false;
                break 'check;
            }
        }
        if claims.delayed.is_empty() {
            break 'check;
        }
        let mut to_provision: Vec<&PersistentVolumeClaim> = Vec::new();
        let mut to_match: Vec<&PersistentVolumeClaim> = Vec::new();
        for claim in &claims.delayed {
            match &claim.selected_node {
                Some(n) if **n != *info.node.name => {
                    unbound_ok = false;
                    break 'check;
                }
                Some(_) => to_provision.push(claim),
                None => to_match.push(claim),
            }
        }
        if !to_match.is_empty() {
            to_match.sort_by_key(|a| a.request);
            let mut chosen = BTreeSet::new();
            for claim in to_match {
                match find_matching_volume(claim, Some(labels), &chosen, true, snapshot) {
                    Some(pv) => {
                        chosen.insert(pv.name.clone());
                        out.static_bindings
                            .push((claim.name.clone(), pv.name.clone()));
                    }
                    None => {
                        unbound_ok = false;
                        to_provision.push(claim);
                    }
                }
            }
        }
        if !to_provision.is_empty() {
            // `checkVolumeProvisions` decides for every claim left, as upstream does.
            unbound_ok = true;
            for claim in to_provision {
                if claim.storage_class.is_empty() {
                    return Err(Status::error(format!(
                        "no class for claim \"{}/{}\"",
                        symbols.resolve(claim.namespace),
                        claim.name
                    )));
                }
                let Some(class) = snapshot.storage_class(&claim.storage_class) else {
                    return Err(Status::error(format!(
                        "failed to find storage class {:?}",
                        claim.storage_class
                    )));
                };
                if class.provisioner.is_empty()
                    || *class.provisioner == *NOT_SUPPORTED_PROVISIONER
                    || !class.allows(labels)
                {
                    unbound_ok = false;
                    out.dynamic_provisions.clear();
                    break 'check;
                }
                out.dynamic_provisions.push(claim.name.clone());
            }
        }
    }
    let reasons: Vec<&'static str> = [
        (!bound_ok, node_conflict),
        (!unbound_ok, ERR_REASON_BIND_CONFLICT),
        (!pvs_found, ERR_REASON_PV_NOT_EXIST),
    ]
    .into_iter()
    .filter_map(|(failed, r)| failed.then_some(r))
    .collect();
    match reasons.split_first() {
        None => Ok(out),
        Some((first, rest)) => Err(rest.iter().fold(
            Status::new(Code::UnschedulableAndUnresolvable, *first),
            |s, r| s.with_reason(*r),
        )),
    }
}

/// The claim reference a volume bound to `claim` carries.
fn claim_ref(claim: &PersistentVolumeClaim, symbols: &Symbols) -> ClaimRef {
    ClaimRef {
        namespace: symbols.resolve(claim.namespace).into(),
        name: claim.name.clone(),
        uid: Some(claim.uid.clone()),
    }
}

/// The volume a provisioner creates for `claim` on `node`: reachable from the node's
/// topology, its values for the keys the CSI driver reports on the node's CSINode
/// (`topologyKeys`), or else for the keys of the class's `allowedTopologies`; no
/// affinity when there are none.
fn provisioned_volume(
    claim: &PersistentVolumeClaim,
    node: NodeId,
    snapshot: &Snapshot,
) -> PersistentVolume {
    let info = snapshot.node(node);
    let class = snapshot.storage_class(&claim.storage_class);
    let provisioner = class.map_or("", |c| &c.provisioner);
    let mut keys: Vec<_> = snapshot
        .csi_node(&info.node.name)
        .and_then(|n| n.drivers.iter().find(|d| *d.name == *provisioner))
        .map(|d| d.topology_keys.clone())
        .unwrap_or_default();
    if keys.is_empty()
        && let Some(c) = class
    {
        keys = c
            .allowed_topologies
            .iter()
            .flatten()
            .map(|(k, _)| *k)
            .collect();
    }
    keys.sort_unstable();
    keys.dedup();
    let requirements: Vec<Requirement> = keys
        .into_iter()
        .filter_map(|key| {
            let value = info.node.labels.get(key)?;
            Some(Requirement {
                key,
                op: Op::In(Box::new([value])),
            })
        })
        .collect();
    provisioned_with(claim, requirements, snapshot)
}

/// The volume a provisioner creates for `claim`, reachable where `requirements` hold
/// (everywhere when there are none): named `pvc-<claim UID>`, with the claim's size,
/// modes and class, and a CSI source naming the class's provisioner.
pub(super) fn provisioned_with(
    claim: &PersistentVolumeClaim,
    requirements: Vec<Requirement>,
    snapshot: &Snapshot,
) -> PersistentVolume {
    let symbols = snapshot.symbols();
    let class = snapshot.storage_class(&claim.storage_class);
    let provisioner = class.map_or("", |c| &c.provisioner);
    let node_affinity = (!requirements.is_empty()).then(|| NodeSelectorMatcher {
        terms: vec![NodeSelectorTermMatcher::Valid {
            labels: Selector::from_requirements(requirements),
            fields: Vec::new(),
        }],
    });
    let name: Box<str> = format!("pvc-{}", claim.uid.replace('/', "-")).into();
    let csi = (!provisioner.is_empty() && !provisioner.starts_with("kubernetes.io/"))
        .then(|| (provisioner.into(), name.clone()));
    PersistentVolume {
        name,
        labels: Labels::default(),
        capacity: claim.request,
        access_modes: claim.access_modes,
        volume_mode: claim.volume_mode,
        storage_class: claim.storage_class.clone(),
        node_affinity,
        claim_ref: Some(claim_ref(claim, symbols)),
        available: false,
        terminating: false,
        csi,
    }
}

/// Binds a claim to a volume, as the PV controller completes a binding.
pub(super) fn bind(
    snapshot: &mut Snapshot,
    mut claim: PersistentVolumeClaim,
    mut volume: PersistentVolume,
) {
    volume.claim_ref = Some(claim_ref(&claim, snapshot.symbols()));
    volume.available = false;
    claim.volume_name = Some(volume.name.clone());
    claim.bind_completed = true;
    snapshot.set_persistent_volume(volume);
    snapshot.set_persistent_volume_claim(claim);
}

/// What binding a pod's volumes changed, for the cluster events it raises.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BoundVolumes {
    /// Claims bound to an existing volume.
    pub matched: usize,
    /// Claims bound to a volume provisioned for them.
    pub provisioned: usize,
}

/// VolumeBinding's Reserve and PreBind for a pod assumed on `node`, with the PV
/// controller's and the provisioner's work done at once: each unbound
/// `WaitForFirstConsumer` claim is bound to the volume Filter matched on that node, or
/// to a volume provisioned in the node's topology. Later pods sharing the claim then
/// follow its volume's node affinity.
pub fn bind_pod_volumes(snapshot: &mut Snapshot, pod: PodId, node: NodeId) -> BoundVolumes {
    let Some(p) = snapshot.pod(pod) else {
        return BoundVolumes::default();
    };
    let namespace = p.namespace;
    let Ok(Some(claims)) = pod_claims(p, snapshot) else {
        return BoundVolumes::default();
    };
    if claims.delayed.is_empty() {
        return BoundVolumes::default();
    }
    let Ok(plan) = find_pod_volumes(&claims, node, snapshot, ERR_REASON_NODE_CONFLICT) else {
        return BoundVolumes::default();
    };
    let mut out = BoundVolumes::default();
    for (claim, volume) in &plan.static_bindings {
        let claim = snapshot.persistent_volume_claim(namespace, claim).cloned();
        let volume = snapshot.persistent_volume(volume).cloned();
        if let (Some(c), Some(v)) = (claim, volume) {
            bind(snapshot, c, v);
            out.matched += 1;
        }
    }
    for claim in &plan.dynamic_provisions {
        if let Some(c) = snapshot.persistent_volume_claim(namespace, claim).cloned() {
            let v = provisioned_volume(&c, node, snapshot);
            bind(snapshot, c, v);
            out.provisioned += 1;
        }
    }
    out
}

/// The PV controller's binding of unbound claims that do not wait for a consumer
/// (`syncUnboundClaim`): a claim pre-bound by `spec.volumeName` to a volume that exists
/// and is free for it, or an Immediate claim matched to an available volume of its
/// class. Claims left unbound go to the provisioner
/// ([`super::provision_immediate_claims`]). Returns how many claims were bound.
pub fn bind_immediate_claims(snapshot: &mut Snapshot) -> usize {
    let mut unbound: Vec<PersistentVolumeClaim> = snapshot
        .persistent_volume_claims()
        .filter(|c| !is_fully_bound(c) && !c.lost && !c.terminating)
        .cloned()
        .collect();
    // Claims that name their volume first, so a matched claim never takes it.
    unbound.sort_by(|a, b| {
        (a.volume_name.is_none(), a.namespace, &a.name).cmp(&(
            b.volume_name.is_none(),
            b.namespace,
            &b.name,
        ))
    });
    let mut bound = 0;
    for claim in unbound {
        let symbols = snapshot.symbols();
        let volume = match &claim.volume_name {
            Some(name) => snapshot
                .persistent_volume(name)
                .filter(|v| v.claim_ref.is_none() || v.is_bound_to(&claim, symbols)),
            None => {
                let delayed = snapshot
                    .storage_class(&claim.storage_class)
                    .is_some_and(|c| c.wait_for_first_consumer);
                find_matching_volume(&claim, None, &BTreeSet::new(), delayed, snapshot)
            }
        };
        if let Some(v) = volume.cloned() {
            bind(snapshot, claim, v);
            bound += 1;
        }
    }
    bound
}
