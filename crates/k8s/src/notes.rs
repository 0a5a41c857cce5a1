//! Notes about the input (objects skipped, pods left out): collected per object, printed
//! one line per kind of note with a count, so a dump of thousands of objects gives a few
//! lines, not thousands.

use std::fmt;

/// One thing to tell the user about one object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// The object it is about, as `file: kind/name`.
    pub subject: String,
    /// What happened to it; notes with the same message are summarised together.
    pub message: String,
}

impl Note {
    /// A note about `subject`.
    pub fn new(subject: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            subject: subject.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.subject, self.message)
    }
}

/// What the scheduler reads of a pod that topospread does not model, each a note on
/// `subject` (`file: pod/name`), never a silent wrong answer: `spec.resourceClaims`, which
/// only the DynamicResources plugin (Dynamic Resource Allocation: ResourceClaims,
/// DeviceClasses, ResourceSlices) filters and allocates for; `spec.schedulingGroup`, the
/// PodGroup whose pods gang scheduling (KEP-4671) places together or not at all.
pub fn unmodelled(subject: &str, pod: &k8s_openapi::api::core::v1::Pod) -> Vec<Note> {
    let Some(spec) = pod.spec.as_ref() else {
        return Vec::new();
    };
    let mut notes = Vec::new();
    if spec.resource_claims.as_ref().is_some_and(|c| !c.is_empty()) {
        notes.push(Note::new(
            subject,
            "spec.resourceClaims: not modelled: the DynamicResources plugin (devices from \
             ResourceClaims, DeviceClasses and ResourceSlices) is not simulated, so the pod is \
             placed as if it claimed no device",
        ));
    }
    if spec
        .scheduling_group
        .as_ref()
        .is_some_and(|g| g.pod_group_name.as_deref().is_some_and(|n| !n.is_empty()))
    {
        notes.push(Note::new(
            subject,
            "spec.schedulingGroup: not modelled: gang scheduling (a PodGroup's pods placed \
             together or not at all) is not simulated, so the pod is placed on its own",
        ));
    }
    notes
}

/// A note when `pod` (named by `subject`) asks for an extended resource that no node
/// lists in `status.allocatable` (`advertised` holds those that some node lists): in a
/// cluster with DRAExtendedResource, a DeviceClass naming it in
/// `spec.extendedResourceName` has the DynamicResources plugin allocate it from devices
/// (NodeResourcesFit then leaves it alone), which is not simulated, so the pod is
/// reported as not fitting.
pub fn unadvertised_extended_resources(
    subject: &str,
    pod: &k8s_openapi::api::core::v1::Pod,
    advertised: &std::collections::BTreeSet<String>,
) -> Option<Note> {
    let spec = pod.spec.as_ref()?;
    let mut missing: Vec<&str> = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .filter_map(|c| c.resources.as_ref())
        .flat_map(|r| r.requests.iter().flatten().chain(r.limits.iter().flatten()))
        .map(|(name, _)| name.as_str())
        .filter(|name| {
            topospread::api::resources::is_extended_resource_name(name)
                && !advertised.contains(*name)
        })
        .collect();
    missing.sort_unstable();
    missing.dedup();
    if missing.is_empty() {
        return None;
    }
    Some(Note::new(
        subject,
        format!(
            "asks for {}, which no node lists in status.allocatable: if a DeviceClass \
             provides it (spec.extendedResourceName, DRAExtendedResource), the \
             DynamicResources plugin would allocate it from devices, which is not simulated",
            missing.join(", ")
        ),
    ))
}

/// How many subjects a summary line names before "and N more".
const NAMED: usize = 2;

/// One line per distinct message, in first-seen order: the note itself when it is the
/// only one with its message, else the message, the count and the first subjects.
pub fn summarize<'a>(notes: impl IntoIterator<Item = &'a Note>) -> Vec<String> {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    let mut index = std::collections::HashMap::new();
    for n in notes {
        let i = *index.entry(n.message.as_str()).or_insert_with(|| {
            groups.push((n.message.as_str(), Vec::new()));
            groups.len() - 1
        });
        groups[i].1.push(n.subject.as_str());
    }
    groups
        .into_iter()
        .map(|(message, subjects)| match subjects.as_slice() {
            [one] => format!("{one}: {message}"),
            _ => {
                let mut named = subjects[..NAMED.min(subjects.len())].join("; ");
                if subjects.len() > NAMED {
                    named.push_str(&format!("; and {} more", subjects.len() - NAMED));
                }
                format!("{message} ({} objects: {named})", subjects.len())
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_message_with_a_count() {
        let notes = [
            Note::new("a.yaml: configmap/x", "skipped: kind ConfigMap (v1)"),
            Note::new("a.yaml: cronjob/c", "skipped: a CronJob"),
            Note::new("a.yaml: configmap/y", "skipped: kind ConfigMap (v1)"),
            Note::new("b.yaml: configmap/z", "skipped: kind ConfigMap (v1)"),
        ];
        assert_eq!(
            summarize(&notes),
            [
                "skipped: kind ConfigMap (v1) (3 objects: a.yaml: configmap/x; a.yaml: configmap/y; and 1 more)",
                "a.yaml: cronjob/c: skipped: a CronJob",
            ]
        );
        assert!(summarize(&[]).is_empty());
    }

    #[test]
    fn a_pod_with_resource_claims_gets_a_note() {
        let mut pod = k8s_openapi::api::core::v1::Pod::default();
        assert!(unmodelled("a.yaml: pod/p", &pod).is_empty());
        pod.spec = Some(k8s_openapi::api::core::v1::PodSpec {
            resource_claims: Some(vec![k8s_openapi::api::core::v1::PodResourceClaim {
                name: "gpu".into(),
                resource_claim_template_name: Some("one-gpu".into()),
                ..Default::default()
            }]),
            ..Default::default()
        });
        let notes = unmodelled("a.yaml: pod/p", &pod);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].to_string().starts_with(
                "a.yaml: pod/p: spec.resourceClaims: not modelled: the DynamicResources plugin"
            ),
            "{}",
            notes[0]
        );
    }

    #[test]
    fn a_pod_in_a_scheduling_group_gets_a_note() {
        let mut pod = k8s_openapi::api::core::v1::Pod {
            spec: Some(k8s_openapi::api::core::v1::PodSpec {
                scheduling_group: Some(k8s_openapi::api::core::v1::PodSchedulingGroup {
                    pod_group_name: Some("trainers".into()),
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        let notes = unmodelled("a.yaml: pod/p", &pod);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert_eq!(
            notes[0].to_string(),
            "a.yaml: pod/p: spec.schedulingGroup: not modelled: gang scheduling (a PodGroup's \
             pods placed together or not at all) is not simulated, so the pod is placed on its own"
        );
        if let Some(s) = pod.spec.as_mut() {
            s.scheduling_group = Some(Default::default());
        }
        assert!(unmodelled("a.yaml: pod/p", &pod).is_empty());
    }

    #[test]
    fn an_extended_resource_no_node_lists_gets_a_note() {
        let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {
                "requests": {"cpu": "1", "example.com/gpu": "1"},
                "limits": {"example.com/gpu": "1", "nvidia.com/gpu": "1"}}}]}
        }))
        .expect("pod");
        let advertised: std::collections::BTreeSet<String> = ["nvidia.com/gpu".to_string()].into();
        let note =
            unadvertised_extended_resources("a.yaml: pod/p", &pod, &advertised).expect("a note");
        assert!(
            note.to_string()
                .starts_with("a.yaml: pod/p: asks for example.com/gpu, which no node lists"),
            "{note}"
        );
        let all: std::collections::BTreeSet<String> =
            ["nvidia.com/gpu".to_string(), "example.com/gpu".to_string()].into();
        assert!(unadvertised_extended_resources("a.yaml: pod/p", &pod, &all).is_none());
    }
}
