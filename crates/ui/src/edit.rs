//! A what-if's change to a workload's pod template (`topologySpreadConstraints`), made
//! on a copy of the loaded objects before they are admitted and simulated again: the
//! API server's validation then judges the new values as it would a real update.

use crate::Error;
use crate::views::ConstraintChange;
use k8s_openapi::api::core::v1::PodSpec;
use topospread_k8s::load::{Loaded, Object};

/// `KIND/NAME` or `KIND/NAMESPACE/NAME` as the canonical kind, namespace and name.
fn workload_ref(text: &str) -> Result<(&'static str, &str, &str), Error> {
    let parts: Vec<&str> = text.split('/').collect();
    let (kind, ns, name) = match parts.as_slice() {
        [kind, name] => (*kind, "default", *name),
        [kind, ns, name] => (*kind, *ns, *name),
        _ => {
            return Err(Error::Request(format!(
                "constraints: workload {text:?}: want KIND/NAME or KIND/NAMESPACE/NAME (deployment/web)"
            )));
        }
    };
    let kind = match kind.to_ascii_lowercase().as_str() {
        "deployment" | "deploy" => "Deployment",
        "replicaset" | "rs" => "ReplicaSet",
        "statefulset" | "sts" => "StatefulSet",
        "daemonset" | "ds" => "DaemonSet",
        "job" => "Job",
        "replicationcontroller" | "rc" => "ReplicationController",
        other => {
            return Err(Error::Request(format!(
                "constraints: workload {text:?}: kind {other:?} has no pod template to change"
            )));
        }
    };
    Ok((kind, ns, name))
}

/// The pod template's spec of a workload object named `kind ns/name`.
fn template_spec<'a>(
    object: &'a mut Object,
    kind: &str,
    ns: &str,
    name: &str,
) -> Option<&'a mut Option<PodSpec>> {
    let (meta, spec) = match object {
        Object::Deployment(d) if kind == "Deployment" => (&d.metadata, &mut d.spec.template.spec),
        Object::ReplicaSet(r) if kind == "ReplicaSet" => {
            (&r.metadata, &mut r.spec.template.as_mut()?.spec)
        }
        Object::StatefulSet(s) if kind == "StatefulSet" => (&s.metadata, &mut s.spec.template.spec),
        Object::DaemonSet(d) if kind == "DaemonSet" => (&d.metadata, &mut d.spec.template.spec),
        Object::Job(j) if kind == "Job" => (&j.metadata, &mut j.spec.as_mut()?.template.spec),
        Object::ReplicationController(r) if kind == "ReplicationController" => {
            (&r.metadata, &mut r.spec.as_mut()?.template.as_mut()?.spec)
        }
        _ => return None,
    };
    let same =
        meta.name.as_deref() == Some(name) && meta.namespace.as_deref().unwrap_or("default") == ns;
    same.then_some(spec)
}

/// Applies `change` to the workload it names among `objects`.
pub(crate) fn apply(objects: &mut [Loaded], change: &ConstraintChange) -> Result<(), Error> {
    let (kind, ns, name) = workload_ref(&change.workload)?;
    let what = format!("{} {ns}/{name}", kind.to_ascii_lowercase());
    let Some(spec) = objects
        .iter_mut()
        .find_map(|l| template_spec(&mut l.object, kind, ns, name))
    else {
        return Err(Error::Request(format!(
            "constraints: {what}: not found in the cluster"
        )));
    };
    let constraints = spec
        .as_mut()
        .and_then(|s| s.topology_spread_constraints.as_mut());
    let Some(c) = constraints.and_then(|cs| cs.get_mut(change.index)) else {
        return Err(Error::Request(format!(
            "constraints: {what}: its template has no topologySpreadConstraints[{}]",
            change.index
        )));
    };
    if change.max_skew.is_none() && change.when_unsatisfiable.is_none() {
        return Err(Error::Request(format!(
            "constraints: {what}: give maxSkew or whenUnsatisfiable"
        )));
    }
    if let Some(skew) = change.max_skew {
        c.max_skew = skew;
    }
    if let Some(w) = &change.when_unsatisfiable {
        c.when_unsatisfiable.clone_from(w);
    }
    Ok(())
}
