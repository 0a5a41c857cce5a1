//! `show`: the cluster's pods per topology domain, as the Kubernetes docs draw them, and
//! the first constrained pod's constraints as PodTopologySpread counts them. The counts
//! are a versioned report (`schema/show-report.json`); the snapshot comes with them for
//! the drawing.

use crate::domains::{Highlight, default_topology_keys, domain_counts, skew};
use crate::error::{Error, Result};
use crate::selector::parse_selector;
use crate::{ClusterSource, Context, config, input};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;
use topospread::api::Selector;
use topospread::plugins::podtopologyspread::{LABEL_HOSTNAME, LABEL_TOPOLOGY_ZONE};
use topospread::snapshot::Snapshot;
use topospread::spread::SpreadCounter;
use topospread_k8s::build;
use topospread_k8s::notes::summarize;

/// The report's `apiVersion`.
pub const API_VERSION: &str = crate::simulate::API_VERSION;
/// The report's `kind`.
pub const KIND: &str = "ShowReport";

/// What to show.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ShowRequest {
    /// The cluster's objects.
    pub source: ClusterSource,
    /// The pods to mark (`app=web,tier in (a,b)`); `None`: the first topology spread
    /// constraint's selector, else every pod.
    pub selector: Option<String>,
    /// Topology keys, outermost first; empty: the keys of the first constrained pod's
    /// constraints (no `selector` given), else the zone key then the hostname key the
    /// nodes carry.
    pub topology_keys: Vec<String>,
}

impl ShowRequest {
    /// A request for `source` with the CLI's defaults.
    pub fn new(source: impl Into<ClusterSource>) -> Self {
        Self {
            source: source.into(),
            ..Self::default()
        }
    }
}

/// Marked pods per domain of one topology key (every node's domain, as drawn).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct KeyCounts {
    /// The topology key.
    pub topology_key: String,
    /// Marked pods per domain.
    pub counts: BTreeMap<String, u32>,
    /// The largest count minus the smallest.
    pub skew: u32,
}

/// One constraint of the first constrained pod, as PodTopologySpread counts it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct CountedConstraintReport {
    /// The topology key.
    pub topology_key: String,
    /// maxSkew.
    pub max_skew: i32,
    /// `DoNotSchedule` or `ScheduleAnyway`.
    pub when_unsatisfiable: String,
    /// minDomains as Filter applies it (1 for ScheduleAnyway).
    pub min_domains: i32,
    /// The selector as counted (matchLabelKeys merged).
    pub selector: String,
    /// Matching pods per eligible domain.
    pub counts: BTreeMap<String, i64>,
    /// The skew PodTopologySpread measures (minDomains applied).
    pub skew: i64,
}

/// The engine's view of the first pod with constraints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct PodSpreadReport {
    /// `namespace/name`.
    pub pod: String,
    /// Its constraints (hard, then soft): eligible domains only, inclusion policies,
    /// nodes lacking a key and minDomains applied.
    pub constraints: Vec<CountedConstraintReport>,
}

/// The contract of `topospread show -o json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[non_exhaustive]
pub struct ShowReport {
    /// [`API_VERSION`].
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    /// [`KIND`].
    pub kind: String,
    /// Which pods are marked, and why.
    pub marked: String,
    /// Per topology key, outermost first.
    pub domains: Vec<KeyCounts>,
    /// PodTopologySpread's counts for the first pod with constraints (absent with a
    /// selector given, or when no pod has constraints).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spread: Option<PodSpreadReport>,
    /// Notes on the input (skipped objects, finished pods).
    pub notes: Vec<String>,
}

/// The report, with the snapshot and marking the drawing needs.
pub struct Show {
    /// The versioned counts.
    pub report: ShowReport,
    /// The cluster as loaded.
    pub snapshot: Snapshot,
    /// The marked pods.
    pub highlight: Highlight,
    /// The topology keys drawn, outermost first.
    pub topology_keys: Vec<String>,
}

/// Loads the cluster and counts it.
pub fn show(ctx: &Context, request: ShowRequest) -> Result<Show> {
    let input = request
        .source
        .load_admitted(ctx, 0, input::PodForm::Compact)?;
    let mut snapshot = build::build_with_symbols(
        &input.objects,
        ctx.gates().request_options(),
        input.symbols.clone(),
    )?
    .snapshot;
    let finished = topospread_driver::notes::finished(&input.objects);
    let notes = summarize(input.notes.iter().chain(&finished));
    let setup = config::load(ctx, None, &input)?;
    drop(input);
    let highlight = highlight(&mut snapshot, request.selector.as_deref())?;
    let topology_keys = if !request.topology_keys.is_empty() {
        request.topology_keys
    } else if request.selector.is_none() {
        constraint_keys(&snapshot).unwrap_or_else(|| default_topology_keys(&snapshot))
    } else {
        default_topology_keys(&snapshot)
    };
    let domains = topology_keys
        .iter()
        .map(|key| {
            let counts = domain_counts(&snapshot, key, &highlight);
            KeyCounts {
                topology_key: key.clone(),
                skew: skew(&counts),
                counts: counts.into_iter().collect(),
            }
        })
        .collect();
    let spread = match request.selector {
        Some(_) => None,
        None => {
            let counter = SpreadCounter::new(&setup.config, setup.features, &mut snapshot)
                .map_err(|e| Error::Refused(format!("{}: {e}", setup.origin)))?;
            engine_counts(&counter, &snapshot)
        }
    };
    Ok(Show {
        report: ShowReport {
            api_version: API_VERSION.into(),
            kind: KIND.into(),
            marked: highlight.description.clone(),
            domains,
            spread,
            notes,
        },
        snapshot,
        highlight,
        topology_keys,
    })
}

/// The pods to mark: `selector`, else the first spread constraint's selector, else all.
pub fn highlight(snapshot: &mut Snapshot, selector: Option<&str>) -> Result<Highlight> {
    if let Some(text) = selector {
        let ls = parse_selector(text).map_err(|e| Error::Refused(e.to_string()))?;
        let selector = Selector::from_label_selector(Some(&ls), snapshot.symbols_mut())
            .map_err(|e| Error::Refused(format!("--selector {text:?}: {e}")))?;
        let description = selector.display(snapshot.symbols());
        return Ok(Highlight {
            selector,
            namespace: None,
            description,
        });
    }
    let symbols = snapshot.symbols();
    let first = snapshot
        .pods()
        .find_map(|(_, p)| p.spread_constraints.first().map(|c| (p, c)));
    Ok(match first {
        Some((p, c)) => Highlight {
            selector: c.selector.clone(),
            namespace: Some(p.namespace),
            description: format!(
                "{} in namespace {} (the selector of {}'s constraint on {})",
                c.selector.display(symbols),
                symbols.resolve(p.namespace),
                p.name,
                symbols.resolve(c.topology_key)
            ),
        },
        None => Highlight {
            selector: Selector::everything(),
            namespace: None,
            description: "anything (no --selector and no constraint in the files)".into(),
        },
    })
}

/// The keys of the marked pod's constraints (the first pod with any), drawn as
/// [`drawing_keys`] lays them out, then the hostname key the nodes carry: each node's
/// own count, on its line and in the report (the web view's node cells).
/// `None`: no pod has constraints.
fn constraint_keys(snapshot: &Snapshot) -> Option<Vec<String>> {
    let symbols = snapshot.symbols();
    let (_, pod) = snapshot
        .pods()
        .find(|(_, p)| !p.spread_constraints.is_empty())?;
    let keys = pod
        .spread_constraints
        .iter()
        .map(|c| symbols.resolve(c.topology_key).to_string())
        .collect();
    let mut keys = drawing_keys(snapshot, keys);
    if let Some(host) = [LABEL_HOSTNAME, "node"]
        .into_iter()
        .find(|k| carried(snapshot, k))
        && !keys.iter().any(|k| k == host)
    {
        keys.push(host.to_string());
    }
    Some(keys)
}

/// How many domains of `key` the nodes make (0: no node carries it).
fn domain_count(snapshot: &Snapshot, key: &str) -> usize {
    snapshot
        .symbols()
        .get(key)
        .and_then(|s| snapshot.domains(s))
        .map_or(0, |d| d.len())
}

/// Whether some node carries `key`.
fn carried(snapshot: &Snapshot, key: &str) -> bool {
    domain_count(snapshot, key) > 0
}

/// The keys a picture of constraints on `keys` is drawn by: those keys, the one with the
/// fewest domains outermost, so the picture shows what the constraints spread over (a
/// constraint on `rack` by racks, on `region` by regions), within the zones the nodes
/// carry when the outermost is a per-node key (as the docs draw a constraint on `node`).
pub fn drawing_keys(snapshot: &Snapshot, keys: Vec<String>) -> Vec<String> {
    let mut sized: Vec<(usize, String)> = Vec::new();
    for key in keys {
        if sized.iter().all(|k| k.1 != key) {
            sized.push((domain_count(snapshot, &key), key));
        }
    }
    sized.sort_by_key(|k| k.0);
    let per_node = sized.first().is_none_or(|k| k.0 >= snapshot.nodes().len());
    let mut keys: Vec<String> = sized.into_iter().map(|k| k.1).collect();
    if per_node
        && let Some(zone) = [LABEL_TOPOLOGY_ZONE, "zone"]
            .into_iter()
            .find(|k| carried(snapshot, k))
        && !keys.iter().any(|k| k == zone)
    {
        keys.insert(0, zone.to_string());
    }
    keys
}

/// The first constrained pod's constraints as PodTopologySpread counts them: the
/// drawing shows every node, this says what Filter and Score see.
fn engine_counts(counter: &SpreadCounter, snapshot: &Snapshot) -> Option<PodSpreadReport> {
    let (_, pod) = snapshot
        .pods()
        .find(|(_, p)| !p.spread_constraints.is_empty())?;
    let spread = counter.pod_spread(pod, snapshot);
    if spread.constraints.is_empty() {
        return None;
    }
    Some(PodSpreadReport {
        pod: format!("{}/{}", snapshot.symbols().resolve(pod.namespace), pod.name),
        constraints: spread
            .constraints
            .into_iter()
            .map(|c| CountedConstraintReport {
                topology_key: c.spread.constraint.topology_key,
                max_skew: c.spread.constraint.max_skew,
                when_unsatisfiable: c.spread.constraint.when_unsatisfiable.as_str().to_string(),
                min_domains: c.min_domains,
                selector: c.spread.constraint.selector,
                counts: c.spread.counts,
                skew: c.spread.skew,
            })
            .collect(),
    })
}

/// The JSON Schema (draft 2020-12) of [`ShowReport`] as it serializes.
pub fn schema() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    serde_json::to_value(generator.into_root_schema_for::<ShowReport>()).unwrap_or_default()
}
