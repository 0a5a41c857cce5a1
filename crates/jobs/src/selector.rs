//! Label selectors as `kubectl -l` takes them (`app=web,tier in (a,b),!canary`), read by
//! the core's parser ([`topospread::api::parse_label_selector`]) into the
//! `metav1.LabelSelector` the commands compile.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
pub use topospread::api::SelectorParseError;
use topospread::api::{SelectorOperator, parse_label_selector};

/// Parses a selector string (`=`, `==`, `!=`, `in`, `notin`, `key`, `!key`) into a
/// `LabelSelector`. `>` and `<` parse, but a `LabelSelector` cannot hold them.
pub fn parse_selector(text: &str) -> Result<LabelSelector, SelectorParseError> {
    let mut exprs = Vec::new();
    for r in parse_label_selector(text)? {
        let (operator, values) = match r.operator {
            SelectorOperator::In(values) => ("In", Some(values)),
            SelectorOperator::NotIn(values) => ("NotIn", Some(values)),
            SelectorOperator::Exists => ("Exists", None),
            SelectorOperator::DoesNotExist => ("DoesNotExist", None),
            _ => {
                return Err(SelectorParseError {
                    text: text.to_string(),
                    message: format!(
                        "{}: > and < select nodes, not pods: use =, !=, in, notin, key or !key",
                        r.key
                    ),
                });
            }
        };
        exprs.push(LabelSelectorRequirement {
            key: r.key,
            operator: operator.to_string(),
            values,
        });
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
        let e = parse_selector("gen>3").expect_err("no > in a LabelSelector");
        assert!(e.message.starts_with("gen: > and < select nodes"), "{e}");
    }
}
