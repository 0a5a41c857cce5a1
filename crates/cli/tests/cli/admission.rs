//! What the API server does to pods before the scheduler sees them, on real manifests
//! (`fixtures/admission/`): defaults (SetDefaults_Pod) and admission plugins.

use super::{fixture, run, stderr, stdout};
use serde_json::Value;

const NODES: &str = "admission/nodes.yaml";

/// `simulate -o json` on the fixtures, with extra arguments; the report and exit code.
fn simulate(files: &[&str], extra: &[&str]) -> (Value, i32) {
    let mut args = vec!["simulate".to_string(), "-f".to_string(), fixture(NODES)];
    for f in files {
        args.push("-f".into());
        args.push(fixture(f));
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(["-o".to_string(), "json".to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run(&args);
    let v = serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| {
        panic!("not JSON ({e}): {}\n{}", stdout(&o), stderr(&o));
    });
    (v, o.status.code().unwrap_or(-1))
}

/// (pod, node or the pending message) of every simulated pod.
fn placements(v: &Value) -> Vec<(String, Result<String, String>)> {
    v["pods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let name = p["pod"].as_str().unwrap().to_string();
            match p["node"].as_str() {
                Some(n) => (name, Ok(n.to_string())),
                None => (name, Err(p["message"].as_str().unwrap_or("").to_string())),
            }
        })
        .collect()
}

#[test]
fn a_limits_only_container_requests_its_limits() {
    // 250Mi per node, 100Mi per registry pod once requests default to limits: two per
    // node, six in all; the seventh stays pending.
    let (v, code) = simulate(
        &["admission/rook-kube-registry.yaml"],
        &["--scale", "deployment/kube-system/kube-registry=7"],
    );
    assert_eq!(code, 1, "{v}");
    let placed = placements(&v);
    assert_eq!(placed.len(), 7);
    let pending: Vec<&String> = placed
        .iter()
        .filter_map(|(_, r)| r.as_ref().err())
        .collect();
    assert_eq!(pending.len(), 1, "{placed:?}");
    assert!(
        pending[0].contains("3 Insufficient memory"),
        "{}",
        pending[0]
    );
}

#[test]
fn host_network_container_ports_are_host_ports() {
    // Typha's containerPort 5473 becomes its hostPort: one pod per node, the 4th pending.
    let (v, code) = simulate(
        &["admission/calico-typha.yaml"],
        &["--scale", "deployment/kube-system/calico-typha=4"],
    );
    assert_eq!(code, 1, "{v}");
    let placed = placements(&v);
    let mut nodes: Vec<&String> = placed.iter().filter_map(|(_, r)| r.as_ref().ok()).collect();
    nodes.sort();
    assert_eq!(nodes, ["worker-a", "worker-b", "worker-c"], "{placed:?}");
    let pending: Vec<&String> = placed
        .iter()
        .filter_map(|(_, r)| r.as_ref().err())
        .collect();
    assert_eq!(pending.len(), 1);
    assert!(
        pending[0].contains("3 node(s) didn't have free ports for the requested pod ports"),
        "{}",
        pending[0]
    );
}

#[test]
fn a_limit_range_defaults_and_refuses_as_the_docs_show() {
    let (v, code) = simulate(&["admission/cpu-constraints.yaml"], &[]);
    assert_eq!(code, 1, "{v}");
    let refused = v["refused"].as_array().unwrap();
    assert_eq!(refused.len(), 1, "{v}");
    assert_eq!(refused[0]["pod"], "constraints-cpu-demo-2");
    assert_eq!(
        refused[0]["message"],
        "pods \"constraints-cpu-demo-2\" is forbidden: maximum cpu usage per Container is 800m, but limit is 1500m"
    );
    let placed = placements(&v);
    assert_eq!(placed.len(), 2, "{placed:?}");
    assert!(placed.iter().all(|(_, r)| r.is_ok()), "{placed:?}");
    // Pod 4 requests the LimitRange's max, 800m: two such pods need two nodes of 2 CPUs
    // next to the first pod's 500m, which `show`'s requests make visible; here, that it
    // was created at all and scheduled.
    assert!(placed.iter().any(|(p, _)| p == "constraints-cpu-demo-4"));
}

#[test]
fn an_invalid_limit_range_is_refused_by_itself() {
    let lr = super::temp(
        "bad-limit-range.yaml",
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr}\nspec:\n  limits: [{type: Container, min: {cpu: '2'}, max: {cpu: '1'}}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i, resources: {limits: {cpu: '3'}}}]}\n",
    );
    let o = run(&["simulate", "-f", &fixture(NODES), "-f", &lr, "-o", "json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let lines = v["refused_objects"].as_array().unwrap();
    assert_eq!(lines.len(), 3, "{v}");
    assert!(
        lines[0]
            .as_str()
            .unwrap()
            .ends_with("limitrange/lr: spec.limits[0].min[cpu]: Invalid value: 2: min value 2 is greater than max value 1"),
        "{lines:?}"
    );
    // The LimitRange being left out, the pod (limit 3 CPUs, request 3 by default) is
    // created, and no 2-CPU node holds it.
    let placed = placements(&v);
    assert_eq!(placed.len(), 1);
    assert!(placed[0].1.is_err(), "{placed:?}");
}

#[test]
fn a_workload_the_api_server_refuses_is_left_out_and_the_rest_simulates() {
    let d = super::temp(
        "bad-deployment.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: frontend}}\n    spec: {containers: [{name: c, image: nginx}]}\n",
    );
    let (v, code) = simulate(&["admission/rook-kube-registry.yaml"], &["-f", &d]);
    assert_eq!(code, 1, "{v}");
    let lines = v["refused_objects"].as_array().unwrap();
    assert_eq!(lines.len(), 1, "{v}");
    assert!(
        lines[0].as_str().unwrap().contains(
            "deployment/web: spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"frontend\"}: `selector` does not match template `labels`"
        ),
        "{lines:?}"
    );
    // The registry's three pods are simulated.
    assert_eq!(placements(&v).len(), 3);
}

#[test]
fn an_unserved_api_version_refuses_that_object_and_the_rest_simulates() {
    let pdb = super::temp(
        "old-pdb.yaml",
        "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: registry, namespace: kube-system}\nspec: {minAvailable: 1, selector: {matchLabels: {k8s-app: kube-registry}}}\n",
    );
    let (v, code) = simulate(&["admission/rook-kube-registry.yaml"], &["-f", &pdb]);
    assert_eq!(code, 1, "{v}");
    let lines = v["refused_objects"].as_array().unwrap();
    assert_eq!(lines.len(), 1, "{v}");
    assert!(
        lines[0].as_str().unwrap().ends_with(
            "poddisruptionbudget/registry (namespace kube-system): apiVersion: Invalid value: \"policy/v1beta1\": no matches for kind \"PodDisruptionBudget\" in version \"policy/v1beta1\": removed in Kubernetes 1.25 (use policy/v1)"
        ),
        "{lines:?}"
    );
    assert_eq!(placements(&v).len(), 3);
}

#[test]
fn a_resource_quota_stops_a_deployment_and_its_replica_set_reports_failed_create() {
    // `pods: 3` in namespace shop, one pod there already (read back: uid, node): two of
    // the Deployment's four pods are created, the other two refused in the quota
    // plugin's words, and the workload reports them as its controller's FailedCreate.
    let f = super::temp(
        "quota.yaml",
        "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: pod-count, namespace: shop}\nspec: {hard: {pods: '3', count/pods: '10'}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: old, namespace: shop, uid: u-old}\nspec: {nodeName: worker-a, containers: [{name: c, image: i}]}\nstatus: {phase: Running}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 4\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: nginx}]}\n",
    );
    let (v, code) = simulate(&[], &["-f", &f]);
    assert_eq!(code, 1, "{v}");
    let refused = v["refused"].as_array().unwrap();
    assert_eq!(refused.len(), 2, "{v}");
    for r in refused {
        let pod = r["pod"].as_str().unwrap();
        assert!(pod.starts_with("web-"), "{pod}");
        assert_eq!(
            r["message"],
            format!(
                "pods \"{}\" is forbidden: exceeded quota: pod-count, requested: pods=1, used: pods=3, limited: pods=3",
                // Named by its generateName prefix, as the API server names it.
                &pod[..=pod.rfind('-').unwrap_or(0)]
            )
        );
    }
    let Some(web) = v["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == "web")
    else {
        panic!("no workload web: {v}")
    };
    assert_eq!(web["pods"], 2, "{web}");
    let events: Vec<String> = web["failed_create"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_string())
        .collect();
    let want: Vec<String> = refused
        .iter()
        .map(|r| format!("Error creating: {}", r["message"].as_str().unwrap()))
        .collect();
    assert_eq!(events, want);
    // Placed: the pod already there and the two admitted.
    assert_eq!(placements(&v).len(), 2, "{v}");
}

#[test]
fn an_invalid_resource_quota_is_refused_by_itself_and_limits_nothing() {
    let f = super::temp(
        "bad-quota.yaml",
        "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec: {hard: {pods: '0', limits.pods: '1'}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n",
    );
    let (v, code) = simulate(&[], &["-f", &f]);
    assert_eq!(code, 1, "{v}");
    let lines = v["refused_objects"].as_array().unwrap();
    assert_eq!(lines.len(), 2, "{v}");
    assert!(
        lines[0].as_str().unwrap().ends_with(
            "resourcequota/q: spec.hard[limits.pods]: Invalid value: limits.pods: must be a standard resource type or fully qualified"
        ),
        "{lines:?}"
    );
    // Left out, the quota (pods: 0) does not refuse the pod.
    assert!(v["refused"].as_array().is_none_or(|r| r.is_empty()), "{v}");
    assert_eq!(placements(&v).len(), 1);
}

#[test]
fn an_api_version_the_chosen_release_does_not_serve_yet_or_any_more_is_refused() {
    let f = super::temp(
        "versioned.yaml",
        "apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: FlowSchema\nmetadata: {name: fs}\n---\napiVersion: autoscaling/v2beta2\nkind: HorizontalPodAutoscaler\nmetadata: {name: registry, namespace: kube-system}\n",
    );
    let (old, code) = simulate(
        &["admission/rook-kube-registry.yaml"],
        &["-f", &f, "--kubernetes-version", "1.25"],
    );
    assert_eq!(code, 1, "{old}");
    let lines = old["refused_objects"].as_array().unwrap();
    assert_eq!(lines.len(), 1, "{old}");
    assert!(
        lines[0].as_str().unwrap().ends_with(
            "flowschema/fs: apiVersion: Invalid value: \"flowcontrol.apiserver.k8s.io/v1\": no matches for kind \"FlowSchema\" in version \"flowcontrol.apiserver.k8s.io/v1\": introduced in Kubernetes 1.29 (use flowcontrol.apiserver.k8s.io/v1beta2)"
        ),
        "{lines:?}"
    );
    let (new, _) = simulate(&["admission/rook-kube-registry.yaml"], &["-f", &f]);
    let lines = new["refused_objects"].as_array().unwrap();
    assert_eq!(lines.len(), 1, "{new}");
    assert!(
        lines[0].as_str().unwrap().ends_with(
            "horizontalpodautoscaler/registry (namespace kube-system): apiVersion: Invalid value: \"autoscaling/v2beta2\": no matches for kind \"HorizontalPodAutoscaler\" in version \"autoscaling/v2beta2\": removed in Kubernetes 1.26 (use autoscaling/v2)"
        ),
        "{lines:?}"
    );
    // Either way, the registry's three pods are simulated.
    assert_eq!(placements(&old).len(), 3);
    assert_eq!(placements(&new).len(), 3);
}

#[test]
fn pods_claiming_devices_are_noted_by_name_not_silently_placed() {
    let f = super::temp(
        "dra.yaml",
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: one-gpu}\nspec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: trainer}\nspec:\n  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]\n  containers: [{name: c, image: i}]\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: infer}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: infer}}\n  template:\n    metadata: {labels: {app: infer}}\n    spec:\n      resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]\n      containers: [{name: c, image: i}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: plain}\nspec: {containers: [{name: c, image: i}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: gang}\nspec:\n  schedulingGroup: {podGroupName: trainers}\n  containers: [{name: c, image: i}]\n",
    );
    let (v, code) = simulate(&[], &["-f", &f]);
    assert_eq!(code, 0, "{v}");
    let notes: Vec<&str> = v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    let dra: Vec<&&str> = notes
        .iter()
        .filter(|n| n.contains("spec.resourceClaims: not modelled: the DynamicResources plugin"))
        .collect();
    assert_eq!(dra.len(), 1, "{notes:?}");
    assert!(dra[0].contains("(3 objects: "), "{}", dra[0]);
    assert!(dra[0].contains("pod/trainer"), "{}", dra[0]);
    assert!(!dra[0].contains("pod/plain"), "{}", dra[0]);
    assert!(
        notes.iter().any(|n| n.contains(
            "resourceclaimtemplate/one-gpu: skipped: kind ResourceClaimTemplate (resource.k8s.io/v1) read by the scheduler (DynamicResources) but not modelled: no device is allocated"
        )),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.ends_with(
            "pod/gang: spec.schedulingGroup: not modelled: gang scheduling (a PodGroup's pods placed together or not at all) is not simulated, so the pod is placed on its own"
        )),
        "{notes:?}"
    );
    assert_eq!(placements(&v).len(), 5);
}

/// A pod asking for an extended resource no node lists (a device a DRA DeviceClass may
/// provide through `extendedResourceName`) is named in a note, not only left Pending.
#[test]
fn an_extended_resource_no_node_lists_is_noted_by_pod() {
    let f = super::temp(
        "dra-extended.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4', memory: 8Gi, pods: '110', nvidia.com/gpu: '1'}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: trainer}\nspec:\n  containers: [{name: c, image: i, resources: {limits: {example.com/gpu: '1'}}}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: cuda}\nspec:\n  containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: '1'}}}]\n",
    );
    let (v, code) = simulate(&[], &["-f", &f]);
    assert_eq!(code, 1, "{v}");
    let notes: Vec<&str> = v["notes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let noted: Vec<&&str> = notes
        .iter()
        .filter(|n| n.contains("which no node lists in status.allocatable"))
        .collect();
    assert_eq!(noted.len(), 1, "{notes:?}");
    assert!(
        noted[0].contains("pod/trainer: asks for example.com/gpu,"),
        "{}",
        noted[0]
    );
    assert!(!noted[0].contains("pod/cuda"), "{}", noted[0]);
}
