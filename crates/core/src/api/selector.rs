use super::{Labels, Sym, Symbols};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use std::sync::Arc;

/// Why a selector could not be compiled; the caller adds the field path.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SelectorError(pub String);

/// What a requirement asks of one label.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Op {
    /// The label is present with one of these values (sorted, deduplicated).
    In(Box<[Sym]>),
    /// The label is absent, or present with none of these values.
    NotIn(Box<[Sym]>),
    /// The label is present.
    Exists,
    /// The label is absent.
    DoesNotExist,
    /// The label is present and, read as an integer, greater than this (node selectors).
    Gt(i64),
    /// The label is present and, read as an integer, less than this (node selectors).
    Lt(i64),
}

/// One requirement on one label key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Requirement {
    /// The label key.
    pub key: Sym,
    /// What the key's value must satisfy.
    pub op: Op,
}

impl Requirement {
    /// Whether `labels` satisfy this requirement.
    #[inline]
    pub fn matches(&self, labels: &Labels, symbols: &Symbols) -> bool {
        let value = labels.get(self.key);
        match &self.op {
            Op::In(values) => value.is_some_and(|v| values.contains(&v)),
            Op::NotIn(values) => value.is_none_or(|v| !values.contains(&v)),
            Op::Exists => value.is_some(),
            Op::DoesNotExist => value.is_none(),
            Op::Gt(bound) => value
                .and_then(|v| symbols.resolve(v).parse::<i64>().ok())
                .is_some_and(|n| n > *bound),
            Op::Lt(bound) => value
                .and_then(|v| symbols.resolve(v).parse::<i64>().ok())
                .is_some_and(|n| n < *bound),
        }
    }
}

/// A compiled label selector, as `labels.Selector` upstream.
///
/// `Nothing` is what a nil `labelSelector` becomes; `Match([])` (from `{}`) selects
/// everything. Requirements are sorted by key so equal selectors compare and hash equal.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Selector {
    /// Selects no object.
    Nothing,
    /// Selects objects whose labels satisfy every requirement.
    Match(Arc<[Requirement]>),
}

impl Selector {
    /// The selector that selects everything.
    pub fn everything() -> Self {
        Selector::Match(Arc::from(Vec::new()))
    }

    /// Whether `labels` are selected.
    #[inline]
    pub fn matches(&self, labels: &Labels, symbols: &Symbols) -> bool {
        match self {
            Selector::Nothing => false,
            Selector::Match(reqs) => reqs.iter().all(|r| r.matches(labels, symbols)),
        }
    }

    /// Whether this selector has no requirements (it selects everything), as `Empty()` upstream.
    pub fn is_empty(&self) -> bool {
        matches!(self, Selector::Match(r) if r.is_empty())
    }

    /// The requirements, or `None` for the `Nothing` selector.
    pub fn requirements(&self) -> Option<&[Requirement]> {
        match self {
            Selector::Nothing => None,
            Selector::Match(r) => Some(r),
        }
    }

    /// A selector requiring `key=value` for every pair of `set` (`labels.SelectorFromSet`).
    pub fn from_set(set: &Labels) -> Self {
        Self::from_requirements(
            set.iter()
                .map(|(key, value)| Requirement {
                    key,
                    op: Op::In(Box::new([value])),
                })
                .collect(),
        )
    }

    /// Builds a selector from requirements, sorting them into canonical order.
    pub(crate) fn from_requirements(mut reqs: Vec<Requirement>) -> Self {
        reqs.sort_by_key(|r| r.key);
        Selector::Match(Arc::from(reqs))
    }

    /// This selector with `more` requirements added (`Selector.Add` upstream); `Nothing` stays `Nothing`.
    pub fn with(&self, more: &[Requirement]) -> Self {
        match self {
            Selector::Nothing => Selector::Nothing,
            Selector::Match(reqs) => {
                let mut all: Vec<Requirement> = reqs.to_vec();
                all.extend_from_slice(more);
                Self::from_requirements(all)
            }
        }
    }

    /// Compiles a `metav1.LabelSelector` as `LabelSelectorAsSelector` does: nil selects
    /// nothing, an empty selector everything, and an invalid requirement is an error.
    pub fn from_label_selector(
        selector: Option<&LabelSelector>,
        symbols: &mut Symbols,
    ) -> Result<Self, SelectorError> {
        let Some(selector) = selector else {
            return Ok(Selector::Nothing);
        };
        let mut reqs = Vec::new();
        for (key, value) in selector.match_labels.iter().flatten() {
            check_key(key)?;
            check_value(value)?;
            reqs.push(Requirement {
                key: symbols.intern(key),
                op: Op::In(Box::new([symbols.intern(value)])),
            });
        }
        for expr in selector.match_expressions.iter().flatten() {
            let values = expr.values.as_deref().unwrap_or_default();
            check_key(&expr.key)?;
            let op = match expr.operator.as_str() {
                "In" | "NotIn" => {
                    if values.is_empty() {
                        return Err(SelectorError(
                            "for 'in', 'notin' operators, values set can't be empty".into(),
                        ));
                    }
                    for v in values {
                        check_value(v)?;
                    }
                    let set = intern_set(values, symbols);
                    if expr.operator == "In" {
                        Op::In(set)
                    } else {
                        Op::NotIn(set)
                    }
                }
                "Exists" | "DoesNotExist" => {
                    if !values.is_empty() {
                        return Err(SelectorError(
                            "values set must be empty for exists and does not exist".into(),
                        ));
                    }
                    if expr.operator == "Exists" {
                        Op::Exists
                    } else {
                        Op::DoesNotExist
                    }
                }
                other => {
                    return Err(SelectorError(format!(
                        "{other:?} is not a valid label selector operator"
                    )));
                }
            };
            reqs.push(Requirement {
                key: symbols.intern(&expr.key),
                op,
            });
        }
        Ok(Self::from_requirements(reqs))
    }

    /// Renders the selector as `kubectl` prints one (`app=web,tier in (a,b)`); a
    /// requirement given twice (matchLabels and a matchLabelKeys merge of the same
    /// label) is printed once, as it selects once.
    pub fn display(&self, symbols: &Symbols) -> String {
        let Some(reqs) = self.requirements() else {
            return "<none>".to_string();
        };
        if reqs.is_empty() {
            return "<everything>".to_string();
        }
        let join = |vs: &[Sym]| {
            vs.iter()
                .map(|v| symbols.resolve(*v))
                .collect::<Vec<_>>()
                .join(",")
        };
        reqs.iter()
            .map(|r| {
                let k = symbols.resolve(r.key);
                match &r.op {
                    Op::In(vs) if vs.len() == 1 => format!("{k}={}", symbols.resolve(vs[0])),
                    Op::In(vs) => format!("{k} in ({})", join(vs)),
                    Op::NotIn(vs) if vs.len() == 1 => format!("{k}!={}", symbols.resolve(vs[0])),
                    Op::NotIn(vs) => format!("{k} notin ({})", join(vs)),
                    Op::Exists => k.to_string(),
                    Op::DoesNotExist => format!("!{k}"),
                    Op::Gt(n) => format!("{k}>{n}"),
                    Op::Lt(n) => format!("{k}<{n}"),
                }
            })
            .fold(Vec::<String>::new(), |mut shown, r| {
                if !shown.contains(&r) {
                    shown.push(r);
                }
                shown
            })
            .join(",")
    }
}

/// Interns a value list into a sorted, deduplicated set.
pub(crate) fn intern_set(values: &[String], symbols: &mut Symbols) -> Box<[Sym]> {
    let mut set: Vec<Sym> = values.iter().map(|v| symbols.intern(v)).collect();
    set.sort_unstable();
    set.dedup();
    set.into_boxed_slice()
}

/// Checks a label key as `validateLabelKey` does when a requirement is built.
pub(crate) fn check_key(key: &str) -> Result<(), SelectorError> {
    let problems = crate::validation::is_qualified_name(key);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(SelectorError(format!(
            "key: Invalid value: {key:?}: {}",
            problems.join("; ")
        )))
    }
}

/// Checks a label value as `validateLabelValue` does when a requirement is built.
pub(crate) fn check_value(value: &str) -> Result<(), SelectorError> {
    let problems = crate::validation::is_valid_label_value(value);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(SelectorError(format!(
            "values[0]: Invalid value: {value:?}: {}",
            problems.join("; ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    /// matchLabelKeys merged into a selector whose matchLabels already name the label:
    /// printed once (argocd-server's `app.kubernetes.io/name`).
    #[test]
    fn a_requirement_given_twice_is_printed_once() {
        let mut symbols = Symbols::default();
        let sel = LabelSelector {
            match_labels: Some([("app".to_string(), "x".to_string())].into()),
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "tier".into(),
                operator: "Exists".into(),
                values: None,
            }]),
        };
        let base = Selector::from_label_selector(Some(&sel), &mut symbols).expect("valid");
        let merged = base.with(&[Requirement {
            key: symbols.intern("app"),
            op: Op::In(intern_set(&["x".to_string()], &mut symbols)),
        }]);
        assert_eq!(merged.display(&symbols), "app=x,tier");
        // A different value of the same key is a different requirement: both stay.
        let other = base.with(&[Requirement {
            key: symbols.intern("app"),
            op: Op::In(intern_set(&["y".to_string()], &mut symbols)),
        }]);
        assert_eq!(other.display(&symbols), "app=x,app=y,tier");
    }
}
