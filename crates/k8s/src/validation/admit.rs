//! What the API server refuses on create, for every object topospread reads: object
//! names and namespaces, label keys and values, replica counts, container resource
//! quantities, and the topologySpreadConstraints of pods and templates
//! ([`validate_workload_create`]). Every command runs these before it simulates, so
//! nothing is simulated that a cluster would not hold; `validate` reports them all.

use std::fmt;

use k8s_openapi::api::core::v1::{Container, PodSpec, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use topospread::api::quantity::Quantity;
use topospread::validation::{FieldError, FieldPath, is_dns1123_subdomain, validate_labels};

use super::objects::{
    ApiServerFeatures, PodSpecRef, is_stored, validate_spec_create, validate_spec_stored,
};
use crate::load::{CompactPod, Loaded, Object, Source, escape_control};
use k8s_openapi::api::core::v1::PodTemplateSpec;

/// One field of one loaded object the API server would refuse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// Where the object came from.
    pub source: Source,
    /// Its kind (`Pod`, `Deployment`, ...).
    pub kind: &'static str,
    /// `metadata.namespace`, as written.
    pub namespace: Option<String>,
    /// `metadata.name`, as written (or generated).
    pub name: Option<String>,
    /// The field and what is wrong with it, in the API server's words.
    pub error: FieldError,
    /// Whether only this object is left out, the rest going on (as `kubectl apply`
    /// refuses one object of a file and applies the others); else nothing is simulated.
    pub object_only: bool,
}

impl Refusal {
    /// `kind/name (namespace ns)`, control characters escaped.
    pub fn object(&self) -> String {
        let name = self
            .name
            .as_deref()
            .map_or_else(|| "<unnamed>".to_string(), escape_control);
        let mut s = format!("{}/{name}", self.kind.to_lowercase());
        if let Some(ns) = &self.namespace {
            s.push_str(&format!(" (namespace {})", escape_control(ns)));
        }
        s
    }
}

impl fmt::Display for Refusal {
    /// `file: kind/name: field: Invalid value: ...: detail`, on one line whatever the
    /// value holds (values are quoted as Go quotes them, and cut past 200 characters).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut body = self.error.to_string();
        if body.chars().count() > 400 {
            body = body.chars().take(400).collect::<String>() + "... (cut)";
        }
        write!(f, "{}: {}: {}", self.source.file, self.object(), body)
    }
}

/// The longest bad value printed; a 50 MB label value is cut, not echoed.
const MAX_VALUE_CHARS: usize = 200;

/// Every refusal for `objects`, in file order (all of each object's errors together),
/// under current Kubernetes' gates.
pub fn validate_objects(objects: &[Loaded]) -> Vec<Refusal> {
    validate_objects_with(objects, &ApiServerFeatures::default())
}

/// [`validate_objects`] under the gates of a given release.
pub fn validate_objects_with(objects: &[Loaded], features: &ApiServerFeatures) -> Vec<Refusal> {
    let mut out = Vec::new();
    for l in objects {
        if let Object::CompactPod(p) = &l.object {
            // Validated as it was read, while its whole object existed.
            out.extend(p.refusals.iter().cloned());
            continue;
        }
        let Some(meta) = l.object.metadata() else {
            continue;
        };
        if let Object::Unserved(u) = &l.object {
            // Nothing else of it is read: the API version alone refuses it, in a
            // release that does not serve it.
            if u.served.served_in(features.release) {
                continue;
            }
            out.push(Refusal {
                source: l.source.clone(),
                kind: u.kind,
                namespace: meta.namespace.clone(),
                name: meta.name.clone(),
                error: unserved(u, features.release),
                object_only: true,
            });
            continue;
        }
        let mut errors: Vec<(FieldError, bool)> = validate_meta(&l.object, meta)
            .into_iter()
            .chain(validate_pod_annotations(&l.object, meta))
            .chain(validate_spec(&l.object, features))
            .map(|e| (e, false))
            .collect();
        errors.extend(
            super::workload::validate_workload_spec(&l.object)
                .into_iter()
                .chain(super::policy::validate_policy_object(&l.object))
                .map(|e| (e, true)),
        );
        for (mut error, object_only) in errors {
            if let Some(v) = error.bad_value.as_mut()
                && v.chars().count() > MAX_VALUE_CHARS
            {
                *v = v.chars().take(MAX_VALUE_CHARS).collect::<String>() + "...";
            }
            out.push(Refusal {
                source: l.source.clone(),
                kind: l.object.kind(),
                namespace: meta.namespace.clone(),
                name: meta.name.clone(),
                error,
                object_only,
            });
        }
    }
    out
}

/// The refusal of an object in an apiVersion release 1.`minor` does not serve, in
/// kubectl's words, naming the release that removed it or that introduces it.
fn unserved(u: &crate::load::Unserved, minor: u32) -> FieldError {
    let s = &u.served;
    let when = match s.removed_in {
        Some(r) if minor >= r => format!("removed in Kubernetes 1.{r}"),
        _ => format!("introduced in Kubernetes 1.{}", s.introduced_in),
    };
    let instead = if s.replacement.is_empty() {
        String::new()
    } else {
        format!(" (use {})", s.replacement)
    };
    FieldError::invalid(
        &FieldPath::new("apiVersion"),
        u.api_version.as_str(),
        format!(
            "no matches for kind \"{}\" in version \"{}\": {when}{instead}",
            u.kind, u.api_version
        ),
    )
}

/// `metadata`: name (required; DNS-1123 subdomain, a DNS-1035 label for Services),
/// namespace (a DNS-1123 label; none for cluster-scoped kinds), labels.
fn validate_meta(object: &Object, meta: &ObjectMeta) -> Vec<FieldError> {
    let path = FieldPath::new("metadata");
    let mut errs = Vec::new();
    match meta.name.as_deref() {
        None | Some("") => {
            errs.push(FieldError::required(
                &path.child("name"),
                "name or generateName is required",
            ));
        }
        Some(name) => {
            let problems = match object {
                Object::Service(_) => is_dns1035_label(name),
                _ => is_dns1123_subdomain(name),
            };
            errs.extend(
                problems
                    .into_iter()
                    .map(|m| FieldError::invalid(&path.child("name"), name.to_string(), m)),
            );
        }
    }
    let cluster_scoped = matches!(
        object,
        Object::Node(_)
            | Object::PriorityClass(_)
            | Object::Namespace(_)
            | Object::PersistentVolume(_)
            | Object::StorageClass(_)
            | Object::CsiNode(_)
            | Object::RuntimeClass(_)
    );
    if let Some(ns) = meta.namespace.as_deref().filter(|ns| !ns.is_empty())
        && !cluster_scoped
    {
        errs.extend(
            is_dns1123_label(ns)
                .into_iter()
                .map(|m| FieldError::invalid(&path.child("namespace"), ns.to_string(), m)),
        );
    }
    if let Some(labels) = meta.labels.as_ref() {
        errs.extend(validate_labels(labels, &path.child("labels")));
    }
    errs
}

/// `ValidatePodSpecificAnnotations`' deletion-cost check on a Pod's or a template's
/// annotations on create: a `controller.kubernetes.io/pod-deletion-cost` that
/// `GetDeletionCostFromPodAnnotations` cannot read (a plus sign, leading zeros, spaces,
/// beyond int32) is refused. Stored objects pass, as an update keeps an invalid cost
/// (`AllowInvalidPodDeletionCost`).
fn validate_pod_annotations(object: &Object, meta: &ObjectMeta) -> Vec<FieldError> {
    if is_stored(meta) {
        return Vec::new();
    }
    let (path, annotations) = match object {
        Object::Pod(_) => (FieldPath::new("metadata"), meta.annotations.as_ref()),
        _ => match template_of(object) {
            // ValidatePodTemplateSpec passes the template's path, not its metadata's.
            Some((path, t)) => (
                path,
                t.metadata.as_ref().and_then(|m| m.annotations.as_ref()),
            ),
            None => return Vec::new(),
        },
    };
    let key = topospread_planning::controller::DELETION_COST_ANNOTATION;
    match annotations.and_then(|a| a.get(key)) {
        Some(v) if topospread_planning::controller::parse_deletion_cost(v).is_none() => {
            vec![FieldError::invalid(
                &path.child("annotations").key(key),
                v.clone(),
                "must be a 32bit integer",
            )]
        }
        _ => Vec::new(),
    }
}

/// A DNS-1123 label (`[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63 characters): namespaces
/// (upstream: `validation.IsDNS1123Label`).
fn is_dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    let b = value.as_bytes();
    let end = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    let ok = b.first().is_some_and(end)
        && b.last().is_some_and(end)
        && b.iter().all(|c| end(c) || *c == b'-');
    if !ok {
        errs.push("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')".to_string());
    }
    errs
}

/// A DNS-1035 label (`[a-z]([-a-z0-9]*[a-z0-9])?`, at most 63 characters): Service names
/// (upstream: `validation.IsDNS1035Label`).
fn is_dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    let b = value.as_bytes();
    let ok = b.first().is_some_and(u8::is_ascii_lowercase)
        && b.last()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-');
    if !ok {
        errs.push("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')".to_string());
    }
    errs
}

/// A workload's pod template and its path (`spec.template`, `spec.jobTemplate.spec.template`),
/// borrowed: admission runs on every object of a dump, so nothing is cloned.
pub(super) fn template_of(object: &Object) -> Option<(FieldPath, &PodTemplateSpec)> {
    let spec_template = || FieldPath::new("spec").child("template");
    Some(match object {
        Object::ReplicationController(o) => (spec_template(), o.spec.as_ref()?.template.as_ref()?),
        Object::Deployment(o) => (spec_template(), &o.spec.template),
        Object::ReplicaSet(o) => (spec_template(), o.spec.template.as_ref()?),
        Object::StatefulSet(o) => (spec_template(), &o.spec.template),
        Object::DaemonSet(o) => (spec_template(), &o.spec.template),
        Object::Job(o) => (spec_template(), &o.spec.as_ref()?.template),
        Object::CronJob(o) => (
            FieldPath::new("spec")
                .child("jobTemplate")
                .child("spec")
                .child("template"),
            &o.spec.job_template.spec.as_ref()?.template,
        ),
        _ => return None,
    })
}

/// The pod spec of a Pod or a workload's template, and whether it is a Pod's own.
fn pod_spec_of(object: &Object) -> Option<(PodSpecRef<'_>, bool)> {
    if let Object::Pod(p) = object {
        return Some((
            PodSpecRef {
                path: FieldPath::new("spec"),
                spec: p.spec.as_ref()?,
                labels: p.metadata.labels.as_ref(),
            },
            true,
        ));
    }
    let (path, template) = template_of(object)?;
    Some((
        PodSpecRef {
            path: path.child("spec"),
            spec: template.spec.as_ref()?,
            labels: template.metadata.as_ref().and_then(|m| m.labels.as_ref()),
        },
        false,
    ))
}

/// The spec fields the API server checks that the scheduler reads: replica counts,
/// template labels, container resources, topologySpreadConstraints.
fn validate_spec(object: &Object, features: &ApiServerFeatures) -> Vec<FieldError> {
    let spec = FieldPath::new("spec");
    let mut errs = Vec::new();
    let non_negative = |errs: &mut Vec<FieldError>, value: Option<i32>, field: &str| {
        if let Some(v) = value
            && v < 0
        {
            errs.push(FieldError::invalid(
                &spec.child(field),
                i64::from(v),
                "must be greater than or equal to 0",
            ));
        }
    };
    match object {
        Object::Deployment(d) => non_negative(&mut errs, d.spec.replicas, "replicas"),
        Object::ReplicaSet(r) => non_negative(&mut errs, r.spec.replicas, "replicas"),
        Object::StatefulSet(s) => non_negative(&mut errs, s.spec.replicas, "replicas"),
        Object::ReplicationController(r) => {
            non_negative(
                &mut errs,
                r.spec.as_ref().and_then(|s| s.replicas),
                "replicas",
            );
        }
        Object::Job(j) => {
            let s = j.spec.as_ref();
            non_negative(&mut errs, s.and_then(|s| s.parallelism), "parallelism");
            non_negative(&mut errs, s.and_then(|s| s.completions), "completions");
        }
        _ => {}
    }
    if let Some((path, template)) = template_of(object)
        && let Some(labels) = template.metadata.as_ref().and_then(|m| m.labels.as_ref())
    {
        errs.extend(validate_labels(
            labels,
            &path.child("metadata").child("labels"),
        ));
    }
    if let Some((pod_spec, is_pod)) = pod_spec_of(object) {
        errs.extend(validate_resources(pod_spec.spec, &pod_spec.path));
        if object.metadata().is_some_and(is_stored) {
            errs.extend(validate_spec_stored(&pod_spec, features));
        } else {
            errs.extend(validate_spec_create(&pod_spec, is_pod, features));
        }
    }
    errs
}

/// Every container's requests and limits: quantities that parse and are not negative,
/// and no request above its limit (upstream: `ValidateResourceRequirements` /
/// `ValidateResourceQuantityValue`).
fn validate_resources(spec: &PodSpec, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut each = |field: &str, containers: &[Container]| {
        for (i, c) in containers.iter().enumerate() {
            let Some(r) = c.resources.as_ref() else {
                continue;
            };
            let at = path.child(field).index(i).child("resources");
            check_list(r, &at, &mut errs);
            check_request_within_limit(r, &at, &mut errs);
        }
    };
    each(
        "initContainers",
        spec.init_containers.as_deref().unwrap_or_default(),
    );
    each("containers", &spec.containers);
    errs
}

/// The requests above their limits of every container of a pod's `spec`, in the API
/// server's words. Admission runs it again on a pod LimitRanger gave default limits:
/// the API server validates the pod after the mutating plugins, before the validating
/// ones (`ValidateResourceRequirements`'s "must be less than or equal to cpu limit of
/// 500m", on the `requests` list).
pub(crate) fn requests_above_limits(spec: &PodSpec) -> Vec<FieldError> {
    let path = FieldPath::new("spec");
    let mut errs = Vec::new();
    // `validatePodSpec` checks the containers, then the init containers.
    let containers = spec
        .containers
        .iter()
        .enumerate()
        .map(|(i, c)| ("containers", i, c))
        .chain(
            spec.init_containers
                .iter()
                .flatten()
                .enumerate()
                .map(|(i, c)| ("initContainers", i, c)),
        );
    for (field, i, c) in containers {
        if let Some(r) = c.resources.as_ref() {
            let at = path.child(field).index(i).child("resources");
            check_request_within_limit(r, &at, &mut errs);
        }
    }
    errs
}

/// One container's requests against its limits (quantities that do not parse are
/// [`check_list`]'s to report).
fn check_request_within_limit(
    r: &ResourceRequirements,
    at: &FieldPath,
    errs: &mut Vec<FieldError>,
) {
    let (Some(requests), Some(limits)) = (r.requests.as_ref(), r.limits.as_ref()) else {
        return;
    };
    for (name, K8sQuantity(request)) in requests {
        let Some(K8sQuantity(limit)) = limits.get(name) else {
            continue;
        };
        let (Ok(req), Ok(lim)) = (Quantity::parse(request), Quantity::parse(limit)) else {
            continue;
        };
        if req > lim {
            errs.push(FieldError::invalid(
                &at.child("requests"),
                crate::admission::limit_range::canonical(request),
                format!(
                    "must be less than or equal to {name} limit of {}",
                    crate::admission::limit_range::canonical(limit)
                ),
            ));
        }
    }
}

fn check_list(r: &ResourceRequirements, at: &FieldPath, errs: &mut Vec<FieldError>) {
    for (list, values) in [("requests", &r.requests), ("limits", &r.limits)] {
        for (name, K8sQuantity(text)) in values.iter().flatten() {
            let field = at.child(list).key(name);
            match Quantity::parse(text) {
                Err(e) => errs.push(FieldError::invalid(&field, text.clone(), e.to_string())),
                Ok(q) if q.signum() < 0 => errs.push(FieldError::invalid(
                    &field,
                    text.clone(),
                    "must be greater than or equal to 0",
                )),
                Ok(_) => {}
            }
        }
    }
}

/// What makes the objects together not a cluster the API server could hold: two Nodes
/// (or two Pods in a namespace) of one name, and, when the files hold Nodes, a Pod bound
/// to a Node they do not hold. Each refusal names the later object.
pub fn validate_cluster(objects: &[Loaded]) -> Vec<Refusal> {
    use std::collections::HashSet;
    let mut out = Vec::new();
    let mut nodes = HashSet::new();
    let mut pods = HashSet::new();
    let refusal = |l: &Loaded, meta: &ObjectMeta, error: FieldError| Refusal {
        source: l.source.clone(),
        kind: l.object.kind(),
        namespace: meta.namespace.clone(),
        name: meta.name.clone(),
        error,
        object_only: false,
    };
    let name_path = FieldPath::new("metadata").child("name");
    for l in objects {
        match &l.object {
            Object::Node(n) => {
                let name = n.metadata.name.clone().unwrap_or_default();
                if !nodes.insert(name.clone()) {
                    out.push(refusal(
                        l,
                        &n.metadata,
                        FieldError::duplicate(&name_path, name),
                    ));
                }
            }
            Object::Pod(p) => {
                let ns = p
                    .metadata
                    .namespace
                    .clone()
                    .unwrap_or_else(|| "default".into());
                let name = p.metadata.name.clone().unwrap_or_default();
                if !pods.insert((ns, name.clone())) {
                    out.push(refusal(
                        l,
                        &p.metadata,
                        FieldError::duplicate(&name_path, name),
                    ));
                }
            }
            Object::CompactPod(p) if !pods.insert((p.namespace.clone(), p.name.clone())) => {
                out.push(compact_refusal(
                    l,
                    p,
                    FieldError::duplicate(&name_path, p.name.clone()),
                ));
            }
            _ => {}
        }
    }
    if nodes.is_empty() {
        return out;
    }
    for l in objects {
        if let Object::CompactPod(p) = &l.object
            && let Some(node) = p.candidate.node.as_deref()
            && !nodes.contains(node)
            && !p.is_finished()
        {
            out.push(compact_refusal(l, p, dangling(node)));
        }
        if let Object::Pod(p) = &l.object
            && let Some(node) = p.spec.as_ref().and_then(|s| s.node_name.as_deref())
            && !node.is_empty()
            && !nodes.contains(node)
            && !crate::build::is_finished(p)
        {
            out.push(refusal(l, &p.metadata, dangling(node)));
        }
    }
    out
}

/// `spec.nodeName` naming a node the files do not hold.
fn dangling(node: &str) -> FieldError {
    FieldError::invalid(
        &FieldPath::new("spec").child("nodeName"),
        node.to_string(),
        "no Node of this name in the files: the pod is bound to a node the cluster does not have",
    )
}

/// A refusal of a pod read in compact form.
fn compact_refusal(l: &Loaded, p: &CompactPod, error: FieldError) -> Refusal {
    Refusal {
        source: l.source.clone(),
        kind: "Pod",
        namespace: p.namespace_written.clone(),
        name: Some(p.name.clone()),
        error,
        object_only: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::parse_manifests;

    fn refusals(text: &str) -> Vec<String> {
        let m = parse_manifests(text, "f.yaml").expect("parses");
        validate_objects(&m.objects)
            .into_iter()
            .chain(validate_cluster(&m.objects))
            .map(|r| r.to_string())
            .collect()
    }

    #[test]
    fn a_request_above_its_limit_is_refused_on_the_requests_list() {
        let got = refusals(
            "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {cpu: 1500m, memory: 1Gi}, limits: {cpu: '1', memory: 1Gi}}}]}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {initContainers: [{name: i, resources: {requests: {memory: 2Gi}, limits: {memory: 1024Mi}}}], containers: [{name: c}]}}}\n",
        );
        assert_eq!(got.len(), 2, "{got:#?}");
        assert!(
            got[0].ends_with("pod/p: spec.containers[0].resources.requests: Invalid value: \"1500m\": must be less than or equal to cpu limit of 1"),
            "{got:#?}"
        );
        assert!(
            got[1].ends_with("deployment/web: spec.template.spec.initContainers[0].resources.requests: Invalid value: \"2Gi\": must be less than or equal to memory limit of 1Gi"),
            "{got:#?}"
        );
    }

    #[test]
    fn names_labels_replicas_and_resources() {
        let got = refusals(
            "kind: Pod\nmetadata: {name: \"Bad\\u001b[0m\", labels: {ok: \"a b\"}}\nspec: {containers: [{name: c, resources: {requests: {cpu: \"-1\", memory: 1Gx}}}]}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: -1, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c}], topologySpreadConstraints: [{maxSkew: 0, minDomains: -1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {}}]}}}\n",
        );
        let fields: Vec<&str> = got
            .iter()
            .map(|l| l.split(": ").nth(2).unwrap_or(""))
            .collect();
        assert_eq!(
            fields,
            [
                "metadata.name",
                "metadata.labels",
                "spec.containers[0].resources.requests[cpu]",
                "spec.containers[0].resources.requests[memory]",
                "spec.replicas",
                "spec.template.spec.topologySpreadConstraints[0].maxSkew",
                "spec.template.spec.topologySpreadConstraints[0].minDomains",
            ],
            "{got:#?}"
        );
        assert!(got[0].starts_with("f.yaml: pod/Bad\\u{1b}[0m: metadata.name: Invalid value: \"Bad\\x1b[0m\": a lowercase RFC 1123 subdomain"), "{}", got[0]);
        assert_eq!(
            got[4],
            "f.yaml: deployment/web: spec.replicas: Invalid value: -1: must be greater than or equal to 0"
        );
        assert!(got.iter().all(|l| !l.contains('\u{1b}')));
    }

    /// `GetDeletionCostFromPodAnnotations` refuses a leading `+` (`validFirstDigit`)
    /// though `strconv.ParseInt` would take it; a stored object keeps its cost.
    #[test]
    fn an_unreadable_deletion_cost_is_refused_on_create() {
        let doc = |meta: &str, cost: &str| {
            format!(
                "kind: Pod\nmetadata: {{name: p{meta}, annotations: {{controller.kubernetes.io/pod-deletion-cost: \"{cost}\"}}}}\nspec: {{containers: [{{name: c}}]}}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web{meta}}}\nspec: {{selector: {{matchLabels: {{a: b}}}}, template: {{metadata: {{labels: {{a: b}}, annotations: {{controller.kubernetes.io/pod-deletion-cost: \"{cost}\"}}}}, spec: {{containers: [{{name: c}}]}}}}}}\n"
            )
        };
        for bad in ["+7", "1.5", " 3", "99999999999", "007", "", "-"] {
            let got = refusals(&doc("", bad));
            assert_eq!(got.len(), 2, "{bad:?}: {got:#?}");
            assert_eq!(
                got[0],
                format!(
                    "f.yaml: pod/p: metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: {bad:?}: must be a 32bit integer"
                )
            );
            assert_eq!(
                got[1],
                format!(
                    "f.yaml: deployment/web: spec.template.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: {bad:?}: must be a 32bit integer"
                )
            );
        }
        for ok in ["7", "-7", "0", "-0", "-007", "2147483647", "-2147483648"] {
            assert!(refusals(&doc("", ok)).is_empty(), "{ok:?}");
        }
        assert!(refusals(&doc(", uid: u1", "+7")).is_empty());
    }

    #[test]
    fn an_api_version_no_release_serves_refuses_that_object_alone() {
        let m = parse_manifests(
            "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: db, namespace: prod}\nspec: {minAvailable: 1, selector: {matchLabels: {app: db}}, unknownOldField: 1}\n---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: ok}\nspec: {minAvailable: 1}\n",
            "chart.yaml",
        )
        .expect("loads, the old schema unread");
        let refusals = validate_objects(&m.objects);
        assert_eq!(refusals.len(), 1);
        assert!(refusals[0].object_only);
        assert_eq!(
            refusals[0].to_string(),
            "chart.yaml: poddisruptionbudget/db (namespace prod): apiVersion: Invalid value: \"policy/v1beta1\": no matches for kind \"PodDisruptionBudget\" in version \"policy/v1beta1\": removed in Kubernetes 1.25 (use policy/v1)"
        );
    }

    #[test]
    fn api_versions_removed_or_introduced_after_1_25_depend_on_the_release() {
        let m = crate::load::parse_manifests(
            "apiVersion: autoscaling/v2beta2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\n---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: gpu}\n",
            "a.yaml",
        )
        .expect("loads");
        let at = |release| {
            let features = ApiServerFeatures {
                release,
                ..ApiServerFeatures::default()
            };
            validate_objects_with(&m.objects, &features)
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            at(25),
            [
                "a.yaml: resourceclaim/gpu: apiVersion: Invalid value: \"resource.k8s.io/v1\": no matches for kind \"ResourceClaim\" in version \"resource.k8s.io/v1\": introduced in Kubernetes 1.34"
            ]
        );
        assert_eq!(
            at(34),
            [
                "a.yaml: horizontalpodautoscaler/web: apiVersion: Invalid value: \"autoscaling/v2beta2\": no matches for kind \"HorizontalPodAutoscaler\" in version \"autoscaling/v2beta2\": removed in Kubernetes 1.26 (use autoscaling/v2)"
            ]
        );
        assert_eq!(at(26).len(), 2);
        // Served somewhere, each is also skipped as a kind the scheduler does not read.
        assert_eq!(m.skipped.len(), 2);
    }

    #[test]
    fn a_huge_label_value_is_refused_and_cut() {
        let text = format!(
            "kind: Node\nmetadata: {{name: n1, labels: {{zone: {}}}}}\n",
            "a".repeat(100_000)
        );
        let got = refusals(&text);
        assert_eq!(got.len(), 1);
        assert!(
            got[0].contains("metadata.labels: Invalid value:"),
            "{}",
            got[0]
        );
        assert!(got[0].len() < 700, "{}", got[0].len());
    }

    #[test]
    fn duplicates_and_dangling_node_names() {
        let got = refusals(
            "kind: Node\nmetadata: {name: n1}\n---\nkind: Node\nmetadata: {name: n1}\n---\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: n9, containers: [{name: c}]}\n---\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n",
        );
        assert_eq!(
            got,
            [
                "f.yaml: node/n1: metadata.name: Duplicate value: \"n1\"",
                "f.yaml: pod/p: metadata.name: Duplicate value: \"p\"",
                "f.yaml: pod/p: spec.nodeName: Invalid value: \"n9\": no Node of this name in the files: the pod is bound to a node the cluster does not have",
            ]
        );
    }
}
