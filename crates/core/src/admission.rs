//! The API server's Priority admission plugin, as it treats a pod on create: resolve
//! `spec.priorityClassName` (or the global default class) to `spec.priority` and
//! `spec.preemptionPolicy`, and refuse a pod naming a class that does not exist. Here,
//! beside the [`PriorityClasses`] it reads, so that the live scheduler (which resolves a
//! pod the API server left unresolved) needs no manifest loader; `topospread-k8s`
//! re-exports it with the other admission plugins.
//!
//! One deliberate difference: a pod that already carries `spec.priority` and names no
//! class is taken as written. Such pods come from `kubectl get -o yaml` (admitted long
//! ago) or from hand-written scenarios that set priorities directly; upstream would
//! refuse one whose value differs from the default. A pod that names a class the
//! registry does not hold while already carrying `spec.priority` is likewise taken as
//! admitted (its class is just not among the loaded objects).

use crate::api::{PreemptionPolicy, PriorityClasses};
use k8s_openapi::api::core::v1 as core;

/// The priority a pod gets when no class applies (`DefaultPriorityWhenNoDefaultClassExists`).
pub const DEFAULT_PRIORITY: i32 = 0;

/// Why admission refused a pod; the messages are the API server's Forbidden errors.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum AdmissionError {
    /// `spec.priorityClassName` names no PriorityClass.
    #[error("pods {pod:?} is forbidden: no PriorityClass with name {class} was found")]
    NoPriorityClass {
        /// The pod's name.
        pod: String,
        /// The class it names.
        class: String,
    },
    /// `spec.priority` is set and differs from the class's value.
    #[error(
        "pods {pod:?} is forbidden: the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {computed} from the given PriorityClass name"
    )]
    PriorityMismatch {
        /// The pod's name.
        pod: String,
        /// `spec.priority` as written.
        given: i32,
        /// The class's value.
        computed: i32,
    },
    /// `spec.preemptionPolicy` is set and differs from the class's.
    #[error(
        "pods {pod:?} is forbidden: the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {computed} from the given PriorityClass name"
    )]
    PreemptionPolicyMismatch {
        /// The pod's name.
        pod: String,
        /// `spec.preemptionPolicy` as written.
        given: String,
        /// The class's policy.
        computed: &'static str,
    },
    /// Another admission plugin refused the pod (LimitRanger, RuntimeClass).
    #[error("pods {pod:?} is forbidden: {reason}")]
    Forbidden {
        /// The pod's name.
        pod: String,
        /// The plugin's words.
        reason: String,
    },
    /// The pod as the mutating plugins left it fails the API server's validation (a
    /// LimitRange's default limit below the request the pod asks for).
    #[error("Pod {pod:?} is invalid: {errors}")]
    Invalid {
        /// The pod's name.
        pod: String,
        /// The field errors, aggregated as the API server prints them.
        errors: String,
    },
}

impl AdmissionError {
    /// The refused pod's name.
    pub fn pod(&self) -> &str {
        match self {
            Self::NoPriorityClass { pod, .. }
            | Self::PriorityMismatch { pod, .. }
            | Self::PreemptionPolicyMismatch { pod, .. }
            | Self::Forbidden { pod, .. }
            | Self::Invalid { pod, .. } => pod,
        }
    }
}

/// The name admission refusals give `pod`: a pod made with `generateName` is named by
/// the prefix, as `admission.NewForbidden` names it before the name is generated.
pub fn requested_name(pod: &core::Pod) -> String {
    pod.metadata
        .generate_name
        .clone()
        .filter(|g| !g.is_empty())
        .or_else(|| pod.metadata.name.clone())
        .unwrap_or_default()
}

/// Admits `pod` as the Priority admission plugin does on create, setting
/// `spec.priority`, `spec.priorityClassName` (from the global default, when the pod
/// names none) and `spec.preemptionPolicy`.
///
/// - A pod naming a class gets its value and preemption policy; it is refused if the
///   class does not exist, or if it sets a different priority or policy itself.
/// - A pod naming none gets the global default class's name, value and policy, or
///   priority 0 and `PreemptLowerPriority` when there is no default class.
/// - See the module docs for pods that already carry `spec.priority`.
pub fn resolve_priority(
    pod: &mut core::Pod,
    classes: &PriorityClasses,
) -> Result<(), AdmissionError> {
    let name = requested_name(pod);
    let spec = pod.spec.get_or_insert_with(Default::default);
    let written = WrittenPriority {
        class_name: spec.priority_class_name.as_deref(),
        priority: spec.priority,
        preemption_policy: spec.preemption_policy.as_deref(),
    };
    let Some(admitted) = admit_priority(&name, written, classes)? else {
        return Ok(());
    };
    if let Some(class) = admitted.default_class {
        spec.priority_class_name = Some(class);
    }
    spec.priority = Some(admitted.priority);
    spec.preemption_policy = Some(admitted.preemption_policy.as_str().to_string());
    Ok(())
}

/// What a pod says of its priority, as written.
#[derive(Clone, Copy, Debug, Default)]
pub struct WrittenPriority<'a> {
    /// `spec.priorityClassName`.
    pub class_name: Option<&'a str>,
    /// `spec.priority`.
    pub priority: Option<i32>,
    /// `spec.preemptionPolicy`.
    pub preemption_policy: Option<&'a str>,
}

/// What Priority admission sets on a pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdmittedPriority {
    /// `spec.priority`.
    pub priority: i32,
    /// `spec.preemptionPolicy`.
    pub preemption_policy: PreemptionPolicy,
    /// The global default class's name, when the pod named none and one exists.
    pub default_class: Option<String>,
}

/// Priority admission of pod `name` as [`resolve_priority`] describes it, on what the
/// pod wrote: `Ok(None)` when the pod is taken as written (see the module docs).
pub fn admit_priority(
    name: &str,
    written: WrittenPriority<'_>,
    classes: &PriorityClasses,
) -> Result<Option<AdmittedPriority>, AdmissionError> {
    let class_name = written.class_name.filter(|n| !n.is_empty());
    let (priority, policy, default_class) = match class_name {
        None => {
            if written.priority.is_some() {
                return Ok(None);
            }
            match classes.global_default() {
                Some(c) => (c.value, c.preemption_policy, Some(c.name.to_string())),
                None => (
                    DEFAULT_PRIORITY,
                    PreemptionPolicy::PreemptLowerPriority,
                    None,
                ),
            }
        }
        Some(class_name) => match classes.get(class_name) {
            Some(c) => (c.value, c.preemption_policy, None),
            None if written.priority.is_some() => return Ok(None),
            None => {
                return Err(AdmissionError::NoPriorityClass {
                    pod: name.to_string(),
                    class: class_name.to_string(),
                });
            }
        },
    };
    if let Some(given) = written.priority
        && given != priority
    {
        return Err(AdmissionError::PriorityMismatch {
            pod: name.to_string(),
            given,
            computed: priority,
        });
    }
    if let Some(given) = written.preemption_policy
        && given != policy.as_str()
    {
        return Err(AdmissionError::PreemptionPolicyMismatch {
            pod: name.to_string(),
            given: given.to_string(),
            computed: policy.as_str(),
        });
    }
    Ok(Some(AdmittedPriority {
        priority,
        preemption_policy: policy,
        default_class,
    }))
}
