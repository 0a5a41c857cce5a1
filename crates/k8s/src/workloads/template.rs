//! Pod templates: checked with the API server's rules, then turned into the pod a
//! controller would create (without its name).

use super::{Expander, Owner};
use crate::load::{Object, Source};
use crate::validation::{ApiServerFeatures, Workload, template_pods_create};
use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use topospread::convert;

impl Expander<'_> {
    /// The API server's rules for pods made from the template (RULES.md); the first
    /// error is reported with its path and the workload is not expanded.
    pub(super) fn template_valid(&mut self, s: &Source, object: &Object) -> bool {
        // Pods are admitted on their own; CronJobs are not expanded.
        if matches!(object, Object::Pod(_) | Object::CronJob(_)) {
            return true;
        }
        let Some(workload) = Workload::from_object(object) else {
            return true;
        };
        let errors = template_pods_create(&workload, &ApiServerFeatures::default());
        let Some(e) = errors.first() else {
            return true;
        };
        let name = match object {
            Object::Deployment(o) => o.metadata.name.clone(),
            Object::ReplicaSet(o) => o.metadata.name.clone(),
            Object::ReplicationController(o) => o.metadata.name.clone(),
            Object::StatefulSet(o) => o.metadata.name.clone(),
            Object::DaemonSet(o) => o.metadata.name.clone(),
            Object::Job(o) => o.metadata.name.clone(),
            _ => None,
        };
        let message = e.body();
        let object = format!(
            "{}/{}",
            object.kind().to_lowercase(),
            name.unwrap_or_default()
        );
        self.error(s, object, &e.field, message);
        false
    }

    /// The pod a template makes (without name), or an error naming the template field.
    pub(super) fn template_pod(
        &mut self,
        s: &Source,
        owner: &Owner<'_>,
        template: &PodTemplateSpec,
        ns: &str,
    ) -> Option<Pod> {
        let tmeta = template.metadata.clone().unwrap_or_default();
        let Some(spec) = template.spec.clone() else {
            self.error(
                s,
                owner.object(),
                "spec.template.spec",
                "Required value".into(),
            );
            return None;
        };
        let pod = Pod {
            metadata: ObjectMeta {
                name: Some(format!("{}-template", owner.name())),
                namespace: Some(ns.to_string()),
                labels: tmeta.labels,
                annotations: tmeta.annotations,
                owner_references: Some(vec![owner.reference()]),
                ..Default::default()
            },
            spec: Some(spec),
            status: None,
        };
        let mut scratch = topospread::api::Symbols::default();
        if let Err(e) = convert::pod(&pod, &mut scratch) {
            let field = match e.field.strip_prefix("spec.") {
                Some(rest) => format!("spec.template.spec.{rest}"),
                None => format!("spec.template.{}", e.field),
            };
            self.error(s, owner.object(), &field, e.message);
            return None;
        }
        let mut pod = pod;
        pod.metadata.name = None;
        Some(pod)
    }
}
