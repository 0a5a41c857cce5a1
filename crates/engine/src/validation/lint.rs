//! Design notes for `topospread validate` lint checks (not implemented yet).
//!
//! Validation proper (the rest of this module's parent) says what the API server and
//! kube-scheduler would reject. Lints say what they would accept but what will not do what
//! the author meant. Most need the cluster: they run on the lead's `Snapshot` (nodes with
//! labels and taints, existing pods, the scheduler's PodTopologySpreadArgs), so they wait
//! for it. Planned checks, each a `Lint { code, severity, field, message }` with the
//! field path in [`FieldPath`](super::FieldPath) form so output lines up with API errors:
//!
//! Without a cluster:
//! - `template-pods-rejected` (error): a workload template the API server accepts but whose
//!   pods it rejects on create, because the create-time merge of `matchLabelKeys` collides
//!   with `matchLabels` ([`template_pods_create`](super::template_pods_create)).
//! - `selector-misses-own-pod` (warning): the constraint's selector (after the merge) does
//!   not match the pod's own labels, so the pod does not count itself and replicas of the
//!   same workload do not spread against each other.
//! - `nil-selector` (warning): no labelSelector: counts are always 0 and the constraint can
//!   never be violated.
//! - `match-label-key-not-a-label` (info): a `matchLabelKeys` key the pod template does not
//!   carry is silently ignored.
//! - `min-domains-without-effect` (info): `minDomains: 1` (the nil default).
//! - `pod-template-hash-key` (info): `matchLabelKeys: [pod-template-hash]` on a non-Deployment.
//!
//! With a cluster snapshot:
//! - `unknown-topology-key` (error for DoNotSchedule): no node carries the topologyKey, so
//!   every node is UnschedulableAndUnresolvable ("node(s) didn't match pod topology spread
//!   constraints (missing required label)").
//! - `partial-topology-key` (warning): some eligible nodes lack the key and are filtered out.
//! - `min-domains-exceeds-domains` (warning): fewer eligible domains than `minDomains`, so the
//!   global minimum is treated as 0 and `maxSkew` pods per domain is the ceiling.
//! - `node-inclusion-policy` (info): which nodes `nodeAffinityPolicy` / `nodeTaintsPolicy`
//!   leave in or out of the counts, and how many.
//! - `system-defaults-apply` (info): the pod has no constraints but the scheduler's
//!   `defaultingType: System` gives it the built-in soft ones (hostname 3, zone 5) because a
//!   Service/ReplicaSet/StatefulSet/ReplicationController selects it.
//! - `unsatisfiable-now` (warning): with the current placement, no node passes Filter.
