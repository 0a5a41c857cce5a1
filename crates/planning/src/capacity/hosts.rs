//! Which slots could host each pending pod on an empty node of its template: node
//! selector and required affinity, taints (NoSchedule, NoExecute), resources, names.
//! A pod no slot can host stays Pending however many nodes are added.

use super::{CapacityRequest, NodeTemplate, Slot, ZONE_KEY, ZONE_KEY_BETA};
use topospread::Feature;
use topospread::api::resources::Resources;
use topospread::api::{Labels, TaintEffect, find_untolerated_taint};
use topospread::snapshot::PodId;

/// The unbound pods and the slots each could go to.
pub(crate) struct Hosts {
    /// The pods unbound in the request's cluster (the base run may place some).
    pub(crate) pods: Vec<PodId>,
    /// Per pod: still pending after the base run (nothing added).
    pub(crate) base_pending: Vec<bool>,
    /// Per pod, per slot: could an empty node of the slot host it.
    host: Vec<Vec<bool>>,
    /// Per pod: why no slot can host it.
    unhostable: Vec<Option<String>>,
    /// Per pod: its cheapest template among those that can host it.
    assigned: Vec<Option<usize>>,
    /// Per pod: its requests.
    pub(crate) requests: Vec<Resources>,
    /// Whether a pending pod could preempt a bound one (then room is not a bound).
    preemption: bool,
    /// Per slot, its template.
    slot_templates: Vec<usize>,
}

impl Hosts {
    pub(crate) fn new(req: &CapacityRequest<'_>, slots: &[Slot], base_pending: &[PodId]) -> Self {
        let snapshot = req.snapshot;
        let pending = super::trial::pending_pods(snapshot);
        let pending = &pending;
        let mut symbols = snapshot.symbols().clone();
        let comparison = req
            .features
            .enabled(Feature::TaintTolerationComparisonOperators);
        let slot_labels: Vec<Labels> = slots
            .iter()
            .map(|s| {
                let node = &req.templates[s.template].node;
                let mut pairs: Vec<_> = node.labels.iter().collect();
                if let Some(z) = &s.zone {
                    let v = symbols.intern(z);
                    pairs.push((symbols.intern(ZONE_KEY), v));
                    pairs.push((symbols.intern(ZONE_KEY_BETA), v));
                }
                Labels::from_pairs(pairs)
            })
            .collect();
        let mut host = Vec::with_capacity(pending.len());
        let mut unhostable = Vec::with_capacity(pending.len());
        let mut assigned = Vec::with_capacity(pending.len());
        let mut requests = Vec::with_capacity(pending.len());
        // A pending pod may preempt a pod of lower priority, bound now or bound by the
        // run before it (pending pods of mixed priorities).
        let min_bound_priority = snapshot
            .pods()
            .filter(|(id, p)| snapshot.pod_node(*id).is_some() || !p.terminating)
            .map(|(_, p)| p.priority)
            .min();
        let mut preemption = false;
        for &id in pending {
            let Some(pod) = snapshot.pod(id) else {
                host.push(vec![false; slots.len()]);
                unhostable.push(Some("the pod is gone".to_string()));
                assigned.push(None);
                requests.push(Resources::default());
                continue;
            };
            if !pod.preemption_never && min_bound_priority.is_some_and(|m| pod.priority > m) {
                preemption = true;
            }
            let mut why: Vec<String> = Vec::new();
            let row: Vec<bool> = slots
                .iter()
                .zip(&slot_labels)
                .map(|(s, labels)| {
                    let t = &req.templates[s.template];
                    match check(pod, t, labels, &symbols, comparison) {
                        Ok(()) => true,
                        Err(e) => {
                            let line = format!("{}: {e}", t.name);
                            if !why.contains(&line) {
                                why.push(line);
                            }
                            false
                        }
                    }
                })
                .collect();
            let cheapest = row
                .iter()
                .enumerate()
                .filter(|(_, ok)| **ok)
                .map(|(s, _)| slots[s].template)
                .min_by_key(|t| (req.templates[*t].price_micros, *t));
            unhostable.push(if cheapest.is_some() {
                None
            } else if !pod.scheduling_gates.is_empty() {
                Some(format!(
                    "scheduling gates {} hold it back",
                    pod.scheduling_gates.join(",")
                ))
            } else {
                Some(format!("no template can host it ({})", why.join("; ")))
            });
            host.push(row);
            assigned.push(cheapest);
            requests.push(pod.requests.requested.clone());
        }
        Self {
            base_pending: pending.iter().map(|p| base_pending.contains(p)).collect(),
            pods: pending.to_vec(),
            host,
            unhostable,
            assigned,
            requests,
            preemption,
            slot_templates: slots.iter().map(|s| s.template).collect(),
        }
    }

    /// The pods pending after the base run that no slot can host.
    pub(crate) fn unhostable(&self) -> impl Iterator<Item = PodId> + '_ {
        self.pods
            .iter()
            .zip(&self.unhostable)
            .zip(&self.base_pending)
            .filter(|((_, u), b)| u.is_some() && **b)
            .map(|((p, _), _)| *p)
    }

    /// Of [`Self::unhostable`], the pods that stay Pending in every run: gated, or
    /// fitting no cluster node's free room (room only shrinks while a run binds pods,
    /// when none can be preempted). The others may bind to a cluster node once added
    /// nodes draw other pods away.
    pub(crate) fn surely_unplaceable(&self, req: &CapacityRequest<'_>) -> usize {
        let snapshot = req.snapshot;
        self.pods
            .iter()
            .enumerate()
            .filter(|(i, _)| self.unhostable[*i].is_some() && self.base_pending[*i])
            .filter(|(i, id)| {
                let Some(pod) = snapshot.pod(**id) else {
                    return true;
                };
                if !pod.scheduling_gates.is_empty() {
                    return true;
                }
                if self.preemption {
                    return false;
                }
                let r = &self.requests[*i];
                !snapshot.nodes().iter().any(|n| {
                    let mut room = n.node.allocatable.clone();
                    room.sub(n.requested());
                    n.node.allocatable.allowed_pod_number > n.pods().len() as i64
                        && r.milli_cpu <= room.milli_cpu
                        && r.memory <= room.memory
                        && r.ephemeral_storage <= room.ephemeral_storage
                        && r.scalars().all(|(name, v)| v <= room.scalar(name))
                })
            })
            .count()
    }

    /// Why `id` can go to no slot, if it cannot.
    pub(crate) fn why_unhostable(&self, id: PodId) -> Option<&str> {
        let i = self.pods.iter().position(|p| *p == id)?;
        self.unhostable[i].as_deref()
    }

    /// Whether pod `i` (of [`Self::pods`]) could go to slot `s`.
    pub(crate) fn hosts(&self, i: usize, s: usize) -> bool {
        self.host[i][s]
    }

    /// Per template, the pending pods it is the cheapest host of.
    pub(crate) fn demand_per_template(
        &self,
        _slots: &[Slot],
        templates: &[NodeTemplate],
    ) -> Vec<usize> {
        let mut d = vec![0usize; templates.len()];
        for (t, _) in self
            .assigned
            .iter()
            .zip(&self.base_pending)
            .filter(|(_, b)| **b)
        {
            if let Some(t) = t {
                d[*t] += 1;
            }
        }
        d
    }

    /// Whether a pending pod could preempt a bound one (evictions free room and lower
    /// spread counts, so no bound from room or counts holds).
    pub(crate) fn preemption(&self) -> bool {
        self.preemption
    }

    /// Pods whose cheapest template is slot `s`'s and that `s` can host.
    pub(crate) fn capacity(&self, s: usize) -> u32 {
        self.pods_for(s, true)
    }

    /// Pods slot `s` can host.
    pub(crate) fn capacity_any(&self, s: usize) -> u32 {
        self.pods_for(s, false)
    }

    fn pods_for(&self, s: usize, cheapest_only: bool) -> u32 {
        let slot_template = self.slot_templates.get(s).copied();
        (0..self.pods.len())
            .filter(|&i| self.host[i][s] && (!cheapest_only || self.assigned[i] == slot_template))
            .count() as u32
    }

    /// No fewer nodes can host the pods' requests beyond the cluster's free room: per
    /// resource, the shortfall over the largest template's allocatable. 0 when a pending
    /// pod could preempt (evictions free room).
    pub(crate) fn resource_lower_bound(&self, req: &CapacityRequest<'_>) -> u32 {
        if self.preemption {
            return 0;
        }
        let mut need = Resources::default();
        let mut pods = 0i64;
        for (i, r) in self.requests.iter().enumerate() {
            if self.unhostable[i].is_none() {
                need.add(r);
                pods += 1;
            }
        }
        let mut free = Resources::default();
        let mut free_pods = 0i64;
        for n in req.snapshot.nodes() {
            let mut room = n.node.allocatable.clone();
            room.sub(n.requested());
            room.milli_cpu = room.milli_cpu.max(0);
            room.memory = room.memory.max(0);
            room.ephemeral_storage = room.ephemeral_storage.max(0);
            free.add(&room);
            free_pods += (n.node.allocatable.allowed_pod_number - n.pods().len() as i64).max(0);
        }
        let largest = |f: &dyn Fn(&Resources) -> i64| {
            req.templates
                .iter()
                .map(|t| f(&t.node.allocatable))
                .max()
                .unwrap_or(0)
        };
        let bound = |need: i64, free: i64, per_node: i64| -> u32 {
            if need <= free || per_node <= 0 {
                0
            } else {
                u32::try_from(
                    (need - free).div_euclid(per_node) + i64::from((need - free) % per_node != 0),
                )
                .unwrap_or(u32::MAX)
            }
        };
        let mut l = bound(pods, free_pods, largest(&|r| r.allowed_pod_number));
        l = l.max(bound(
            need.milli_cpu,
            free.milli_cpu,
            largest(&|r| r.milli_cpu),
        ));
        l = l.max(bound(need.memory, free.memory, largest(&|r| r.memory)));
        l = l.max(bound(
            need.ephemeral_storage,
            free.ephemeral_storage,
            largest(&|r| r.ephemeral_storage),
        ));
        for (name, amount) in need.scalars() {
            let per = largest(&|r| r.scalar(name));
            l = l.max(bound(amount, free.scalar(name).max(0), per));
        }
        l
    }
}

impl Hosts {
    /// No fewer nodes can place the pods, counted per node rather than in aggregate:
    /// a node holds at most as many pending pods as its room divided by the smallest
    /// request (per resource, and its pod count); the cluster's nodes hold at most that
    /// many in their free room; and pods binding one host port (same IP, protocol and
    /// port) need a node each, less the cluster's nodes with a free pod slot where no
    /// pod binds it. 0 when a pending pod could preempt.
    pub(crate) fn per_node_lower_bound(&self, req: &CapacityRequest<'_>) -> u32 {
        if self.preemption {
            return 0;
        }
        let hostable: Vec<usize> = (0..self.pods.len())
            .filter(|&i| self.unhostable[i].is_none())
            .collect();
        if hostable.is_empty() {
            return 0;
        }
        // The smallest request of each resource over the pods.
        let smallest = |f: &dyn Fn(&Resources) -> i64| {
            hostable
                .iter()
                .map(|&i| f(&self.requests[i]))
                .min()
                .unwrap_or(0)
        };
        let cpu = smallest(&|r| r.milli_cpu);
        let memory = smallest(&|r| r.memory);
        let storage = smallest(&|r| r.ephemeral_storage);
        let mut scalars: Vec<(String, i64)> = Vec::new();
        for (name, _) in self.requests[hostable[0]].scalars() {
            let least = smallest(&|r| r.scalar(name));
            if least > 0 {
                scalars.push((name.to_string(), least));
            }
        }
        // How many of the pods a node with `room` (and `slots` free pods) can hold.
        let holds = |room: &Resources, slots: i64| -> i64 {
            let mut n = slots.max(0);
            for (have, least) in [
                (room.milli_cpu, cpu),
                (room.memory, memory),
                (room.ephemeral_storage, storage),
            ] {
                if least > 0 {
                    n = n.min(have.max(0) / least);
                }
            }
            for (name, least) in &scalars {
                n = n.min(room.scalar(name).max(0) / least);
            }
            n
        };
        let per_new = req
            .templates
            .iter()
            .map(|t| holds(&t.node.allocatable, t.node.allocatable.allowed_pod_number))
            .max()
            .unwrap_or(0);
        let mut in_cluster = 0i64;
        for n in req.snapshot.nodes() {
            let mut room = n.node.allocatable.clone();
            room.sub(n.requested());
            let slots = n.node.allocatable.allowed_pod_number - n.pods().len() as i64;
            in_cluster = in_cluster.saturating_add(holds(&room, slots));
        }
        let need = hostable.len() as i64 - in_cluster;
        let mut bound = if need <= 0 || per_new <= 0 {
            0
        } else {
            u32::try_from((need + per_new - 1) / per_new).unwrap_or(u32::MAX)
        };
        // Host ports: one pod binding the same (IP, protocol, port) per node.
        let mut by_port: std::collections::BTreeMap<(&str, &str, i32), usize> =
            std::collections::BTreeMap::new();
        for &i in &hostable {
            if let Some(pod) = req.snapshot.pod(self.pods[i]) {
                let mut seen = std::collections::BTreeSet::new();
                for p in &pod.host_ports {
                    let key = (&*p.ip, &*p.protocol, p.port);
                    if p.port > 0 && seen.insert(key) {
                        *by_port.entry(key).or_default() += 1;
                    }
                }
            }
        }
        bound = bound.max(self.anti_affinity_lower_bound(req, &hostable));
        for ((ip, protocol, port), pods) in by_port {
            let free = req
                .snapshot
                .nodes()
                .iter()
                .filter(|n| n.node.allocatable.allowed_pod_number > n.pods().len() as i64)
                .filter(|n| {
                    !n.pods().iter().any(|id| {
                        req.snapshot.pod(*id).is_some_and(|p| {
                            p.host_ports
                                .iter()
                                .any(|h| &*h.ip == ip && &*h.protocol == protocol && h.port == port)
                        })
                    })
                })
                .count();
            bound = bound.max(u32::try_from(pods.saturating_sub(free)).unwrap_or(u32::MAX));
        }
        bound
    }
}

impl Hosts {
    /// Pods that carry one required anti-affinity term on `kubernetes.io/hostname` and
    /// match it themselves go one per node: they need as many nodes, less the cluster's
    /// nodes with a free pod slot where no pod matches the term. 0 for a term when a
    /// cluster node lacks the hostname label (it is no domain, and takes any number).
    fn anti_affinity_lower_bound(&self, req: &CapacityRequest<'_>, hostable: &[usize]) -> u32 {
        let snapshot = req.snapshot;
        let symbols = snapshot.symbols();
        let Some(hostname) = symbols.get(super::HOSTNAME_KEY) else {
            return 0;
        };
        if snapshot
            .nodes()
            .iter()
            .any(|n| !n.node.labels.has(hostname))
        {
            return 0;
        }
        let none = Labels::default();
        let namespaces: Vec<(topospread::api::Sym, &Labels)> = snapshot.namespaces().collect();
        let ns_labels = |ns| {
            namespaces
                .iter()
                .find(|(n, _)| *n == ns)
                .map_or(&none, |(_, l)| *l)
        };
        let mut groups: Vec<(&topospread::api::AffinityTerm, usize)> = Vec::new();
        for &i in hostable {
            let Some(pod) = snapshot.pod(self.pods[i]) else {
                continue;
            };
            for term in &pod.affinity.required_anti_affinity {
                if term.topology_key != hostname
                    || !term.matches(
                        pod.namespace,
                        &pod.labels,
                        ns_labels(pod.namespace),
                        symbols,
                    )
                {
                    continue;
                }
                match groups.iter_mut().find(|(t, _)| *t == term) {
                    Some(g) => g.1 += 1,
                    None => groups.push((term, 1)),
                }
            }
        }
        let mut bound = 0u32;
        for (term, pods) in groups {
            let free = snapshot
                .nodes()
                .iter()
                .filter(|n| n.node.allocatable.allowed_pod_number > n.pods().len() as i64)
                .filter(|n| {
                    !n.pods().iter().any(|id| {
                        snapshot.pod(*id).is_some_and(|p| {
                            term.matches(p.namespace, &p.labels, ns_labels(p.namespace), symbols)
                        })
                    })
                })
                .count();
            bound = bound.max(u32::try_from(pods.saturating_sub(free)).unwrap_or(u32::MAX));
        }
        bound
    }
}

/// Whether an empty node of template `t` with `labels` could host `pod`: the checks of
/// NodeAffinity, TaintToleration, NodeResourcesFit and NodeName that read the pod and
/// the node alone.
fn check(
    pod: &topospread::api::Pod,
    t: &NodeTemplate,
    labels: &Labels,
    symbols: &topospread::api::Symbols,
    comparison: bool,
) -> Result<(), String> {
    if !pod.scheduling_gates.is_empty() {
        return Err("scheduling gates".into());
    }
    if pod.node_name.is_some() || pod.required_node_names.is_some() {
        return Err("the pod names its node".into());
    }
    if !pod.required_node_affinity.matches(labels, &t.name, symbols) {
        return Err("node selector or required node affinity does not match".into());
    }
    if let Some(taint) = find_untolerated_taint(&t.node.taints, &pod.tolerations, comparison, |x| {
        matches!(x.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute)
    }) {
        return Err(format!(
            "taint {}={}:{} not tolerated",
            taint.key,
            taint.value,
            taint.effect.as_str()
        ));
    }
    let a = &t.node.allocatable;
    let r = &pod.requests.requested;
    let short = |what: &str, want: i64, have: i64| {
        (want > have).then(|| format!("asks {what} {want}, allocatable {have}"))
    };
    let mut shorts = vec![
        short("cpu (millicores)", r.milli_cpu, a.milli_cpu),
        short("memory (bytes)", r.memory, a.memory),
        short(
            "ephemeral-storage (bytes)",
            r.ephemeral_storage,
            a.ephemeral_storage,
        ),
    ];
    shorts.extend(r.scalars().map(|(n, v)| short(n, v, a.scalar(n))));
    if let Some(s) = shorts.into_iter().flatten().next() {
        return Err(s);
    }
    Ok(())
}
