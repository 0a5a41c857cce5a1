//! Label and field selectors: the string forms of `labelSelector` (parsed by the core's
//! `labels.Parse`, shared with the CLI) and `fieldSelector`, and the structured
//! `LabelSelector` PodDisruptionBudgets carry.

use serde_json::Value;
use topospread::api::{ParsedRequirement, SelectorOperator, parse_label_selector};

use crate::error::ApiError;
use crate::resources::ResourceDef;

/// A parsed `labelSelector`: every requirement must hold. Empty matches all.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct LabelSelector(Vec<ParsedRequirement>);

impl LabelSelector {
    /// Parses the string form (`a=b,c!=d,e in (x,y),!f,g`) with the core's parser, which
    /// reads it as `labels.Parse` does.
    pub(crate) fn parse(s: &str) -> Result<Self, ApiError> {
        parse_label_selector(s)
            .map(LabelSelector)
            .map_err(|e| ApiError::bad_request(format!("unable to parse requirement: {e}")))
    }

    /// Whether an object's `metadata.labels` satisfy every requirement.
    pub(crate) fn matches(&self, obj: &Value) -> bool {
        let labels = obj.pointer("/metadata/labels").and_then(Value::as_object);
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        let number = |k: &str| get(k).and_then(|x| x.parse::<i64>().ok());
        self.0.iter().all(|req| match &req.operator {
            SelectorOperator::In(vs) => get(&req.key).is_some_and(|x| vs.iter().any(|v| v == x)),
            SelectorOperator::NotIn(vs) => get(&req.key).is_none_or(|x| vs.iter().all(|v| v != x)),
            SelectorOperator::Exists => get(&req.key).is_some(),
            SelectorOperator::DoesNotExist => get(&req.key).is_none(),
            SelectorOperator::GreaterThan(n) => number(&req.key).is_some_and(|x| x > *n),
            SelectorOperator::LessThan(n) => number(&req.key).is_some_and(|x| x < *n),
            _ => false,
        })
    }

    /// Builds a selector from the structured `metav1.LabelSelector` JSON
    /// (`matchLabels`, `matchExpressions`). A missing selector matches nothing,
    /// an empty one everything, as upstream's `LabelSelectorAsSelector`.
    pub(crate) fn from_struct(sel: Option<&Value>) -> Option<Self> {
        let sel = sel?.as_object()?;
        let mut reqs = Vec::new();
        if let Some(ml) = sel.get("matchLabels").and_then(Value::as_object) {
            for (k, v) in ml {
                reqs.push(ParsedRequirement {
                    key: k.clone(),
                    operator: SelectorOperator::In(vec![v.as_str()?.to_owned()]),
                });
            }
        }
        if let Some(exprs) = sel.get("matchExpressions").and_then(Value::as_array) {
            for e in exprs {
                let key = e.get("key")?.as_str()?.to_owned();
                let values: Vec<String> = e
                    .get("values")
                    .and_then(Value::as_array)
                    .map(|vs| {
                        vs.iter()
                            .filter_map(|v| v.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default();
                let operator = match e.get("operator")?.as_str()? {
                    "In" => SelectorOperator::In(values),
                    "NotIn" => SelectorOperator::NotIn(values),
                    "Exists" => SelectorOperator::Exists,
                    "DoesNotExist" => SelectorOperator::DoesNotExist,
                    _ => return None,
                };
                reqs.push(ParsedRequirement { key, operator });
            }
        }
        Some(LabelSelector(reqs))
    }
}

/// A parsed `fieldSelector`: `field=value`, `field==value`, `field!=value`,
/// comma-joined; each must hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    /// Parses the string form and checks each field label is one the resource
    /// supports, answering 400 as upstream does for an unsupported label.
    pub(crate) fn parse(s: &str, def: &ResourceDef) -> Result<Self, ApiError> {
        let mut reqs = Vec::new();
        for part in split_unescaped(s, ',') {
            if part.trim().is_empty() {
                continue;
            }
            let (field, eq, value) = if let Some((f, v)) = part.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, true, v)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, true, v)
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{s}'; can't understand '{part}'"
                )));
            };
            let field = field.trim();
            if !def.allows_field(field) {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {field}"
                )));
            }
            reqs.push((field.to_owned(), eq, unescape(value.trim())));
        }
        Ok(FieldSelector(reqs))
    }

    /// Both selectors' requirements.
    pub(crate) fn and(mut self, other: FieldSelector) -> Self {
        self.0.extend(other.0);
        self
    }

    /// Whether the object's fields satisfy every requirement. A missing field reads
    /// as the empty string, so `spec.nodeName=` selects unassigned pods.
    pub(crate) fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|(field, eq, value)| {
            let actual = field_value(obj, field);
            (actual == *value) == *eq
        })
    }
}

/// Splits on `sep` where it is not escaped with a backslash.
fn split_unescaped(s: &str, sep: char) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            if let Some(last) = parts.last_mut() {
                last.push('\\');
                last.push(c);
            }
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == sep {
            parts.push(String::new());
        } else if let Some(last) = parts.last_mut() {
            last.push(c);
        }
    }
    parts
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The string value of a dotted field path, as upstream's field sets render it:
/// strings as-is, booleans and numbers printed, missing as "".
pub(crate) fn field_value(obj: &Value, path: &str) -> String {
    let mut cur = obj;
    for seg in path.split('.') {
        match cur.get(seg) {
            Some(v) => cur = v,
            None => return String::new(),
        }
    }
    match cur {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(a) => a
            .first()
            .and_then(|v| v.get("ip"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        Value::Null | Value::Object(_) => String::new(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::resources::{PODS, RESOURCES};
    use serde_json::json;

    fn pod(labels: Value, node: Option<&str>) -> Value {
        let mut p =
            json!({"metadata": {"name": "p", "namespace": "ns", "labels": labels}, "spec": {}});
        if let Some(n) = node {
            p["spec"]["nodeName"] = json!(n);
        }
        p
    }

    #[test]
    fn label_operators() {
        let p = pod(json!({"app": "web", "tier": "fe", "n": "5"}), None);
        let yes = [
            "app=web",
            "app==web",
            "app!=db",
            "app in (web,db)",
            "tier notin (be)",
            "app",
            "!missing",
            "app=web,tier in (fe)",
            "n>3",
            "n<9",
            "",
        ];
        for s in yes {
            assert!(LabelSelector::parse(s).unwrap().matches(&p), "{s}");
        }
        let no = [
            "app=db",
            "app!=web",
            "app in (db)",
            "tier notin (fe,be)",
            "missing",
            "!app",
            "n>5",
        ];
        for s in no {
            assert!(!LabelSelector::parse(s).unwrap().matches(&p), "{s}");
        }
        assert!(LabelSelector::parse("app in web").is_err());
        assert!(LabelSelector::parse("a b c").is_err());
    }

    #[test]
    fn field_selectors() {
        let def = &RESOURCES[PODS];
        let unbound = pod(json!({}), None);
        let bound = pod(json!({}), Some("n1"));
        let sel = FieldSelector::parse("spec.nodeName=", def).unwrap();
        assert!(sel.matches(&unbound) && !sel.matches(&bound));
        let sel = FieldSelector::parse("spec.nodeName!=,metadata.namespace==ns", def).unwrap();
        assert!(!sel.matches(&unbound) && sel.matches(&bound));
        assert!(FieldSelector::parse("spec.bogus=x", def).is_err());
        assert!(FieldSelector::parse("nonsense", def).is_err());
    }

    #[test]
    fn structured_selectors() {
        let p = pod(json!({"app": "web"}), None);
        let sel = json!({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]});
        assert!(LabelSelector::from_struct(Some(&sel)).unwrap().matches(&p));
        assert!(LabelSelector::from_struct(None).is_none());
        assert!(
            LabelSelector::from_struct(Some(&json!({})))
                .unwrap()
                .matches(&p)
        );
    }
}
