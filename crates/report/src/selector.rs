//! Label selectors as `kubectl -l` takes them: `app=web,tier in (a,b),!canary`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

/// A selector string that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid selector {text:?}: {message}")]
pub struct SelectorParseError {
    /// The selector as given.
    pub text: String,
    /// What is wrong.
    pub message: String,
}

/// Splits at commas outside parentheses.
fn split_top(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

fn set_values(rest: &str) -> Option<Vec<String>> {
    let inner = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some(
        inner
            .split(',')
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect(),
    )
}

/// Parses a selector string (`=`, `==`, `!=`, `in`, `notin`, `key`, `!key`) into a
/// `LabelSelector`; the caller compiles it (which checks keys and values).
pub fn parse_selector(text: &str) -> Result<LabelSelector, SelectorParseError> {
    let fail = |message: &str| SelectorParseError {
        text: text.to_string(),
        message: message.to_string(),
    };
    let mut exprs = Vec::new();
    for part in split_top(text) {
        let part = part.trim();
        if part.is_empty() {
            if text.trim().is_empty() {
                break;
            }
            return Err(fail("empty requirement"));
        }
        let req = |key: &str, op: &str, values: Option<Vec<String>>| LabelSelectorRequirement {
            key: key.trim().to_string(),
            operator: op.to_string(),
            values,
        };
        let r = if let Some((k, v)) = part.split_once("!=") {
            req(k, "NotIn", Some(vec![v.trim().to_string()]))
        } else if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
            req(k, "In", Some(vec![v.trim().to_string()]))
        } else if let Some(k) = part.strip_prefix('!') {
            req(k, "DoesNotExist", None)
        } else if let Some((k, rest)) = part.split_once(" notin ") {
            let vs = set_values(rest).ok_or_else(|| fail("expected a set: notin (a,b)"))?;
            req(k, "NotIn", Some(vs))
        } else if let Some((k, rest)) = part.split_once(" in ") {
            let vs = set_values(rest).ok_or_else(|| fail("expected a set: in (a,b)"))?;
            req(k, "In", Some(vs))
        } else if part.contains(char::is_whitespace) || part.contains(['(', ')']) {
            return Err(fail(&format!("cannot read requirement {part:?}")));
        } else {
            req(part, "Exists", None)
        };
        if r.key.is_empty() {
            return Err(fail("a requirement has no key"));
        }
        exprs.push(r);
    }
    Ok(LabelSelector {
        match_expressions: Some(exprs),
        match_labels: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_syntax() {
        let s = parse_selector("app=web, tier in (a, b),!canary,env!=prod,gpu").expect("parses");
        let ops: Vec<_> = s
            .match_expressions
            .iter()
            .flatten()
            .map(|r| (r.key.as_str(), r.operator.as_str(), r.values.clone()))
            .collect();
        assert_eq!(
            ops,
            [
                ("app", "In", Some(vec!["web".to_string()])),
                ("tier", "In", Some(vec!["a".to_string(), "b".to_string()])),
                ("canary", "DoesNotExist", None),
                ("env", "NotIn", Some(vec!["prod".to_string()])),
                ("gpu", "Exists", None),
            ]
        );
        assert!(parse_selector("a in b").is_err());
        assert!(parse_selector("=x").is_err());
        assert!(parse_selector("a,,b").is_err());
    }
}
