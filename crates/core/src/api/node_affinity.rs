use super::{Labels, Op, Requirement, Selector, Symbols, intern_set};
use k8s_openapi::api::core::v1::{
    NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PreferredSchedulingTerm,
};
use std::collections::BTreeSet;

/// A requirement on a node field; only `metadata.name` exists (`matchFields`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldRequirement {
    /// The field key as written (`metadata.name` is the only one a node has).
    pub key: Box<str>,
    /// `true` for `In`, `false` for `NotIn`.
    pub equals: bool,
    /// The one value.
    pub value: Box<str>,
}

impl FieldRequirement {
    fn matches(&self, node_name: &str) -> bool {
        let field = if &*self.key == "metadata.name" {
            node_name
        } else {
            ""
        };
        (field == &*self.value) == self.equals
    }
}

/// One parsed `nodeSelectorTerm`: its label and field requirements, ANDed; or the
/// reason it could not be parsed (such a term matches no node, as upstream's lazy errors).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NodeSelectorTermMatcher {
    /// A valid term.
    Valid {
        /// From `matchExpressions`.
        labels: Selector,
        /// From `matchFields`.
        fields: Vec<FieldRequirement>,
    },
    /// A term with a parse error; it never matches.
    Invalid(String),
}

impl NodeSelectorTermMatcher {
    pub(crate) fn parse(term: &NodeSelectorTerm, symbols: &mut Symbols) -> Self {
        let mut reqs = Vec::new();
        for expr in term.match_expressions.iter().flatten() {
            match node_requirement(expr, symbols) {
                Ok(r) => reqs.push(r),
                Err(e) => return Self::Invalid(e),
            }
        }
        let mut fields = Vec::new();
        for f in term.match_fields.iter().flatten() {
            let values = f.values.as_deref().unwrap_or_default();
            let equals = match f.operator.as_str() {
                "In" => true,
                "NotIn" => false,
                op => {
                    return Self::Invalid(format!(
                        "{op:?} is not a valid node field selector operator"
                    ));
                }
            };
            let [value] = values else {
                return Self::Invalid(format!(
                    "unexpected number of value ({}) for node field selector operator {:?}",
                    values.len(),
                    f.operator
                ));
            };
            fields.push(FieldRequirement {
                key: f.key.as_str().into(),
                equals,
                value: value.as_str().into(),
            });
        }
        Self::Valid {
            labels: Selector::from_requirements(reqs),
            fields,
        }
    }

    /// Whether a node with these labels and name satisfies the term.
    pub fn matches(&self, labels: &Labels, name: &str, symbols: &Symbols) -> bool {
        match self {
            Self::Valid {
                labels: sel,
                fields,
            } => sel.matches(labels, symbols) && fields.iter().all(|f| f.matches(name)),
            Self::Invalid(_) => false,
        }
    }
}

fn node_requirement(
    expr: &NodeSelectorRequirement,
    symbols: &mut Symbols,
) -> Result<Requirement, String> {
    let values = expr.values.as_deref().unwrap_or_default();
    let op = match expr.operator.as_str() {
        "In" | "NotIn" if values.is_empty() => {
            return Err("for 'in', 'notin' operators, values set can't be empty".into());
        }
        "In" => Op::In(intern_set(values, symbols)),
        "NotIn" => Op::NotIn(intern_set(values, symbols)),
        "Exists" | "DoesNotExist" if !values.is_empty() => {
            return Err("values set must be empty for exists and does not exist".into());
        }
        "Exists" => Op::Exists,
        "DoesNotExist" => Op::DoesNotExist,
        "Gt" | "Lt" => {
            let [v] = values else {
                return Err(format!(
                    "for 'Gt', 'Lt' operators, exactly one value is required, got {}",
                    values.len()
                ));
            };
            let n: i64 = v.parse().map_err(|_| {
                format!("for 'Gt', 'Lt' operators, the value must be an integer, got {v:?}")
            })?;
            if expr.operator == "Gt" {
                Op::Gt(n)
            } else {
                Op::Lt(n)
            }
        }
        op => return Err(format!("{op:?} is not a valid node selector operator")),
    };
    Ok(Requirement {
        key: symbols.intern(&expr.key),
        op,
    })
}

/// Parsed `nodeSelectorTerms`, ORed (`LazyErrorNodeSelector` upstream).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct NodeSelectorMatcher {
    /// The non-empty terms; empty terms select nothing and are dropped.
    pub terms: Vec<NodeSelectorTermMatcher>,
}

impl NodeSelectorMatcher {
    /// Parses a `NodeSelector`; invalid terms are kept and never match.
    pub fn parse(ns: &NodeSelector, symbols: &mut Symbols) -> Self {
        let terms = ns
            .node_selector_terms
            .iter()
            .filter(|t| {
                t.match_expressions.as_ref().is_some_and(|e| !e.is_empty())
                    || t.match_fields.as_ref().is_some_and(|f| !f.is_empty())
            })
            .map(|t| NodeSelectorTermMatcher::parse(t, symbols))
            .collect();
        Self { terms }
    }

    /// Whether some term matches the node.
    pub fn matches(&self, labels: &Labels, name: &str, symbols: &Symbols) -> bool {
        self.terms.iter().any(|t| t.matches(labels, name, symbols))
    }
}

/// A pod's required node affinity: `spec.nodeSelector` AND the required affinity terms
/// (`nodeaffinity.RequiredNodeAffinity` upstream).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct RequiredNodeAffinity {
    /// From `spec.nodeSelector`; `None` when empty.
    pub node_selector: Option<Selector>,
    /// From `requiredDuringSchedulingIgnoredDuringExecution`; `None` when absent.
    pub terms: Option<NodeSelectorMatcher>,
}

impl RequiredNodeAffinity {
    /// Whether this affinity constrains nothing.
    pub fn is_empty(&self) -> bool {
        self.node_selector.is_none() && self.terms.is_none()
    }

    /// Whether a node with these labels and name satisfies both parts.
    #[inline]
    pub fn matches(&self, labels: &Labels, name: &str, symbols: &Symbols) -> bool {
        if let Some(sel) = &self.node_selector
            && !sel.matches(labels, symbols)
        {
            return false;
        }
        match &self.terms {
            Some(terms) => terms.matches(labels, name, symbols),
            None => true,
        }
    }
}

/// A pod's preferred node affinity terms (`nodeaffinity.PreferredSchedulingTerms`):
/// terms with weight 0 or no requirements are left out.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PreferredNodeAffinity {
    /// The weighted terms.
    pub terms: Vec<(i64, NodeSelectorTermMatcher)>,
    /// The parse errors, joined, if any term does not parse (upstream fails PreScore).
    pub error: Option<String>,
}

impl PreferredNodeAffinity {
    /// Compiles `preferredDuringSchedulingIgnoredDuringExecution`.
    pub fn parse(terms: &[PreferredSchedulingTerm], symbols: &mut Symbols) -> Self {
        let mut out = Self::default();
        let mut errors = Vec::new();
        for (i, t) in terms.iter().enumerate() {
            let p = &t.preference;
            let empty = p.match_expressions.as_ref().is_none_or(Vec::is_empty)
                && p.match_fields.as_ref().is_none_or(Vec::is_empty);
            if t.weight == 0 || empty {
                continue;
            }
            match NodeSelectorTermMatcher::parse(p, symbols) {
                NodeSelectorTermMatcher::Invalid(e) => {
                    errors.push(format!("[{i}].preference: {e}"))
                }
                term => out.terms.push((i64::from(t.weight), term)),
            }
        }
        if !errors.is_empty() {
            out.error = Some(errors.join(", "));
        }
        out
    }

    /// The sum of the weights of the terms the node matches.
    pub fn score(&self, labels: &Labels, name: &str, symbols: &Symbols) -> i64 {
        self.terms
            .iter()
            .filter(|(_, t)| t.matches(labels, name, symbols))
            .map(|(w, _)| *w)
            .sum()
    }
}

/// The node names required node affinity pins the pod to through `matchFields`
/// `metadata.name In`, as NodeAffinity's PreFilter computes its `PreFilterResult`:
/// `None` when some term does not restrict names (terms are ORed), otherwise the union
/// over terms of the intersection within each term (empty: the terms conflict).
pub fn required_node_names(ns: &NodeSelector) -> Option<BTreeSet<Box<str>>> {
    if ns.node_selector_terms.is_empty() {
        return None;
    }
    let mut union = BTreeSet::new();
    for term in &ns.node_selector_terms {
        let mut names: Option<BTreeSet<Box<str>>> = None;
        for r in term.match_fields.iter().flatten() {
            if r.key == "metadata.name" && r.operator == "In" {
                let set: BTreeSet<Box<str>> = r
                    .values
                    .iter()
                    .flatten()
                    .map(|v| v.as_str().into())
                    .collect();
                names = Some(match names {
                    None => set,
                    Some(prev) => prev.intersection(&set).cloned().collect(),
                });
            }
        }
        union.extend(names?);
    }
    Some(union)
}
