//! `PodTopologySpreadArgs` validation (upstream:
//! `pkg/scheduler/apis/config/validation/validation_pluginargs.go`,
//! `ValidatePodTopologySpreadArgs`; RULES.md §4.2).
//!
//! It looks like the pod API's checks but differs on purpose: `topologyKey` must be a
//! valid label key, an empty `whenUnsatisfiable` is Required (not NotSupported), a
//! duplicate is reported on the LATER index at `defaultConstraints[i]`, a selector is
//! forbidden, and minDomains / node policies / matchLabelKeys are not checked.

use super::field::{FieldError, FieldPath, dedup_by_message};
use super::labels::validate_label_name;
use super::pod::{DO_NOT_SCHEDULE, SCHEDULE_ANYWAY};
use crate::config::PodTopologySpreadArgs;

const SUPPORTED_DEFAULTING_TYPES: [&str; 2] = ["System", "List"];
const SUPPORTED_ACTIONS: [&str; 2] = [DO_NOT_SCHEDULE, SCHEDULE_ANYWAY];

/// Validates the plugin's args; `path` is where the args sit (the root path for a bare
/// args object, the profile's `pluginConfig[i].args` inside a KubeSchedulerConfiguration).
///
/// The args are validated after v1 defaulting, as kube-scheduler does: an absent or empty
/// `defaultingType` counts as `System`. Like upstream's `ToAggregate`, an error whose
/// message repeats an earlier one is dropped. Empty means valid.
pub fn validate_pod_topology_spread_args(
    args: &PodTopologySpreadArgs,
    path: &FieldPath,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let defaulting_type = match args.defaulting_type.as_deref() {
        None | Some("") => "System",
        Some(t) => t,
    };
    let dt_path = path.child("defaultingType");
    if !SUPPORTED_DEFAULTING_TYPES.contains(&defaulting_type) {
        errs.push(FieldError::not_supported(
            &dt_path,
            defaulting_type,
            &SUPPORTED_DEFAULTING_TYPES,
        ));
    } else if defaulting_type == "System" && !args.default_constraints.is_empty() {
        errs.push(FieldError::invalid(
            &dt_path,
            defaulting_type,
            "when .defaultConstraints are not empty",
        ));
    }

    let list_path = path.child("defaultConstraints");
    for (i, c) in args.default_constraints.iter().enumerate() {
        let p = list_path.index(i);
        if c.max_skew <= 0 {
            errs.push(FieldError::invalid(
                &p.child("maxSkew"),
                c.max_skew,
                "not in valid range (0, inf)",
            ));
        }
        let key_path = p.child("topologyKey");
        if c.topology_key.is_empty() {
            errs.push(FieldError::required(&key_path, "can not be empty"));
        } else {
            errs.extend(validate_label_name(&c.topology_key, &key_path));
        }
        let action = c.when_unsatisfiable.as_str();
        let action_path = p.child("whenUnsatisfiable");
        if action.is_empty() {
            errs.push(FieldError::required(&action_path, "can not be empty"));
        } else if !SUPPORTED_ACTIONS.contains(&action) {
            errs.push(FieldError::not_supported(
                &action_path,
                action,
                &SUPPORTED_ACTIONS,
            ));
        }
        if c.label_selector.is_some() {
            errs.push(FieldError::forbidden(
                &p.child("labelSelector"),
                "constraint must not define a selector, as they deduced for each pod",
            ));
        }
        let repeats_earlier = args.default_constraints[..i].iter().any(|earlier| {
            earlier.topology_key == c.topology_key
                && earlier.when_unsatisfiable == c.when_unsatisfiable
        });
        if repeats_earlier {
            errs.push(FieldError::duplicate(
                &p,
                format!("{{{}, {}}}", c.topology_key, c.when_unsatisfiable),
            ));
        }
    }
    dedup_by_message(&errs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validation::field::ErrorType;
    use k8s_openapi::api::core::v1::TopologySpreadConstraint;

    fn tsc(skew: i32, key: &str, action: &str) -> TopologySpreadConstraint {
        TopologySpreadConstraint {
            max_skew: skew,
            topology_key: key.to_string(),
            when_unsatisfiable: action.to_string(),
            ..Default::default()
        }
    }

    fn args(dt: Option<&str>, cs: Vec<TopologySpreadConstraint>) -> PodTopologySpreadArgs {
        PodTopologySpreadArgs {
            defaulting_type: dt.map(str::to_string),
            default_constraints: cs,
            ..Default::default()
        }
    }

    #[test]
    fn system_defaults_are_valid() {
        assert!(
            validate_pod_topology_spread_args(&args(None, vec![]), &FieldPath::root()).is_empty()
        );
        assert!(
            validate_pod_topology_spread_args(&args(Some("List"), vec![]), &FieldPath::root())
                .is_empty()
        );
    }

    #[test]
    fn empty_defaulting_type_is_system() {
        let e = validate_pod_topology_spread_args(
            &args(Some(""), vec![tsc(1, "zone", DO_NOT_SCHEDULE)]),
            &FieldPath::root(),
        );
        assert_eq!(
            e.iter().map(ToString::to_string).collect::<Vec<_>>(),
            ["defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty"]
        );
    }

    #[test]
    fn duplicate_on_later_index_and_key_format() {
        let e = validate_pod_topology_spread_args(
            &args(
                Some("List"),
                vec![
                    tsc(1, "zone", DO_NOT_SCHEDULE),
                    tsc(2, "zone", DO_NOT_SCHEDULE),
                    tsc(1, "a b", SCHEDULE_ANYWAY),
                ],
            ),
            &FieldPath::new("profiles[0].pluginConfig[0].args"),
        );
        let got: Vec<(ErrorType, &str)> = e.iter().map(|e| (e.kind, e.field.as_str())).collect();
        assert_eq!(
            got,
            [
                (
                    ErrorType::Duplicate,
                    "profiles[0].pluginConfig[0].args.defaultConstraints[1]"
                ),
                (
                    ErrorType::Invalid,
                    "profiles[0].pluginConfig[0].args.defaultConstraints[2].topologyKey"
                ),
            ]
        );
    }

    /// The messages upstream's TestValidatePodTopologySpreadArgs compares verbatim.
    #[test]
    fn messages_match_upstream_test() {
        let msg = |a: PodTopologySpreadArgs| {
            crate::validation::aggregate_message(&validate_pod_topology_spread_args(
                &a,
                &FieldPath::root(),
            ))
        };
        assert_eq!(
            msg(args(
                Some("List"),
                vec![
                    tsc(1, "node", DO_NOT_SCHEDULE),
                    tsc(2, "node", DO_NOT_SCHEDULE)
                ]
            ))
            .as_deref(),
            Some("defaultConstraints[1]: Duplicate value: \"{node, DoNotSchedule}\"")
        );
        assert_eq!(
            msg(args(Some("List"), vec![tsc(1, "node", "unknown action")])).as_deref(),
            Some(
                "defaultConstraints[0].whenUnsatisfiable: Unsupported value: \"unknown action\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\""
            )
        );
        assert_eq!(
            msg(args(Some("List"), vec![tsc(-1, "node", DO_NOT_SCHEDULE)])).as_deref(),
            Some("defaultConstraints[0].maxSkew: Invalid value: -1: not in valid range (0, inf)")
        );
        let mut with_selector = tsc(1, "key", DO_NOT_SCHEDULE);
        with_selector.label_selector = Some(Default::default());
        assert_eq!(
            msg(args(Some("List"), vec![with_selector])).as_deref(),
            Some(
                "defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod"
            )
        );
        assert_eq!(
            msg(args(Some("List"), vec![tsc(1, "", "")])).as_deref(),
            Some(
                "[defaultConstraints[0].topologyKey: Required value: can not be empty, defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty]"
            )
        );
    }
}
