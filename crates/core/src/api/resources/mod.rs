//! Resource vectors as kube-scheduler keeps them (`framework.Resource`), and the
//! conversions from Kubernetes objects into them: a pod's requests (upstream's
//! `PodRequests`), a node's allocatable, and a pod's host ports.
//!
//! Quantities are summed exactly (as `resource.Quantity`s) and converted to integers
//! only at the end, as upstream does: two containers asking for `500m` cpu each ask
//! for 1000 milli-cpu, and two asking for `1n` memory ask for 1 byte, not 2.

mod names;
mod pod;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::NodeStatus;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;

use crate::api::quantity::{Quantity, QuantityError};

pub use names::{
    is_extended_resource_name, is_hugepage_resource_name, is_native_resource,
    is_prefixed_native_resource, is_scalar_resource_name,
};
pub use pod::{
    DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST, HostPort, NonZeroRequests,
    PodResourceRequests, RequestOptions, host_ports, pod_requests, pod_requests_with,
};

/// `cpu`.
pub const CPU: &str = "cpu";
/// `memory`.
pub(crate) const MEMORY: &str = "memory";
/// `ephemeral-storage`.
pub(crate) const EPHEMERAL_STORAGE: &str = "ephemeral-storage";
/// `pods`.
pub const PODS: &str = "pods";

/// A resource list could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResourceError {
    /// A quantity does not parse.
    #[error("{path}: {value:?}: {error}")]
    Quantity {
        /// Field path, e.g. `spec.containers[1].resources.requests[cpu]`.
        path: String,
        /// The text as written.
        value: String,
        /// What upstream's parser says about it.
        error: QuantityError,
    },
    /// A quantity is negative where the API server requires it not to be.
    #[error("{path}: Invalid value: {value:?}: must be greater than or equal to 0")]
    Negative {
        /// Field path, e.g. `spec.overhead[memory]`.
        path: String,
        /// The text as written.
        value: String,
    },
}

/// Result of this module's conversions.
pub type Result<T, E = ResourceError> = std::result::Result<T, E>;

/// A resource vector, as upstream's `framework.Resource`: milli-cpu, bytes of memory
/// and ephemeral storage, a pod count, and the scalar resources (extended resources,
/// hugepages, `*kubernetes.io/*` and `attachable-volumes-*`) by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Resources {
    /// CPU in thousandths of a core.
    pub milli_cpu: i64,
    /// Memory in bytes.
    pub memory: i64,
    /// Ephemeral storage in bytes.
    pub ephemeral_storage: i64,
    /// How many pods (the node's `pods` allocatable).
    pub allowed_pod_number: i64,
    /// Scalar resources, sorted by name, one entry per name. An entry may be zero: it
    /// still records that the resource was listed (a node that lists `example.com/x: 0`
    /// has the resource, with nothing allocatable).
    scalar: Vec<(Box<str>, i64)>,
}

impl Resources {
    /// The amount of scalar resource `name` (zero when absent).
    pub fn scalar(&self, name: &str) -> i64 {
        self.scalar_entry(name).unwrap_or(0)
    }

    /// The amount of scalar resource `name`, or `None` when it is not listed.
    pub(crate) fn scalar_entry(&self, name: &str) -> Option<i64> {
        self.scalar
            .binary_search_by(|(n, _)| (**n).cmp(name))
            .ok()
            .and_then(|i| self.scalar.get(i))
            .map(|(_, v)| *v)
    }

    /// The scalar resources, sorted by name.
    pub fn scalars(&self) -> impl ExactSizeIterator<Item = (&str, i64)> + '_ {
        self.scalar.iter().map(|(n, v)| (&**n, *v))
    }

    /// Sets scalar resource `name` to `value`, adding the entry if needed.
    pub(crate) fn set_scalar(&mut self, name: &str, value: i64) {
        match self.scalar.binary_search_by(|(n, _)| (**n).cmp(name)) {
            Ok(i) => {
                if let Some(entry) = self.scalar.get_mut(i) {
                    entry.1 = value;
                }
            }
            Err(i) => self.scalar.insert(i, (name.into(), value)),
        }
    }

    /// Adds `value` to scalar resource `name`, adding the entry if needed.
    pub(crate) fn add_scalar(&mut self, name: &str, value: i64) {
        let current = self.scalar(name);
        self.set_scalar(name, current.saturating_add(value));
    }

    /// Adds every dimension of `other` (saturating).
    pub fn add(&mut self, other: &Resources) {
        self.milli_cpu = self.milli_cpu.saturating_add(other.milli_cpu);
        self.memory = self.memory.saturating_add(other.memory);
        self.ephemeral_storage = self
            .ephemeral_storage
            .saturating_add(other.ephemeral_storage);
        self.allowed_pod_number = self
            .allowed_pod_number
            .saturating_add(other.allowed_pod_number);
        for (name, value) in other.scalars() {
            self.add_scalar(name, value);
        }
    }

    /// Subtracts every dimension of `other` (saturating); scalar entries stay listed.
    pub fn sub(&mut self, other: &Resources) {
        self.milli_cpu = self.milli_cpu.saturating_sub(other.milli_cpu);
        self.memory = self.memory.saturating_sub(other.memory);
        self.ephemeral_storage = self
            .ephemeral_storage
            .saturating_sub(other.ephemeral_storage);
        self.allowed_pod_number = self
            .allowed_pod_number
            .saturating_sub(other.allowed_pod_number);
        for (name, value) in other.scalars() {
            self.add_scalar(name, value.saturating_neg());
        }
    }

    /// Adds one named quantity the way upstream's `Resource.Add` does: cpu in
    /// milli-units, memory/ephemeral-storage/pods in units, scalar resources in units,
    /// anything else ignored.
    pub(crate) fn add_quantity(&mut self, name: &str, quantity: &Quantity) {
        match name {
            CPU => self.milli_cpu = self.milli_cpu.saturating_add(quantity.milli_value()),
            MEMORY => self.memory = self.memory.saturating_add(quantity.value()),
            EPHEMERAL_STORAGE => {
                self.ephemeral_storage = self.ephemeral_storage.saturating_add(quantity.value());
            }
            PODS => {
                self.allowed_pod_number = self.allowed_pod_number.saturating_add(quantity.value());
            }
            _ if is_scalar_resource_name(name) => self.add_scalar(name, quantity.value()),
            _ => {}
        }
    }
}

/// The node's allocatable resources (`status.allocatable`), as upstream's
/// `NewResource(node.Status.Allocatable)`. A node without allocatable has nothing,
/// not even room for a pod.
pub fn node_allocatable(status: &NodeStatus) -> Result<Resources> {
    let mut resources = Resources::default();
    if let Some(list) = &status.allocatable {
        for (name, quantity) in list {
            let q = parse_quantity(quantity, || format!("status.allocatable[{name}]"))?;
            resources.add_quantity(name, &q);
        }
    }
    Ok(resources)
}

/// Parses one API quantity, naming `path` on failure and rejecting negative values as
/// the API server's validation does.
pub(crate) fn parse_quantity(
    quantity: &ApiQuantity,
    path: impl FnOnce() -> String,
) -> Result<Quantity> {
    match Quantity::from_api(quantity) {
        Ok(q) if q.signum() < 0 => Err(ResourceError::Negative {
            path: path(),
            value: quantity.0.clone(),
        }),
        Ok(q) => Ok(q),
        Err(error) => Err(ResourceError::Quantity {
            path: path(),
            value: quantity.0.clone(),
            error,
        }),
    }
}

/// Parses a whole resource list (keys borrowed), naming `path[key]` on failure.
pub(crate) fn parse_list<'a>(
    list: Option<&'a BTreeMap<String, ApiQuantity>>,
    path: &dyn Fn() -> String,
) -> Result<BTreeMap<&'a str, Quantity>> {
    let mut parsed = BTreeMap::new();
    for (name, quantity) in list.into_iter().flatten() {
        let q = parse_quantity(quantity, || format!("{}[{name}]", path()))?;
        parsed.insert(name.as_str(), q);
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests;
