//! Lints: topology spread constraints the API server and kube-scheduler accept, but that
//! will not do what their author meant.
//!
//! Validation proper (the rest of [`validation`](super)) says what would be rejected.
//! Each lint has a stable code, a one-line reason ([`LintCode::why`]) pointing at the
//! Kubernetes docs or a well-known issue, and a field path in the API's notation, so it
//! lines up with validation errors:
//!
//! | code | name | needs nodes |
//! |---|---|---|
//! | TS001 | `selector-misses-own-pod` | no |
//! | TS002 | `topology-key-missing-on-nodes` | yes |
//! | TS003 | `min-domains-exceeds-domains` | yes |
//! | TS004 | `match-label-key-not-a-label` | no |
//! | TS005 | `hard-constraints-conflict` | yes |
//! | TS006 | `rollout-skews-spread` | no |
//! | TS007 | `template-pods-rejected` | no |
//! | TS008 | `empty-selector-differs-by-version` | no |
//! | TS009 | `rollout-cannot-finish` | yes |
//! | TS010 | `node-selector-matches-no-node` | yes |
//! | TS011 | `affinity-selector-misses-own-pods` | no |
//! | TS012 | `node-without-allocatable` | no |
//! | TS013 | `spread-minimum-held-by-unusable-nodes` | yes |
//!
//! [`lint_workload`] runs the lints that read only the object; [`ClusterLinter`] runs
//! the ones that need the cluster's nodes, on a [`Snapshot`](topospread::snapshot::Snapshot),
//! with the engine's own PodTopologySpread plugin. All of it is pure.
//!
//! ```
//! use topospread_k8s::validation::{ApiServerFeatures, LintCode, Workload, lint_workload};
//!
//! let pod = serde_json::json!({
//!     "apiVersion": "v1", "kind": "Pod",
//!     "metadata": {"name": "web-1", "labels": {"app": "web"}},
//!     "spec": {"containers": [], "topologySpreadConstraints": [{
//!         "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
//!         "whenUnsatisfiable": "DoNotSchedule",
//!         "labelSelector": {"matchLabels": {"app": "api"}}}]}
//! });
//! let workload = Workload::from_value(pod).unwrap().unwrap();
//! let lints = lint_workload(&workload, &ApiServerFeatures::default());
//! assert_eq!(lints[0].code, LintCode::SelectorMissesOwnPod);
//! assert_eq!(lints[0].field, "spec.topologySpreadConstraints[0].labelSelector");
//! ```

mod affinity;
mod cluster;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::api::core::v1::TopologySpreadConstraint;
use serde::Serialize;

use super::objects::{ApiServerFeatures, Workload, template_pods_create, validate_workload_create};
use topospread::api::{Labels, Selector, Symbols};
use topospread::validation::FieldPath;

pub use affinity::{InputPods, lint_node, lint_pod_affinity};
pub use cluster::{
    ClusterLinter, FIRST_POD_TEMPLATE_HASH, LintPod, LintPods, first_pod, hard_constraints,
    minimum_held_by_unusable_nodes,
};

/// A lint's identity: its stable code, name and reason.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum LintCode {
    /// TS001: the constraint's selector does not match the pod's own labels.
    SelectorMissesOwnPod,
    /// TS002: no node, or only some nodes, carry the constraint's topology key.
    TopologyKeyMissingOnNodes,
    /// TS003: `minDomains` is larger than the number of domains the nodes offer.
    MinDomainsExceedsDomains,
    /// TS004: a `matchLabelKeys` key the pod (template) does not carry.
    MatchLabelKeyNotALabel,
    /// TS005: the hard constraints each fit some node, but no node fits them together.
    HardConstraintsConflict,
    /// TS006: a Deployment spreads by its own labels without `pod-template-hash`.
    RolloutSkewsSpread,
    /// TS007: the API server accepts the template but rejects the pods created from it.
    TemplatePodsRejected,
    /// TS008: `labelSelector: {}`, which counts every pod or none depending on the release.
    EmptySelectorDiffersByVersion,
    /// TS009: a Deployment's rollout whose surge pod no domain can take while
    /// `maxUnavailable` 0 keeps every old pod.
    RolloutCannotFinish,
    /// TS010: the pod's nodeSelector or required node affinity matches no node.
    NodeSelectorMatchesNoNode,
    /// TS011: a pod (anti-)affinity term whose selector matches none of the workload's
    /// own pods, nor any other pod in the input.
    AffinitySelectorMissesOwnPods,
    /// TS012: a Node without `status.allocatable`.
    NodeWithoutAllocatable,
    /// TS013: a DoNotSchedule constraint whose global minimum is held by a domain whose
    /// nodes the pod can never use, counted under an inclusion policy of `Ignore`.
    MinimumHeldByUnusableNodes,
}

impl LintCode {
    /// Every lint, in code order.
    pub const ALL: [LintCode; 13] = [
        Self::SelectorMissesOwnPod,
        Self::TopologyKeyMissingOnNodes,
        Self::MinDomainsExceedsDomains,
        Self::MatchLabelKeyNotALabel,
        Self::HardConstraintsConflict,
        Self::RolloutSkewsSpread,
        Self::TemplatePodsRejected,
        Self::EmptySelectorDiffersByVersion,
        Self::RolloutCannotFinish,
        Self::NodeSelectorMatchesNoNode,
        Self::AffinitySelectorMissesOwnPods,
        Self::NodeWithoutAllocatable,
        Self::MinimumHeldByUnusableNodes,
    ];

    /// The stable short code (`TS001`).
    pub fn code(self) -> &'static str {
        match self {
            Self::SelectorMissesOwnPod => "TS001",
            Self::TopologyKeyMissingOnNodes => "TS002",
            Self::MinDomainsExceedsDomains => "TS003",
            Self::MatchLabelKeyNotALabel => "TS004",
            Self::HardConstraintsConflict => "TS005",
            Self::RolloutSkewsSpread => "TS006",
            Self::TemplatePodsRejected => "TS007",
            Self::EmptySelectorDiffersByVersion => "TS008",
            Self::RolloutCannotFinish => "TS009",
            Self::NodeSelectorMatchesNoNode => "TS010",
            Self::AffinitySelectorMissesOwnPods => "TS011",
            Self::NodeWithoutAllocatable => "TS012",
            Self::MinimumHeldByUnusableNodes => "TS013",
        }
    }

    /// The stable name (`selector-misses-own-pod`).
    pub fn name(self) -> &'static str {
        match self {
            Self::SelectorMissesOwnPod => "selector-misses-own-pod",
            Self::TopologyKeyMissingOnNodes => "topology-key-missing-on-nodes",
            Self::MinDomainsExceedsDomains => "min-domains-exceeds-domains",
            Self::MatchLabelKeyNotALabel => "match-label-key-not-a-label",
            Self::HardConstraintsConflict => "hard-constraints-conflict",
            Self::RolloutSkewsSpread => "rollout-skews-spread",
            Self::TemplatePodsRejected => "template-pods-rejected",
            Self::EmptySelectorDiffersByVersion => "empty-selector-differs-by-version",
            Self::RolloutCannotFinish => "rollout-cannot-finish",
            Self::NodeSelectorMatchesNoNode => "node-selector-matches-no-node",
            Self::AffinitySelectorMissesOwnPods => "affinity-selector-misses-own-pods",
            Self::NodeWithoutAllocatable => "node-without-allocatable",
            Self::MinimumHeldByUnusableNodes => "spread-minimum-held-by-unusable-nodes",
        }
    }

    /// One line on why this matters, with where to read more.
    pub fn why(self) -> &'static str {
        match self {
            Self::SelectorMissesOwnPod => {
                "a pod its own selector does not match is not counted, so placing it never changes the skew and replicas do not spread against each other (docs: Conventions, https://kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/#conventions)"
            }
            Self::TopologyKeyMissingOnNodes => {
                "nodes without the topologyKey are bypassed: pods never land there under DoNotSchedule and score lowest under ScheduleAnyway (docs: Conventions, https://kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/#conventions)"
            }
            Self::MinDomainsExceedsDomains => {
                "with fewer eligible domains than minDomains the global minimum counts as 0, so each domain takes at most maxSkew matching pods and the rest stay Pending until the cluster grows (KEP-3022, https://kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/#spread-constraint-definition)"
            }
            Self::MatchLabelKeyNotALabel => {
                "matchLabelKeys keys missing from the pod's labels are ignored, so the constraint silently spreads over every pod its labelSelector selects (docs: matchLabelKeys, https://kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/#spread-constraint-definition)"
            }
            Self::HardConstraintsConflict => {
                "DoNotSchedule constraints are ANDed: when no node satisfies all of them the pod stays Pending (docs: Example: multiple topology spread constraints, https://kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/#example-multiple-topologyspreadconstraints)"
            }
            Self::RolloutSkewsSpread => {
                "a rollout counts the old ReplicaSet's pods, which are then deleted, leaving the new pods skewed; matchLabelKeys: [pod-template-hash] spreads each revision on its own (KEP-3243, https://kubernetes.io/blog/2023/04/17/fine-grained-pod-topology-spread-features-beta/)"
            }
            Self::TemplatePodsRejected => {
                "the API server merges matchLabelKeys into the selector of each new pod and then rejects it, so the controller can never create the pods (KEP-3243 selector merge, https://kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/#spread-constraint-definition)"
            }
            Self::EmptySelectorDiffersByVersion => {
                "an empty labelSelector counted no pod from Kubernetes 1.27 (kubernetes PR 116607) until 1.38 (PR 141340), so the constraint never limited placement there, and counts every pod of the namespace from 1.38; the same spec spreads differently across upgrades (https://github.com/kubernetes/kubernetes/issues/141339)"
            }
            Self::RolloutCannotFinish => {
                "with maxUnavailable 0 the deployment controller deletes no old pod until a surge pod is available, and a DoNotSchedule constraint whose domains the old pods fill leaves that pod no node: the rollout hangs with the surge pod Pending (https://github.com/kubernetes/kubernetes/issues/116629)"
            }
            Self::NodeSelectorMatchesNoNode => {
                "NodeAffinity filters out every node whose labels do not satisfy spec.nodeSelector and the required node affinity, so with no such node the pods stay Pending (\"didn't match Pod's node affinity/selector\"; docs: https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/)"
            }
            Self::AffinitySelectorMissesOwnPods => {
                "pod (anti-)affinity counts only the pods its labelSelector selects (in the term's namespaces): a selector that misses the workload's own pods makes a \"one per node\" anti-affinity rule a no-op, and a required affinity to pods that do not exist keeps the pods Pending (docs: https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#inter-pod-affinity-and-anti-affinity)"
            }
            Self::NodeWithoutAllocatable => {
                "the scheduler reads a node's capacity from status.allocatable only: without it the node offers 0 pods, 0 CPU and 0 memory, and NodeResourcesFit rejects every pod there (\"Too many pods\"); a hand-written node or a dump stripped of status loses it (docs: https://kubernetes.io/docs/reference/node/node-status/#capacity)"
            }
            Self::MinimumHeldByUnusableNodes => {
                "PodTopologySpread counts every node of a domain under nodeTaintsPolicy: Ignore (the default) or nodeAffinityPolicy: Ignore, even nodes the pod can never run on; such a domain's count never rises, so it holds the global minimum and every other domain takes at most minimum + maxSkew matching pods: the rest stay Pending (KEP-3094, https://kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/#spread-constraint-definition)"
            }
        }
    }

    /// Whether the lint needs the cluster's nodes.
    pub fn needs_nodes(self) -> bool {
        matches!(
            self,
            Self::TopologyKeyMissingOnNodes
                | Self::MinDomainsExceedsDomains
                | Self::HardConstraintsConflict
                | Self::RolloutCannotFinish
                | Self::NodeSelectorMatchesNoNode
                | Self::MinimumHeldByUnusableNodes
        )
    }

    /// The severity without `--strict`: a warning, except TS007, whose workload can never
    /// run a pod.
    pub fn default_severity(self) -> Severity {
        match self {
            Self::TemplatePodsRejected => Severity::Error,
            _ => Severity::Warning,
        }
    }
}

impl fmt::Display for LintCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// How serious a finding is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Reported; does not fail `validate` unless `--strict`.
    Warning,
    /// Fails `validate`.
    Error,
}

impl Severity {
    /// `warning` or `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

/// One finding of a lint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lint {
    /// Which lint.
    pub code: LintCode,
    /// The field it is about, in the API's path notation.
    pub field: String,
    /// What is wrong with this object, in one line.
    pub message: String,
}

impl Lint {
    fn new(code: LintCode, field: &FieldPath, message: impl Into<String>) -> Self {
        Self {
            code,
            field: field.to_string(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Lint {
    /// `field: message`, like a [`FieldError`](super::FieldError).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// Labels that a workload's controller adds to every pod it creates, so a template does
/// not carry them but its pods do.
pub fn controller_added_labels(workload: &Workload) -> &'static [&'static str] {
    const JOB: &[&str] = &[
        "batch.kubernetes.io/controller-uid",
        "batch.kubernetes.io/job-name",
        "batch.kubernetes.io/job-completion-index",
        "controller-uid",
        "job-name",
    ];
    match workload {
        Workload::Deployment(_) => &["pod-template-hash"],
        Workload::StatefulSet(_) => &[
            "controller-revision-hash",
            "statefulset.kubernetes.io/pod-name",
            "apps.kubernetes.io/pod-index",
        ],
        Workload::DaemonSet(_) => &["controller-revision-hash", "pod-template-generation"],
        Workload::Job(_) | Workload::CronJob(_) => JOB,
        Workload::Pod(_)
        | Workload::PodTemplate(_)
        | Workload::ReplicaSet(_)
        | Workload::ReplicationController(_) => &[],
    }
}

/// The lints that read only the object: TS001, TS004, TS006, TS007.
pub fn lint_workload(workload: &Workload, features: &ApiServerFeatures) -> Vec<Lint> {
    let mut lints = Vec::new();
    let Some(pod_spec) = workload.pod_spec() else {
        return lints;
    };
    let Some(constraints) = pod_spec.spec.topology_spread_constraints.as_deref() else {
        return lints;
    };
    let list = pod_spec.path.child("topologySpreadConstraints");
    let empty = BTreeMap::new();
    let labels_map = pod_spec.labels.unwrap_or(&empty);
    let mut symbols = Symbols::default();
    let labels = Labels::from_map(Some(labels_map), &mut symbols);
    let added = controller_added_labels(workload);
    let is_pod = matches!(workload, Workload::Pod(_));
    for (i, c) in constraints.iter().enumerate() {
        let path = list.index(i);
        let self_match = own_pod_match(c, &labels, added, &mut symbols);
        if let Some(lint) = selector_misses_own_pod(&path, &self_match, is_pod, labels_map) {
            lints.push(lint);
        }
        if c.label_selector.is_some() && features.match_label_keys_in_pod_topology_spread {
            for (j, key) in c.match_label_keys.iter().flatten().enumerate() {
                if !labels_map.contains_key(key) && !added.contains(&key.as_str()) {
                    let whose = if is_pod { "pod" } else { "pod template" };
                    lints.push(Lint::new(
                        LintCode::MatchLabelKeyNotALabel,
                        &path.child("matchLabelKeys").index(j),
                        format!(
                            "{key:?} is not a label of the {whose}, so it is ignored and the constraint counts every pod the labelSelector selects"
                        ),
                    ));
                }
            }
        }
        if let Some(lint) = empty_selector(c, &path, features, labels_map, added) {
            lints.push(lint);
        }
        if matches!(workload, Workload::Deployment(_))
            && features.match_label_keys_in_pod_topology_spread
            && matches!(self_match, SelfMatch::Matches)
            && !c
                .match_label_keys
                .iter()
                .flatten()
                .any(|k| k == "pod-template-hash")
        {
            lints.push(Lint::new(
                LintCode::RolloutSkewsSpread,
                &path.child("matchLabelKeys"),
                "the Deployment spreads by its own labels, which every revision shares: during a rollout the new pods are spread against old pods that are about to be deleted; add matchLabelKeys: [pod-template-hash]",
            ));
        }
    }
    let own: Vec<String> = validate_workload_create(workload, features)
        .iter()
        .map(ToString::to_string)
        .collect();
    for e in template_pods_create(workload, features) {
        if own.contains(&e.to_string()) {
            continue;
        }
        lints.push(Lint {
            code: LintCode::TemplatePodsRejected,
            field: e.field.clone(),
            message: format!(
                "the template is accepted, but every pod created from it is rejected: {}",
                e.body()
            ),
        });
    }
    lints
}

/// TS008: a `labelSelector: {}` that matchLabelKeys leaves without requirements.
fn empty_selector(
    c: &TopologySpreadConstraint,
    path: &FieldPath,
    features: &ApiServerFeatures,
    labels: &BTreeMap<String, String>,
    controller_added: &[&str],
) -> Option<Lint> {
    let selector = c.label_selector.as_ref()?;
    let empty = selector
        .match_labels
        .as_ref()
        .is_none_or(BTreeMap::is_empty)
        && selector
            .match_expressions
            .as_ref()
            .is_none_or(Vec::is_empty);
    let merged = features.match_label_keys_in_pod_topology_spread
        && c.match_label_keys
            .iter()
            .flatten()
            .any(|k| labels.contains_key(k) || controller_added.contains(&k.as_str()));
    (empty && !merged).then(|| {
        Lint::new(
            LintCode::EmptySelectorDiffersByVersion,
            &path.child("labelSelector"),
            "labelSelector: {} counts every pod of the namespace in Kubernetes 1.38 and later, but no pod in 1.27 to 1.37 (where the constraint never limits placement); select the pods to spread explicitly",
        )
    })
}

/// How a constraint's selector relates to the pod's own labels.
enum SelfMatch {
    /// No labelSelector: it selects no pod at all.
    NoSelector,
    /// The selector does not compile (validation reports it), or names a label the
    /// controller adds and the template cannot show: nothing to say.
    Unknown,
    /// The selector selects the pod.
    Matches,
    /// The selector does not select the pod; the selector as kubectl prints it.
    Misses(String),
}

fn own_pod_match(
    c: &TopologySpreadConstraint,
    labels: &Labels,
    controller_added: &[&str],
    symbols: &mut Symbols,
) -> SelfMatch {
    let Some(selector) = c.label_selector.as_ref() else {
        return SelfMatch::NoSelector;
    };
    let Ok(compiled) = Selector::from_label_selector(Some(selector), symbols) else {
        return SelfMatch::Unknown;
    };
    let names_added = compiled.requirements().is_some_and(|reqs| {
        reqs.iter()
            .any(|r| controller_added.contains(&symbols.resolve(r.key)))
    });
    if names_added {
        return SelfMatch::Unknown;
    }
    if compiled.matches(labels, symbols) {
        SelfMatch::Matches
    } else {
        SelfMatch::Misses(compiled.display(symbols))
    }
}

fn selector_misses_own_pod(
    path: &FieldPath,
    self_match: &SelfMatch,
    is_pod: bool,
    labels: &BTreeMap<String, String>,
) -> Option<Lint> {
    let whose = if is_pod { "pod's" } else { "pod template's" };
    let message = match self_match {
        SelfMatch::Matches | SelfMatch::Unknown => return None,
        SelfMatch::NoSelector => "no labelSelector: the constraint selects no pods, not even this one, so every domain counts 0 and it never spreads anything".to_string(),
        SelfMatch::Misses(selector) => format!(
            "{selector} does not match the {whose} own labels {}, so its pods do not count themselves and do not spread against each other",
            render_labels(labels)
        ),
    };
    let field = match self_match {
        SelfMatch::NoSelector => path.clone(),
        _ => path.child("labelSelector"),
    };
    Some(Lint::new(LintCode::SelectorMissesOwnPod, &field, message))
}

/// `{a=1,b=2}`, or `{}`.
fn render_labels(labels: &BTreeMap<String, String>) -> String {
    let parts: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{{{}}}", parts.join(","))
}
