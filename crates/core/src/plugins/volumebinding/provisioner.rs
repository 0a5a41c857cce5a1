//! The external provisioner's part for claims of an `Immediate` StorageClass: they are
//! provisioned when created, before any pod uses them, in a topology the provisioner
//! chooses (external-provisioner's `GenerateAccessibilityRequirements` without a selected
//! node). The requisite topologies are the class's `allowedTopologies` flattened, else
//! every distinct value of the driver's topology keys among the nodes; the volume goes to
//! the first preferred one, the sorted list rotated by a hash of the claim's name
//! (`getPVCNameHashAndIndexOffset`, so a StatefulSet's ordinals go round the zones). A
//! chosen zone ([`Snapshot::set_provisioning`], `--provision-zone`) overrides it.

use super::binder::{NOT_SUPPORTED_PROVISIONER, bind, is_fully_bound, provisioned_with};
use crate::api::{Op, PersistentVolumeClaim, Requirement};
use crate::snapshot::Snapshot;

/// The zone label a chosen zone is matched against when the class names no topology.
pub const ZONE_LABEL: &str = "topology.kubernetes.io/zone";

/// How the topology of an Immediate claim's volume was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopologyChoice {
    /// The provisioner's own choice (the rotated requisite list's first entry).
    Provisioner,
    /// The zone the user chose.
    Chosen,
    /// The user chose a zone the class or the driver does not offer; the provisioner's
    /// choice was kept.
    ChosenNotOffered,
    /// Neither the class nor any CSINode names a topology: the volume is reachable from
    /// every node.
    None,
}

/// One volume provisioned for an Immediate claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImmediateProvision {
    /// The claim's namespace.
    pub namespace: Box<str>,
    /// The claim's name.
    pub claim: Box<str>,
    /// The volume's name (`pvc-<claim UID>`).
    pub volume: Box<str>,
    /// The class's provisioner.
    pub provisioner: Box<str>,
    /// The topology the volume is reachable from (key, value); empty for everywhere.
    pub topology: Vec<(Box<str>, Box<str>)>,
    /// How it was chosen.
    pub choice: TopologyChoice,
}

/// A topology term: (key, value) pairs sorted by key.
type Term = Vec<(String, String)>;

/// Provisions a volume for every unbound claim of an Immediate class that can provision
/// (not `kubernetes.io/no-provisioner`, no `spec.selector`, no `spec.volumeName`), binds
/// the claim to it, and records it ([`Snapshot::immediate_provisions`]). Run after the
/// PV controller matched claims to existing volumes ([`super::bind_immediate_claims`]);
/// nothing unless the snapshot's provisioners run ([`Snapshot::set_provisioning`]).
pub fn provision_immediate_claims(snapshot: &mut Snapshot) -> usize {
    if !snapshot.provisioner_runs() {
        return 0;
    }
    let mut claims: Vec<PersistentVolumeClaim> = snapshot
        .persistent_volume_claims()
        .filter(|c| {
            !is_fully_bound(c)
                && c.volume_name.is_none()
                && c.selector.is_none()
                && !c.lost
                && !c.terminating
        })
        .filter(|c| {
            snapshot
                .storage_class(&c.storage_class)
                .is_some_and(|class| {
                    !class.wait_for_first_consumer
                        && *class.provisioner != *NOT_SUPPORTED_PROVISIONER
                })
        })
        .cloned()
        .collect();
    claims.sort_by(|a, b| (a.namespace, &a.name).cmp(&(b.namespace, &b.name)));
    let count = claims.len();
    // A class's requisite topologies do not depend on the claim: found once per class,
    // not once per claim over every node.
    let mut by_class: std::collections::HashMap<Box<str>, (String, Vec<Term>)> =
        std::collections::HashMap::new();
    for claim in claims {
        let (provisioner, terms) = by_class
            .entry(claim.storage_class.clone())
            .or_insert_with(|| requisite_terms(snapshot, &claim.storage_class))
            .clone();
        let (term, choice) = choose(&terms, &claim.name, snapshot.provision_zone());
        let requirements: Vec<Requirement> = term
            .iter()
            .map(|(k, v)| {
                let symbols = snapshot.symbols_mut();
                Requirement {
                    key: symbols.intern(k),
                    op: Op::In(Box::new([symbols.intern(v)])),
                }
            })
            .collect();
        let volume = provisioned_with(&claim, requirements, snapshot);
        let record = ImmediateProvision {
            namespace: snapshot.symbols().resolve(claim.namespace).into(),
            claim: claim.name.clone(),
            volume: volume.name.clone(),
            provisioner: provisioner.into(),
            topology: term
                .into_iter()
                .map(|(k, v)| (k.into_boxed_str(), v.into_boxed_str()))
                .collect(),
            choice,
        };
        bind(snapshot, claim, volume);
        snapshot.record_immediate_provision(record);
    }
    count
}

/// The class's provisioner and the requisite topologies for its claims, sorted and
/// deduplicated as the provisioner sorts them (shorter terms first).
fn requisite_terms(snapshot: &Snapshot, class: &str) -> (String, Vec<Term>) {
    let symbols = snapshot.symbols();
    let Some(class) = snapshot.storage_class(class) else {
        return (String::new(), Vec::new());
    };
    let mut terms: Vec<Term> = Vec::new();
    if class.allowed_topologies.is_empty() {
        // The driver's topology keys, from the first CSINode (by name) that reports any.
        let mut csi_nodes: Vec<&str> = snapshot.nodes().iter().map(|n| &*n.node.name).collect();
        csi_nodes.sort_unstable();
        let keys = csi_nodes.iter().find_map(|name| {
            let driver = snapshot
                .csi_node(name)?
                .drivers
                .iter()
                .find(|d| *d.name == *class.provisioner)?;
            (!driver.topology_keys.is_empty()).then(|| driver.topology_keys.clone())
        });
        if let Some(keys) = keys {
            for info in snapshot.nodes() {
                let term: Option<Term> = keys
                    .iter()
                    .map(|k| {
                        let v = info.node.labels.get(*k)?;
                        Some((
                            symbols.resolve(*k).to_string(),
                            symbols.resolve(v).to_string(),
                        ))
                    })
                    .collect();
                terms.extend(term);
            }
        }
    } else {
        for selector_term in &class.allowed_topologies {
            let mut flat: Vec<Term> = vec![Vec::new()];
            for (key, values) in selector_term {
                let key = symbols.resolve(*key);
                flat = flat
                    .iter()
                    .flat_map(|t| {
                        values.iter().map(move |v| {
                            let mut t = t.clone();
                            t.push((key.to_string(), symbols.resolve(*v).to_string()));
                            t
                        })
                    })
                    .collect();
            }
            terms.extend(flat.into_iter().filter(|t| !t.is_empty()));
        }
    }
    for t in &mut terms {
        t.sort();
    }
    terms.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
    terms.dedup();
    (class.provisioner.to_string(), terms)
}

/// The term the volume goes to, and how it was chosen.
fn choose(terms: &[Term], claim: &str, zone: Option<&str>) -> (Term, TopologyChoice) {
    if terms.is_empty() {
        return match zone {
            Some(z) => (
                vec![(ZONE_LABEL.to_string(), z.to_string())],
                TopologyChoice::Chosen,
            ),
            None => (Vec::new(), TopologyChoice::None),
        };
    }
    let (hash, index) = claim_name_hash(claim);
    let first = (hash.wrapping_add(index) as usize) % terms.len();
    let preferred = terms[first..].iter().chain(&terms[..first]);
    if let Some(z) = zone {
        if let Some(t) = preferred.clone().find(|t| t.iter().any(|(_, v)| v == z)) {
            return (t.clone(), TopologyChoice::Chosen);
        }
        return (terms[first].clone(), TopologyChoice::ChosenNotOffered);
    }
    (terms[first].clone(), TopologyChoice::Provisioner)
}

/// The hash and offset the provisioner rotates its topologies by: for a name ending in
/// `-N` (a StatefulSet's claim `CLAIM-SET-N`), the FNV-1 hash of the part between the
/// last two dashes and the ordinal N; otherwise the whole name's hash and 0.
fn claim_name_hash(name: &str) -> (u32, u32) {
    let mut hashed = name;
    let mut index = 0;
    if let Some((prefix, suffix)) = name.rsplit_once('-')
        && !suffix.is_empty()
        && suffix.bytes().all(|b| b.is_ascii_digit())
        && let Ok(n) = suffix.parse::<u32>()
    {
        index = n;
        hashed = prefix.rsplit_once('-').map_or(prefix, |(_, set)| set);
    }
    (fnv1_32(hashed.as_bytes()), index)
}

/// 32-bit FNV-1 (multiply, then xor), as Go's `hash/fnv.New32`.
fn fnv1_32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |h, b| {
        h.wrapping_mul(0x0100_0193) ^ u32::from(*b)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1_matches_go() {
        // hash/fnv New32 of "" and "a" (FNV-1, not FNV-1a).
        assert_eq!(fnv1_32(b""), 0x811c_9dc5);
        assert_eq!(fnv1_32(b"a"), 0x050c_5d7e);
    }

    #[test]
    fn statefulset_claims_go_round_the_zones() {
        let terms: Vec<Term> = ["a", "b", "c"]
            .iter()
            .map(|z| vec![(ZONE_LABEL.to_string(), (*z).to_string())])
            .collect();
        let zones: Vec<String> = (0..3)
            .map(|i| {
                choose(&terms, &format!("data-web-{i}"), None).0[0]
                    .1
                    .clone()
            })
            .collect();
        let mut sorted = zones.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 3, "three ordinals, three zones: {zones:?}");
        // Two claims of one ordinal share the set's hash, so they share a zone.
        assert_eq!(
            choose(&terms, "data-web-1", None).0,
            choose(&terms, "logs-web-1", None).0
        );
    }

    #[test]
    fn a_chosen_zone_wins_when_offered() {
        let terms: Vec<Term> = ["a", "b"]
            .iter()
            .map(|z| vec![(ZONE_LABEL.to_string(), (*z).to_string())])
            .collect();
        let (t, c) = choose(&terms, "x", Some("b"));
        assert_eq!((t[0].1.as_str(), c), ("b", TopologyChoice::Chosen));
        let (_, c) = choose(&terms, "x", Some("z"));
        assert_eq!(c, TopologyChoice::ChosenNotOffered);
        let (t, c) = choose(&[], "x", None);
        assert_eq!((t.len(), c), (0, TopologyChoice::None));
    }
}
