//! Label selectors in their string form, as `kubectl -l` and the API's `labelSelector`
//! query parameter take them (`app=web,tier in (a,b),!canary,gen>3`), read as upstream's
//! `labels.Parse` reads them (k8s.io/apimachinery/pkg/labels/selector.go): keys and
//! values validated as `NewRequirement` validates them. One parser for the CLI and the
//! fake API server; each turns the requirements into what it matches with.

use super::selector::{check_key, check_value};

/// A selector string that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid selector {text:?}: {message}")]
pub struct SelectorParseError {
    /// The selector as given.
    pub text: String,
    /// What is wrong.
    pub message: String,
}

/// What a parsed requirement asks of its key's label.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SelectorOperator {
    /// `key=v`, `key==v` (one value) or `key in (a,b)`: present with one of the values.
    In(Vec<String>),
    /// `key!=v` (one value) or `key notin (a,b)`: absent, or present with none of them.
    NotIn(Vec<String>),
    /// `key`: present.
    Exists,
    /// `!key`: absent.
    DoesNotExist,
    /// `key>n`: present and, read as an integer, greater than `n`.
    GreaterThan(i64),
    /// `key<n`: present and, read as an integer, less than `n`.
    LessThan(i64),
}

/// One requirement of a selector string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedRequirement {
    /// The label key.
    pub key: String,
    /// What the key's value must satisfy.
    pub operator: SelectorOperator,
}

/// Parses a selector string into its requirements, all of which must hold; an empty
/// string has none (it selects everything).
pub fn parse_label_selector(text: &str) -> Result<Vec<ParsedRequirement>, SelectorParseError> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    split_top(text)
        .into_iter()
        .map(|part| {
            parse_requirement(part.trim()).map_err(|message| SelectorParseError {
                text: text.to_string(),
                message,
            })
        })
        .collect()
}

/// Splits at commas outside parentheses, so `a in (x,y),b` is two requirements.
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

/// A key as written: validated as a label key (a qualified name).
fn key(text: &str) -> Result<String, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("a requirement has no key".into());
    }
    check_key(text).map_err(|e| e.0)?;
    Ok(text.to_string())
}

/// A value as written: validated as a label value.
fn value(text: &str) -> Result<String, String> {
    let text = text.trim();
    check_value(text).map_err(|e| e.0)?;
    Ok(text.to_string())
}

fn parse_requirement(part: &str) -> Result<ParsedRequirement, String> {
    if part.is_empty() {
        return Err("empty requirement".into());
    }
    let requirement = |k: &str, operator| {
        Ok(ParsedRequirement {
            key: key(k)?,
            operator,
        })
    };
    if let Some(k) = part.strip_prefix('!')
        && !k.starts_with('=')
    {
        return requirement(k, SelectorOperator::DoesNotExist);
    }
    if let Some((k, v)) = part.split_once("!=") {
        return requirement(k, SelectorOperator::NotIn(vec![value(v)?]));
    }
    if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
        return requirement(k, SelectorOperator::In(vec![value(v)?]));
    }
    for (op, greater) in [('>', true), ('<', false)] {
        if let Some((k, v)) = part.split_once(op) {
            let n = v
                .trim()
                .parse::<i64>()
                .map_err(|_| format!("{op} needs an integer, not {:?}", v.trim()))?;
            let operator = if greater {
                SelectorOperator::GreaterThan(n)
            } else {
                SelectorOperator::LessThan(n)
            };
            return requirement(k, operator);
        }
    }
    let (k, rest) = part
        .split_once(char::is_whitespace)
        .map_or((part, ""), |(k, rest)| (k, rest.trim()));
    if rest.is_empty() {
        if k.contains(['(', ')']) {
            return Err(format!("cannot read requirement {part:?}"));
        }
        return requirement(k, SelectorOperator::Exists);
    }
    let (notin, set) = if let Some(set) = rest.strip_prefix("notin") {
        (true, set)
    } else if let Some(set) = rest.strip_prefix("in") {
        (false, set)
    } else {
        return Err(format!("cannot read requirement {part:?}"));
    };
    let word = if notin { "notin" } else { "in" };
    let set = set
        .trim()
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .ok_or_else(|| format!("expected a set: {word} (a,b)"))?;
    let values = set
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(value)
        .collect::<Result<Vec<_>, _>>()?;
    if values.is_empty() {
        return Err("for 'in', 'notin' operators, values set can't be empty".into());
    }
    let operator = if notin {
        SelectorOperator::NotIn(values)
    } else {
        SelectorOperator::In(values)
    };
    requirement(k, operator)
}

#[cfg(test)]
mod tests {
    use super::SelectorOperator::{DoesNotExist, Exists, GreaterThan, In, LessThan, NotIn};
    use super::*;

    fn parsed(text: &str) -> Vec<(String, SelectorOperator)> {
        parse_label_selector(text)
            .expect("parses")
            .into_iter()
            .map(|r| (r.key, r.operator))
            .collect()
    }

    #[test]
    fn every_operator_of_labels_parse() {
        let s = |v: &[&str]| v.iter().map(ToString::to_string).collect::<Vec<_>>();
        assert_eq!(
            parsed("app=web, tier in (a, b),!canary,env!=prod,gpu,x==y,n>3,m<-1,z notin (q)"),
            [
                ("app".into(), In(s(&["web"]))),
                ("tier".into(), In(s(&["a", "b"]))),
                ("canary".into(), DoesNotExist),
                ("env".into(), NotIn(s(&["prod"]))),
                ("gpu".into(), Exists),
                ("x".into(), In(s(&["y"]))),
                ("n".into(), GreaterThan(3)),
                ("m".into(), LessThan(-1)),
                ("z".into(), NotIn(s(&["q"]))),
            ]
        );
        assert_eq!(parsed(""), []);
        assert_eq!(parsed("a="), [("a".into(), In(s(&[""])))]);
    }

    #[test]
    fn malformed_selectors_say_what_is_wrong() {
        let message = |text: &str| parse_label_selector(text).expect_err(text).message;
        assert_eq!(message("a in b"), "expected a set: in (a,b)");
        assert_eq!(message("=x"), "a requirement has no key");
        assert_eq!(message("a,,b"), "empty requirement");
        assert_eq!(message("a b c"), "cannot read requirement \"a b c\"");
        assert_eq!(message("n>x"), "> needs an integer, not \"x\"");
        assert_eq!(
            message("a in ()"),
            "for 'in', 'notin' operators, values set can't be empty"
        );
        assert!(message("a=b c").starts_with("values[0]: Invalid value: \"b c\""));
        assert!(message("-a").starts_with("key: Invalid value: \"-a\""));
        assert_eq!(
            parse_label_selector("a in b")
                .expect_err("refused")
                .to_string(),
            "invalid selector \"a in b\": expected a set: in (a,b)"
        );
    }
}
