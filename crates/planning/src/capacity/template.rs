//! Node templates: Node manifests standing for the nodes an autoscaler could add, with
//! the annotations that say where, how many and at what price.

use super::{ANNOTATION_MAX_COUNT, ANNOTATION_PRICE, ANNOTATION_ZONES, MAX_COUNT, ZONE_KEY};
use k8s_openapi::api::core::v1 as core;
use topospread::Snapshot;
use topospread::api::Node;

/// Why a Node manifest cannot be a template.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum TemplateError {
    /// The manifest does not convert (no name, a bad quantity, a bad taint).
    #[error("node template {name:?}: {message}")]
    Invalid {
        /// `metadata.name`.
        name: String,
        /// What is wrong, with the field.
        message: String,
    },
}

fn invalid(name: &str, message: impl Into<String>) -> TemplateError {
    TemplateError::Invalid {
        name: name.to_string(),
        message: message.into(),
    }
}

/// Where a template's nodes may go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZoneChoice {
    /// The template carries `topology.kubernetes.io/zone`: only there (a zone the
    /// cluster lacks adds a new domain).
    Pinned(String),
    /// `topospread.io/zones: a,b`: these zones, each one the cluster has.
    Allowed(Vec<String>),
    /// Neither: any zone the cluster's nodes are in (none when they carry no zone).
    Any,
    /// These zones, new ones included (a Karpenter NodePool's
    /// `topology.kubernetes.io/zone In` requirement: a zone the cluster lacks is a new
    /// domain, as a pinned zone is).
    Listed(Vec<String>),
}

/// A limit several templates share, as a Karpenter NodePool's `spec.limits` bounds the
/// nodes of all its instance types together: over the templates naming `group`, the
/// nodes added use at most `remaining` of each resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedLimit {
    /// Names the group (the NodePool).
    pub group: String,
    /// Per limited resource, what is left and what one node of this template uses.
    pub resources: Vec<LimitedResource>,
}

/// One resource of a [`SharedLimit`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitedResource {
    /// The resource (`cpu`, `memory`, ...).
    pub resource: String,
    /// What the group may still add (millicores for cpu, else units).
    pub remaining: i64,
    /// What one node of this template counts (same units).
    pub per_node: i64,
}

/// Whether `per_template[t]` nodes of each template keep every shared limit.
pub(crate) fn within_shared_limits(templates: &[NodeTemplate], per_template: &[u32]) -> bool {
    let mut used: Vec<(&str, &str, i64, i64)> = Vec::new();
    for (t, n) in templates.iter().zip(per_template) {
        let Some(shared) = &t.shared else {
            continue;
        };
        for r in &shared.resources {
            let add = r.per_node.saturating_mul(i64::from(*n));
            match used
                .iter_mut()
                .find(|(g, name, _, _)| *g == shared.group && *name == r.resource)
            {
                Some(u) => u.2 = u.2.saturating_add(add),
                None => used.push((&shared.group, &r.resource, add, r.remaining)),
            }
        }
    }
    used.iter().all(|(_, _, u, left)| u <= left)
}

/// A kind of node that may be added: labels, taints and allocatable from a Node
/// manifest, with where it may go, how many and at what price.
#[derive(Clone, Debug)]
pub struct NodeTemplate {
    /// `metadata.name`: names the template and prefixes its nodes' names.
    pub name: String,
    /// The node as the scheduler sees it; its name and hostname label are replaced
    /// for each node added.
    pub node: Node,
    /// Where its nodes may go.
    pub zones: ZoneChoice,
    /// `topospread.io/max-count`: at most this many nodes of it, over all zones.
    pub max_count: Option<u32>,
    /// `topospread.io/price`, in millionths (`0.192` is 192,000): the price of one node.
    pub price_micros: u64,
    /// A limit it shares with other templates (a NodePool's `spec.limits`).
    pub shared: Option<SharedLimit>,
}

impl NodeTemplate {
    /// Reads a Node manifest as a template, its strings interned into `snapshot`.
    pub fn from_node(node: &core::Node, snapshot: &mut Snapshot) -> Result<Self, TemplateError> {
        let name = node.metadata.name.clone().unwrap_or_default();
        if name.is_empty() {
            return Err(invalid("", "metadata.name: a template needs a name"));
        }
        let mut converted = topospread::convert::node(node, snapshot.symbols_mut())
            .map_err(|e| invalid(&name, e.to_string()))?;
        if converted.allocatable.allowed_pod_number <= 0 {
            return Err(invalid(
                &name,
                "status.allocatable.pods: a template must allow at least one pod (give cpu, memory and pods)",
            ));
        }
        converted.unschedulable = false;
        let annotations = node.metadata.annotations.clone().unwrap_or_default();
        let max_count = match annotations.get(ANNOTATION_MAX_COUNT) {
            None => None,
            Some(v) => Some(parse_count(v.trim()).ok_or_else(|| {
                invalid(
                    &name,
                    format!(
                        "metadata.annotations[{ANNOTATION_MAX_COUNT}]: {v:?} is not a whole number from 0 to {MAX_COUNT}"
                    ),
                )
            })?),
        };
        let price_micros = match annotations.get(ANNOTATION_PRICE) {
            None => 0,
            Some(v) => parse_price(v.trim()).ok_or_else(|| {
                invalid(
                    &name,
                    format!(
                        "metadata.annotations[{ANNOTATION_PRICE}]: {v:?} is not a price (a non-negative decimal, at most 6 decimals, below 1000000)"
                    ),
                )
            })?,
        };
        let labels = node.metadata.labels.clone().unwrap_or_default();
        let zones = match (labels.get(ZONE_KEY), annotations.get(ANNOTATION_ZONES)) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    &name,
                    format!(
                        "metadata.annotations[{ANNOTATION_ZONES}]: the template is labelled {ZONE_KEY} already; give one of them"
                    ),
                ));
            }
            (Some(zone), None) => ZoneChoice::Pinned(zone.clone()),
            (None, Some(list)) => {
                let zones: Vec<String> = list
                    .split(',')
                    .map(|z| z.trim().to_string())
                    .filter(|z| !z.is_empty())
                    .collect();
                if zones.is_empty() {
                    return Err(invalid(
                        &name,
                        format!("metadata.annotations[{ANNOTATION_ZONES}]: names no zone"),
                    ));
                }
                ZoneChoice::Allowed(zones)
            }
            (None, None) => ZoneChoice::Any,
        };
        Ok(Self {
            name,
            node: converted,
            zones,
            max_count,
            price_micros,
            shared: None,
        })
    }
}

fn parse_count(v: &str) -> Option<u32> {
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    v.parse::<u32>().ok().filter(|n| *n <= MAX_COUNT)
}

/// `0.192` -> 192,000 millionths; no sign, no exponent, at most six decimals.
pub fn parse_price(v: &str) -> Option<u64> {
    let (whole, frac) = v.split_once('.').unwrap_or((v, ""));
    if whole.is_empty() && frac.is_empty() {
        return None;
    }
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(frac) || frac.len() > 6 || whole.len() > 6 {
        return None;
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let frac: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse::<u64>().ok()? * 10u64.pow(6 - frac.len() as u32)
    };
    Some(whole * 1_000_000 + frac)
}

/// A price in millionths as a decimal (`192000` -> `0.192`).
pub fn format_price(micros: u64) -> String {
    let whole = micros / 1_000_000;
    let frac = micros % 1_000_000;
    if frac == 0 {
        return whole.to_string();
    }
    let frac = format!("{frac:06}");
    format!("{whole}.{}", frac.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::{format_price, parse_count, parse_price};

    #[test]
    fn prices_read_as_decimals_and_print_back() {
        assert_eq!(parse_price("0.192"), Some(192_000));
        assert_eq!(parse_price("3"), Some(3_000_000));
        assert_eq!(parse_price(".5"), Some(500_000));
        assert_eq!(parse_price("-1"), None);
        assert_eq!(parse_price("1e3"), None);
        assert_eq!(parse_price("0.1234567"), None);
        assert_eq!(parse_price("."), None);
        assert_eq!(format_price(192_000), "0.192");
        assert_eq!(format_price(3_000_000), "3");
    }

    #[test]
    fn counts_are_bounded_whole_numbers() {
        assert_eq!(parse_count("3"), Some(3));
        assert_eq!(parse_count("-3"), None);
        assert_eq!(parse_count("100001"), None);
        assert_eq!(parse_count("2.5"), None);
    }
}
