//! Builders for Kubernetes objects, with named methods, for tests, benchmarks and
//! generated workloads. They build k8s-openapi types, so everything they make goes
//! through the same conversion as objects read from files.

use k8s_openapi::api::core::v1::{
    Container, Node, NodeSpec, NodeStatus, Pod, PodSpec, ResourceRequirements, Taint,
    TopologySpreadConstraint,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use std::collections::BTreeMap;

/// Builds a v1 Node.
#[derive(Clone, Debug, Default)]
pub struct NodeBuilder(Node);

impl NodeBuilder {
    /// A node with this name.
    pub fn new(name: &str) -> Self {
        Self(Node {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                ..ObjectMeta::default()
            },
            ..Node::default()
        })
    }

    /// Adds a label.
    pub fn label(mut self, key: &str, value: &str) -> Self {
        self.0
            .metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(key.to_string(), value.to_string());
        self
    }

    /// Sets an allocatable (and capacity) quantity, e.g. `("cpu", "4")`.
    pub fn allocatable(mut self, resource: &str, quantity: &str) -> Self {
        let status = self.0.status.get_or_insert_with(NodeStatus::default);
        for map in [&mut status.allocatable, &mut status.capacity] {
            map.get_or_insert_with(BTreeMap::new)
                .insert(resource.to_string(), Quantity(quantity.to_string()));
        }
        self
    }

    /// Adds a taint.
    pub fn taint(mut self, key: &str, value: &str, effect: &str) -> Self {
        self.0
            .spec
            .get_or_insert_with(NodeSpec::default)
            .taints
            .get_or_insert_with(Vec::new)
            .push(Taint {
                key: key.to_string(),
                value: (!value.is_empty()).then(|| value.to_string()),
                effect: effect.to_string(),
                ..Taint::default()
            });
        self
    }

    /// The node.
    pub fn build(self) -> Node {
        self.0
    }
}

/// Builds a v1 Pod with one container.
#[derive(Clone, Debug, Default)]
pub struct PodBuilder(Pod);

impl PodBuilder {
    /// A pod with this name in `default`.
    pub fn new(name: &str) -> Self {
        Self(Pod {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                namespace: Some("default".to_string()),
                ..ObjectMeta::default()
            },
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: "c".to_string(),
                    image: Some("registry.k8s.io/pause:3.10".to_string()),
                    ..Container::default()
                }],
                ..PodSpec::default()
            }),
            ..Pod::default()
        })
    }

    fn spec(&mut self) -> &mut PodSpec {
        self.0.spec.get_or_insert_with(PodSpec::default)
    }

    /// Sets the namespace.
    pub fn namespace(mut self, namespace: &str) -> Self {
        self.0.metadata.namespace = Some(namespace.to_string());
        self
    }

    /// Adds a label.
    pub fn label(mut self, key: &str, value: &str) -> Self {
        self.0
            .metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(key.to_string(), value.to_string());
        self
    }

    /// Binds the pod to a node (`spec.nodeName`).
    pub fn node(mut self, node: &str) -> Self {
        self.spec().node_name = Some(node.to_string());
        self
    }

    /// Adds a container request, e.g. `("cpu", "100m")`.
    pub fn request(mut self, resource: &str, quantity: &str) -> Self {
        if let Some(c) = self.spec().containers.first_mut() {
            c.resources
                .get_or_insert_with(ResourceRequirements::default)
                .requests
                .get_or_insert_with(BTreeMap::new)
                .insert(resource.to_string(), Quantity(quantity.to_string()));
        }
        self
    }

    /// Adds a topology spread constraint selecting `match_labels`.
    pub fn spread(
        mut self,
        max_skew: i32,
        topology_key: &str,
        when_unsatisfiable: &str,
        match_labels: &[(&str, &str)],
    ) -> Self {
        let selector = LabelSelector {
            match_labels: Some(
                match_labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            ..LabelSelector::default()
        };
        self.spec()
            .topology_spread_constraints
            .get_or_insert_with(Vec::new)
            .push(TopologySpreadConstraint {
                max_skew,
                topology_key: topology_key.to_string(),
                when_unsatisfiable: when_unsatisfiable.to_string(),
                label_selector: Some(selector),
                ..TopologySpreadConstraint::default()
            });
        self
    }

    /// Sets the last spread constraint's node inclusion policies.
    pub fn inclusion_policies(mut self, node_affinity: &str, node_taints: &str) -> Self {
        if let Some(c) = self
            .spec()
            .topology_spread_constraints
            .as_mut()
            .and_then(|cs| cs.last_mut())
        {
            c.node_affinity_policy = Some(node_affinity.to_string());
            c.node_taints_policy = Some(node_taints.to_string());
        }
        self
    }

    /// Sets the controlling owner.
    pub fn owner(mut self, api_version: &str, kind: &str, name: &str) -> Self {
        self.0
            .metadata
            .owner_references
            .get_or_insert_with(Vec::new)
            .push(OwnerReference {
                api_version: api_version.to_string(),
                kind: kind.to_string(),
                name: name.to_string(),
                uid: format!("uid-{name}"),
                controller: Some(true),
                ..OwnerReference::default()
            });
        self
    }

    /// The pod.
    pub fn build(self) -> Pod {
        self.0
    }
}
