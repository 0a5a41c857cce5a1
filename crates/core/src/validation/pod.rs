//! `pod.spec.topologySpreadConstraints` validation (upstream:
//! `pkg/apis/core/validation/validation.go`, `validateTopologySpreadConstraints`).
//!
//! Rules, order, paths and origins follow `tests/conformance/validation/RULES.md` §1.

use std::collections::{BTreeSet, HashMap, HashSet};

use k8s_openapi::api::core::v1::TopologySpreadConstraint;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde::{Deserialize, Serialize};

use super::field::{FieldError, FieldPath};
use super::labels::{LabelSelectorValidationOptions, validate_label_name, validate_label_selector};

/// `whenUnsatisfiable: DoNotSchedule`.
pub(crate) const DO_NOT_SCHEDULE: &str = "DoNotSchedule";
/// `whenUnsatisfiable: ScheduleAnyway`.
pub(crate) const SCHEDULE_ANYWAY: &str = "ScheduleAnyway";
/// Supported `whenUnsatisfiable` values, sorted as upstream lists them.
const SUPPORTED_ACTIONS: [&str; 2] = [DO_NOT_SCHEDULE, SCHEDULE_ANYWAY];
/// Supported `nodeAffinityPolicy` / `nodeTaintsPolicy` values, sorted.
const SUPPORTED_NODE_INCLUSION_POLICIES: [&str; 2] = ["Honor", "Ignore"];

const NOT_POSITIVE: &str = "must be greater than zero";
const IN_BOTH_KEYS_AND_SELECTOR: &str = "exists in both matchLabelKeys and labelSelector";
const KEYS_WITHOUT_SELECTOR: &str = "must not be specified when labelSelector is not set";

/// Origin of "must be greater than zero" errors.
pub(crate) const ORIGIN_MINIMUM: &str = "minimum";
/// Origin of the minDomains-needs-DoNotSchedule error.
pub(crate) const ORIGIN_DEPENDS_ON: &str = "dependsOn";
/// Origin of "exists in both matchLabelKeys and labelSelector" errors.
pub(crate) const ORIGIN_DUPLICATED_LABEL_KEYS: &str = "duplicatedLabelKeys";

/// The subset of upstream's `PodValidationOptions` that topology spread validation reads.
///
/// `Default` is all `false`, Go's zero value (what upstream's unit test passes when a case
/// sets none). The API server's options on create are [`PodValidationOptions::create`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodValidationOptions {
    /// Gate `MatchLabelKeysInPodTopologySpread` is on.
    #[serde(default)]
    pub allow_match_label_keys_in_pod_topology_spread: bool,
    /// Gate `MatchLabelKeysInPodTopologySpreadSelectorMerge` is on.
    #[serde(default)]
    pub allow_match_label_keys_in_pod_topology_spread_selector_merge: bool,
    /// Update only: the old pod fails the new matchLabelKeys check (RULES.md §1.2).
    #[serde(default)]
    pub old_pod_violates_match_label_keys_validation: bool,
    /// Update only: the old pod fails the legacy matchLabelKeys check (RULES.md §1.1).
    #[serde(default)]
    pub old_pod_violates_legacy_match_label_keys_validation: bool,
    /// Update only: some old constraint has an invalid labelSelector (ratcheting).
    #[serde(default)]
    pub allow_invalid_topology_spread_constraint_label_selector: bool,
}

impl PodValidationOptions {
    /// The options the API server uses on create (`GetValidationOptionsFromPodSpecAndMeta`
    /// with no old pod): the two gates as given, everything else `false`.
    pub fn create(match_label_keys_gate: bool, selector_merge_gate: bool) -> Self {
        Self {
            allow_match_label_keys_in_pod_topology_spread: match_label_keys_gate,
            allow_match_label_keys_in_pod_topology_spread_selector_merge: selector_merge_gate,
            ..Self::default()
        }
    }

    /// The options the API server uses on update (`GetValidationOptionsFromPodSpecAndMeta`
    /// with an old pod): the gates as given, and the ratcheting flags read from the old
    /// pod's constraints, so an update keeps what the server once accepted.
    pub fn update(
        match_label_keys_gate: bool,
        selector_merge_gate: bool,
        old: &[TopologySpreadConstraint],
    ) -> Self {
        let root = FieldPath::root();
        let keys = |c: &TopologySpreadConstraint| c.match_label_keys.clone().unwrap_or_default();
        Self {
            allow_match_label_keys_in_pod_topology_spread: match_label_keys_gate,
            allow_match_label_keys_in_pod_topology_spread_selector_merge: selector_merge_gate,
            old_pod_violates_match_label_keys_validation: old.iter().any(|c| {
                !validate_match_label_keys_merged(&root, &keys(c), c.label_selector.as_ref())
                    .is_empty()
            }),
            old_pod_violates_legacy_match_label_keys_validation: old.iter().any(|c| {
                !validate_match_label_keys_legacy(&root, &keys(c), c.label_selector.as_ref())
                    .is_empty()
            }),
            allow_invalid_topology_spread_constraint_label_selector: old.iter().any(|c| {
                !validate_label_selector(
                    c.label_selector.as_ref(),
                    LabelSelectorValidationOptions::default(),
                    &root,
                )
                .is_empty()
            }),
        }
    }

    /// Whether check 8 uses the new `ValidateMatchLabelKeysAndMismatchLabelKeys` rather
    /// than the legacy `ValidateMatchLabelKeysInTopologySpread` (RULES.md §1, table).
    pub(crate) fn uses_merged_match_label_keys_check(&self) -> bool {
        if !self.allow_match_label_keys_in_pod_topology_spread {
            return false;
        }
        if self.allow_match_label_keys_in_pod_topology_spread_selector_merge {
            !self.old_pod_violates_match_label_keys_validation
        } else {
            self.old_pod_violates_legacy_match_label_keys_validation
        }
    }
}

/// Validates a pod's `topologySpreadConstraints` list; `path` is the list's path
/// (`spec.topologySpreadConstraints`). Every check of every constraint runs; errors come
/// in upstream's order.
pub fn validate_topology_spread_constraints(
    constraints: &[TopologySpreadConstraint],
    path: &FieldPath,
    opts: &PodValidationOptions,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, c) in constraints.iter().enumerate() {
        let p = path.index(i);
        if c.max_skew <= 0 {
            errs.push(
                FieldError::invalid(&p.child("maxSkew"), i64::from(c.max_skew), NOT_POSITIVE)
                    .with_origin(ORIGIN_MINIMUM),
            );
        }
        if c.topology_key.is_empty() {
            errs.push(FieldError::required(
                &p.child("topologyKey"),
                "can not be empty",
            ));
        }
        let action = c.when_unsatisfiable.as_str();
        if !SUPPORTED_ACTIONS.contains(&action) {
            errs.push(FieldError::not_supported(
                &p.child("whenUnsatisfiable"),
                action,
                &SUPPORTED_ACTIONS,
            ));
        }
        let repeated = constraints[i + 1..].iter().any(|later| {
            later.topology_key == c.topology_key && later.when_unsatisfiable == c.when_unsatisfiable
        });
        if repeated {
            errs.push(FieldError::duplicate(
                &p.child("{topologyKey, whenUnsatisfiable}"),
                format!("{{{}, {}}}", c.topology_key, c.when_unsatisfiable),
            ));
        }
        if let Some(min_domains) = c.min_domains {
            let md = p.child("minDomains");
            if min_domains <= 0 {
                errs.push(
                    FieldError::invalid(&md, i64::from(min_domains), NOT_POSITIVE)
                        .with_origin(ORIGIN_MINIMUM),
                );
            }
            if action != DO_NOT_SCHEDULE {
                errs.push(
                    FieldError::invalid(
                        &md,
                        min_domains,
                        format!(
                            "can only use minDomains if whenUnsatisfiable={DO_NOT_SCHEDULE}, not {action}"
                        ),
                    )
                    .with_origin(ORIGIN_DEPENDS_ON),
                );
            }
        }
        for (policy, name) in [
            (&c.node_affinity_policy, "nodeAffinityPolicy"),
            (&c.node_taints_policy, "nodeTaintsPolicy"),
        ] {
            if let Some(policy) = policy.as_deref()
                && !SUPPORTED_NODE_INCLUSION_POLICIES.contains(&policy)
            {
                errs.push(FieldError::not_supported(
                    &p.child(name),
                    policy,
                    &SUPPORTED_NODE_INCLUSION_POLICIES,
                ));
            }
        }
        let keys = c.match_label_keys.as_deref().unwrap_or_default();
        let selector = c.label_selector.as_ref();
        if opts.uses_merged_match_label_keys_check() {
            errs.extend(validate_match_label_keys_merged(&p, keys, selector));
        } else {
            errs.extend(validate_match_label_keys_legacy(
                &p.child("matchLabelKeys"),
                keys,
                selector,
            ));
        }
        if !opts.allow_invalid_topology_spread_constraint_label_selector {
            errs.extend(validate_label_selector(
                selector,
                LabelSelectorValidationOptions::default(),
                &p.child("labelSelector"),
            ));
        }
    }
    errs
}

/// The legacy matchLabelKeys check, `path` = `P.matchLabelKeys` (upstream:
/// `ValidateMatchLabelKeysInTopologySpread`; RULES.md §1.1). A key may not appear in the
/// selector at all.
pub fn validate_match_label_keys_legacy(
    path: &FieldPath,
    keys: &[String],
    selector: Option<&LabelSelector>,
) -> Vec<FieldError> {
    if keys.is_empty() {
        return Vec::new();
    }
    let mut errs = Vec::new();
    let mut selector_keys: HashSet<&str> = HashSet::new();
    match selector {
        Some(selector) => {
            selector_keys.extend(
                selector
                    .match_labels
                    .iter()
                    .flatten()
                    .map(|(k, _)| k.as_str()),
            );
            selector_keys.extend(
                selector
                    .match_expressions
                    .iter()
                    .flatten()
                    .map(|r| r.key.as_str()),
            );
        }
        // Upstream goes on with the per-key checks after this error.
        None => errs.push(FieldError::forbidden(path, KEYS_WITHOUT_SELECTOR)),
    }
    for (j, key) in keys.iter().enumerate() {
        let kp = path.index(j);
        errs.extend(validate_label_name(key, &kp));
        if selector_keys.contains(key.as_str()) {
            errs.push(
                FieldError::invalid(&kp, key, IN_BOTH_KEYS_AND_SELECTOR)
                    .with_origin(ORIGIN_DUPLICATED_LABEL_KEYS),
            );
        }
    }
    errs
}

/// The matchLabelKeys check for selectors that already hold the merged `key In (value)`
/// requirements, `path` = the constraint path `P` (upstream:
/// `ValidateMatchLabelKeysAndMismatchLabelKeys` with no mismatchLabelKeys; RULES.md §1.2).
///
/// A key may appear in one `matchExpressions` entry (the merged one) but not in a second
/// entry nor in an entry plus `matchLabels`. Those errors sit at `P[index]` — upstream
/// indexes the constraint path, not `P.matchLabelKeys` (its TODO #129900).
pub fn validate_match_label_keys_merged(
    path: &FieldPath,
    keys: &[String],
    selector: Option<&LabelSelector>,
) -> Vec<FieldError> {
    if keys.is_empty() {
        return Vec::new();
    }
    let keys_path = path.child("matchLabelKeys");
    let Some(selector) = selector else {
        return vec![FieldError::forbidden(&keys_path, KEYS_WITHOUT_SELECTOR)];
    };
    let mut errs = Vec::new();
    for (j, key) in keys.iter().enumerate() {
        errs.extend(validate_label_name(key, &keys_path.index(j)));
    }
    // key -> its last index in matchLabelKeys
    let key_index: HashMap<&str, usize> = keys
        .iter()
        .enumerate()
        .map(|(j, k)| (k.as_str(), j))
        .collect();
    let mut seen: BTreeSet<&str> = selector
        .match_labels
        .iter()
        .flatten()
        .map(|(k, _)| k.as_str())
        .collect();
    for requirement in selector.match_expressions.iter().flatten() {
        let key = requirement.key.as_str();
        if let Some(&j) = key_index.get(key)
            && seen.contains(key)
        {
            errs.push(
                FieldError::invalid(&path.index(j), key, IN_BOTH_KEYS_AND_SELECTOR)
                    .with_origin(ORIGIN_DUPLICATED_LABEL_KEYS),
            );
        }
        seen.insert(key);
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validation::field::ErrorType;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;
    use std::collections::BTreeMap;

    fn tsc(skew: i32, key: &str, action: &str) -> TopologySpreadConstraint {
        TopologySpreadConstraint {
            max_skew: skew,
            topology_key: key.to_string(),
            when_unsatisfiable: action.to_string(),
            ..Default::default()
        }
    }

    fn root() -> FieldPath {
        FieldPath::new("spec").child("topologySpreadConstraints")
    }

    fn summary(errs: &[FieldError]) -> Vec<(ErrorType, String)> {
        errs.iter().map(|e| (e.kind, e.field.clone())).collect()
    }

    #[test]
    fn option_table() {
        let t = true;
        let f = false;
        let o = |a, m, n, l| PodValidationOptions {
            allow_match_label_keys_in_pod_topology_spread: a,
            allow_match_label_keys_in_pod_topology_spread_selector_merge: m,
            old_pod_violates_match_label_keys_validation: n,
            old_pod_violates_legacy_match_label_keys_validation: l,
            allow_invalid_topology_spread_constraint_label_selector: false,
        };
        assert!(!o(f, t, f, t).uses_merged_match_label_keys_check());
        assert!(o(t, t, f, f).uses_merged_match_label_keys_check());
        assert!(!o(t, t, t, t).uses_merged_match_label_keys_check());
        assert!(o(t, f, f, t).uses_merged_match_label_keys_check());
        assert!(!o(t, f, t, f).uses_merged_match_label_keys_check());
        assert!(PodValidationOptions::create(true, true).uses_merged_match_label_keys_check());
    }

    #[test]
    fn everything_wrong_in_one_constraint() {
        let mut c = tsc(0, "", "");
        c.min_domains = Some(0);
        c.node_affinity_policy = Some("x".into());
        c.node_taints_policy = Some("y".into());
        let errs = validate_topology_spread_constraints(&[c], &root(), &Default::default());
        let p = "spec.topologySpreadConstraints[0]";
        assert_eq!(
            summary(&errs),
            vec![
                (ErrorType::Invalid, format!("{p}.maxSkew")),
                (ErrorType::Required, format!("{p}.topologyKey")),
                (ErrorType::NotSupported, format!("{p}.whenUnsatisfiable")),
                (ErrorType::Invalid, format!("{p}.minDomains")),
                (ErrorType::Invalid, format!("{p}.minDomains")),
                (ErrorType::NotSupported, format!("{p}.nodeAffinityPolicy")),
                (ErrorType::NotSupported, format!("{p}.nodeTaintsPolicy")),
            ]
        );
        assert_eq!(
            errs[4].to_string(),
            "spec.topologySpreadConstraints[0].minDomains: Invalid value: 0: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not "
        );
        assert_eq!(
            errs[5].to_string(),
            "spec.topologySpreadConstraints[0].nodeAffinityPolicy: Unsupported value: \"x\": supported values: \"Honor\", \"Ignore\""
        );
    }

    #[test]
    fn duplicates_reported_on_earlier_indexes() {
        let c = tsc(1, "zone", DO_NOT_SCHEDULE);
        let errs = validate_topology_spread_constraints(
            &[c.clone(), c.clone(), c, tsc(1, "zone", SCHEDULE_ANYWAY)],
            &root(),
            &Default::default(),
        );
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}",
                "spec.topologySpreadConstraints[1].{topologyKey, whenUnsatisfiable}",
            ]
        );
        assert_eq!(
            errs[0].bad_value.as_deref(),
            Some("\"{zone, DoNotSchedule}\"")
        );
    }

    #[test]
    fn match_label_keys_without_selector() {
        let mut c = tsc(1, "zone", DO_NOT_SCHEDULE);
        c.match_label_keys = Some(vec!["app".into(), "/x".into()]);
        let legacy =
            validate_topology_spread_constraints(&[c.clone()], &root(), &Default::default());
        assert_eq!(
            summary(&legacy),
            vec![
                (
                    ErrorType::Forbidden,
                    "spec.topologySpreadConstraints[0].matchLabelKeys".into()
                ),
                (
                    ErrorType::Invalid,
                    "spec.topologySpreadConstraints[0].matchLabelKeys[1]".into()
                ),
            ]
        );
        let merged = validate_topology_spread_constraints(
            &[c],
            &root(),
            &PodValidationOptions::create(true, true),
        );
        assert_eq!(
            summary(&merged),
            vec![(
                ErrorType::Forbidden,
                "spec.topologySpreadConstraints[0].matchLabelKeys".into()
            )]
        );
    }

    #[test]
    fn merged_check_allows_one_expression_per_key() {
        let sel = |labels: &[(&str, &str)], exprs: &[&str]| LabelSelector {
            match_labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect::<BTreeMap<_, _>>(),
            ),
            match_expressions: Some(
                exprs
                    .iter()
                    .map(|k| LabelSelectorRequirement {
                        key: k.to_string(),
                        operator: "In".into(),
                        values: Some(vec!["v".into()]),
                    })
                    .collect(),
            ),
        };
        let p = FieldPath::new("P");
        let keys = vec!["a".to_string(), "b".to_string()];
        assert!(
            validate_match_label_keys_merged(&p, &keys, Some(&sel(&[], &["a", "b"]))).is_empty()
        );
        assert!(
            validate_match_label_keys_merged(&p, &keys, Some(&sel(&[("a", "v")], &[]))).is_empty()
        );
        let e = validate_match_label_keys_merged(&p, &keys, Some(&sel(&[("b", "v")], &["b"])));
        assert_eq!(summary(&e), vec![(ErrorType::Invalid, "P[1]".into())]);
        let e = validate_match_label_keys_merged(&p, &keys, Some(&sel(&[], &["a", "a", "a"])));
        assert_eq!(e.len(), 2);
        // the legacy check rejects any overlap, at P.matchLabelKeys[j]
        let e = validate_match_label_keys_legacy(
            &p.child("matchLabelKeys"),
            &keys,
            Some(&sel(&[("a", "v")], &[])),
        );
        assert_eq!(
            summary(&e),
            vec![(ErrorType::Invalid, "P.matchLabelKeys[0]".into())]
        );
    }

    /// An API server rejection seen in the wild (a StatefulSet's pod create, recorded in
    /// an operator-testing report), reproduced byte for byte.
    #[test]
    fn reproduces_a_real_api_server_message() {
        let mut c = tsc(1, "topology.kubernetes.io/zone", "ACTOKEY");
        c.min_domains = Some(1);
        c.node_affinity_policy = Some("ACTOKEY".into());
        c.label_selector = Some(LabelSelector {
            match_labels: None,
            match_expressions: Some(
                ["a", "b", "c"]
                    .iter()
                    .map(|k| LabelSelectorRequirement {
                        key: k.to_string(),
                        operator: "ACTOKEY".into(),
                        values: Some(vec!["v".into()]),
                    })
                    .collect(),
            ),
        });
        let errs = validate_topology_spread_constraints(
            &[c],
            &root(),
            &PodValidationOptions::create(true, true),
        );
        assert_eq!(
            crate::validation::aggregate_message(&errs).as_deref(),
            Some(concat!(
                "[spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: \"ACTOKEY\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\", ",
                "spec.topologySpreadConstraints[0].minDomains: Invalid value: 1: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ACTOKEY, ",
                "spec.topologySpreadConstraints[0].nodeAffinityPolicy: Unsupported value: \"ACTOKEY\": supported values: \"Honor\", \"Ignore\", ",
                "spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].operator: Invalid value: \"ACTOKEY\": not a valid selector operator, ",
                "spec.topologySpreadConstraints[0].labelSelector.matchExpressions[1].operator: Invalid value: \"ACTOKEY\": not a valid selector operator, ",
                "spec.topologySpreadConstraints[0].labelSelector.matchExpressions[2].operator: Invalid value: \"ACTOKEY\": not a valid selector operator]"
            ))
        );
    }
}
