//! The defaults the API server writes into a pod when it decodes it, before admission
//! (`pkg/apis/core/v1/defaults.go` `SetDefaults_Pod`), for the fields the scheduler
//! reads:
//! - every container and init container with limits gets, for each limited resource it
//!   does not request, a request equal to its limit (only pods, not pod templates, and
//!   not ephemeral containers, which may not set resources);
//! - under `hostNetwork: true`, every container and init container port without a
//!   `hostPort` gets its `containerPort` as host port (`defaultHostNetworkPorts`).
//!
//! Defaulting is idempotent: a pod read back from a cluster already carries them.

use k8s_openapi::api::core::v1::{Container, Pod};

/// Applies `SetDefaults_Pod`'s scheduler-relevant defaults to `pod` (see the module
/// docs).
pub fn set_pod_defaults(pod: &mut Pod) {
    let Some(spec) = pod.spec.as_mut() else {
        return;
    };
    let host_network = spec.host_network == Some(true);
    let init = spec.init_containers.iter_mut().flatten();
    for c in spec.containers.iter_mut().chain(init) {
        default_requests_from_limits(c);
        if host_network {
            default_host_network_ports(c);
        }
    }
}

/// A request for every limited resource the container does not request.
fn default_requests_from_limits(c: &mut Container) {
    let Some(resources) = c.resources.as_mut() else {
        return;
    };
    let Some(limits) = resources.limits.as_ref() else {
        return;
    };
    let requests = resources.requests.get_or_insert_with(Default::default);
    for (name, limit) in limits {
        requests
            .entry(name.clone())
            .or_insert_with(|| limit.clone());
    }
}

/// `hostPort` defaulted to `containerPort` where it is unset or 0.
fn default_host_network_ports(c: &mut Container) {
    for port in c.ports.iter_mut().flatten() {
        if port.host_port.is_none_or(|p| p == 0) {
            port.host_port = Some(port.container_port);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(yaml: &str) -> Pod {
        serde_saphyr::from_str(yaml).expect("the test object deserializes")
    }

    #[test]
    fn requests_default_to_limits_for_containers_and_init_containers() {
        let mut p = pod(concat!(
            "metadata: {name: registry}\n",
            "spec:\n",
            "  initContainers: [{name: i, resources: {limits: {cpu: 500m}}}]\n",
            "  containers:\n",
            "  - {name: a, resources: {limits: {memory: 100Mi}}}\n",
            "  - {name: b, resources: {limits: {cpu: '2', memory: 1Gi}, requests: {cpu: 100m}}}\n",
            "  - {name: c}\n",
        ));
        set_pod_defaults(&mut p);
        let spec = p.spec.as_ref().expect("spec");
        let requests = |c: &Container| {
            c.resources
                .as_ref()
                .and_then(|r| r.requests.as_ref())
                .map(|r| {
                    r.iter()
                        .map(|(k, v)| format!("{k}={}", v.0))
                        .collect::<Vec<_>>()
                })
        };
        assert_eq!(
            requests(&spec.containers[0]),
            Some(vec!["memory=100Mi".into()])
        );
        assert_eq!(
            requests(&spec.containers[1]),
            Some(vec!["cpu=100m".into(), "memory=1Gi".into()])
        );
        assert_eq!(requests(&spec.containers[2]), None);
        let init = &spec.init_containers.as_ref().expect("init")[0];
        assert_eq!(requests(init), Some(vec!["cpu=500m".into()]));
    }

    #[test]
    fn host_network_ports_become_host_ports() {
        let text = concat!(
            "metadata: {name: typha}\n",
            "spec:\n",
            "  hostNetwork: true\n",
            "  initContainers: [{name: i, ports: [{containerPort: 9000}]}]\n",
            "  containers:\n",
            "  - name: c\n",
            "    ports: [{containerPort: 5473, name: typha}, {containerPort: 9093, hostPort: 19093}]\n",
        );
        let mut p = pod(text);
        set_pod_defaults(&mut p);
        let spec = p.spec.as_ref().expect("spec");
        let ports: Vec<Option<i32>> = spec.containers[0]
            .ports
            .iter()
            .flatten()
            .map(|p| p.host_port)
            .collect();
        assert_eq!(ports, [Some(5473), Some(19093)]);
        let init = &spec.init_containers.as_ref().expect("init")[0];
        assert_eq!(init.ports.as_ref().expect("ports")[0].host_port, Some(9000));
        // Without hostNetwork, container ports stay container ports.
        let mut p = pod(&text.replace("hostNetwork: true", "hostNetwork: false"));
        set_pod_defaults(&mut p);
        let spec = p.spec.as_ref().expect("spec");
        assert_eq!(
            spec.containers[0].ports.as_ref().expect("ports")[0].host_port,
            None
        );
    }
}
