//! cluster-autoscaler's binpacking estimate, for comparison: one template's nodes, pods
//! packed first-fit by resources and host ports alone (no spread, no affinity between
//! pods), largest first, a node opened whenever a pod fits none of those opened.

use super::hosts::Hosts;
use super::trial::Trials;
use super::{CapacityError, CapacityRequest, Slot};
use std::collections::HashSet;
use topospread::api::resources::Resources;
use topospread::snapshot::PodId;

/// What the binpacking estimate asks for with one template, and what the scheduler
/// makes of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GreedyEstimate {
    /// The template.
    pub template: String,
    /// Nodes the estimate adds (round-robin over the template's zones).
    pub nodes: u32,
    /// Pending pods it packed.
    pub packed: usize,
    /// Pods still Pending when the scheduler runs with those nodes.
    pub pending_after: usize,
    /// The estimate hit the template's `topospread.io/max-count`.
    pub capped: bool,
}

struct Bin {
    free: Resources,
    ports: HashSet<(Box<str>, Box<str>, i32)>,
}

/// The estimate for each template that can host a pending pod, each simulated.
pub(crate) fn estimates(
    req: &CapacityRequest<'_>,
    slots: &[Slot],
    hosts: &Hosts,
    trials: &mut Trials<'_>,
    pending: &[PodId],
) -> Result<Vec<GreedyEstimate>, CapacityError> {
    let mut out = Vec::new();
    if pending.is_empty() {
        return Ok(out);
    }
    for (t, template) in req.templates.iter().enumerate() {
        let mine: Vec<usize> = (0..slots.len())
            .filter(|&s| slots[s].template == t)
            .collect();
        let pods: Vec<usize> = (0..hosts.pods.len())
            .filter(|&i| hosts.base_pending[i] && mine.iter().any(|&s| hosts.hosts(i, s)))
            .collect();
        if pods.is_empty() {
            continue;
        }
        let alloc = &template.node.allocatable;
        let score = |r: &Resources| {
            let cpu = r.milli_cpu as f64 / alloc.milli_cpu.max(1) as f64;
            let mem = r.memory as f64 / alloc.memory.max(1) as f64;
            cpu + mem
        };
        let mut order = pods.clone();
        order.sort_by(|a, b| {
            score(&hosts.requests[*b])
                .total_cmp(&score(&hosts.requests[*a]))
                .then(a.cmp(b))
        });
        let max = template.max_count.unwrap_or(super::MAX_COUNT) as usize;
        let mut bins: Vec<Bin> = Vec::new();
        let mut packed = 0;
        let mut capped = false;
        for i in order {
            let Some(pod) = req.snapshot.pod(hosts.pods[i]) else {
                continue;
            };
            let r = &hosts.requests[i];
            let ports: Vec<(Box<str>, Box<str>, i32)> = pod
                .host_ports
                .iter()
                .map(|p| (p.ip.clone(), p.protocol.clone(), p.port))
                .collect();
            let fits = |b: &Bin| {
                b.free.allowed_pod_number >= 1
                    && b.free.milli_cpu >= r.milli_cpu
                    && b.free.memory >= r.memory
                    && b.free.ephemeral_storage >= r.ephemeral_storage
                    && r.scalars().all(|(n, v)| b.free.scalar(n) >= v)
                    && ports.iter().all(|p| !b.ports.contains(p))
            };
            let at = match bins.iter().position(fits) {
                Some(at) => at,
                None if bins.len() < max && fits_shared(req, t, bins.len() + 1) => {
                    bins.push(Bin {
                        free: alloc.clone(),
                        ports: HashSet::new(),
                    });
                    bins.len() - 1
                }
                None => {
                    capped = true;
                    continue;
                }
            };
            let bin = &mut bins[at];
            if !fits(bin) {
                continue;
            }
            bin.free.sub(r);
            bin.free.allowed_pod_number -= 1;
            bin.ports.extend(ports);
            packed += 1;
        }
        let nodes = bins.len() as u32;
        let mut v = vec![0u32; slots.len()];
        let usable: Vec<usize> = mine
            .iter()
            .copied()
            .filter(|&s| pods.iter().any(|&i| hosts.hosts(i, s)))
            .collect();
        for k in 0..nodes as usize {
            v[usable[k % usable.len()]] += 1;
        }
        let trial = trials.run(slots, &v)?;
        out.push(GreedyEstimate {
            template: template.name.clone(),
            nodes,
            packed,
            pending_after: trial.pending.len(),
            capped,
        });
    }
    Ok(out)
}

/// Whether `n` nodes of template `t` alone keep its shared limit.
fn fits_shared(req: &CapacityRequest<'_>, t: usize, n: usize) -> bool {
    let mut per_template = vec![0u32; req.templates.len()];
    per_template[t] = u32::try_from(n).unwrap_or(u32::MAX);
    super::template::within_shared_limits(&req.templates, &per_template)
}
