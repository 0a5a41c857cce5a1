//! Name formats of the Kubernetes API: label keys ("qualified names"), label values and
//! DNS-1123 subdomains, with apimachinery's messages
//! (`k8s.io/apimachinery/pkg/util/validation`, `.../api/validate/content`).
//!
//! Each function returns one message per failed rule; an empty list means valid. The
//! messages are those of the released v1.3x apimachinery (`IsQualifiedName` says "a
//! qualified name"; upstream's newest `content.IsLabelKey` says "a valid label key").

/// Longest name part of a qualified name, and longest label value (bytes).
const NAME_MAX_LEN: usize = 63;
/// Longest DNS-1123 subdomain (bytes).
const DNS1123_SUBDOMAIN_MAX_LEN: usize = 253;

const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_ERR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

/// Checks a label key / qualified name: an optional DNS-1123 subdomain prefix and `/`, then
/// a name of 1 to 63 characters matching `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`
/// (upstream: `validation.IsQualifiedName`).
pub fn is_qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push(format!("prefix part {}", empty_error()));
            } else {
                errs.extend(
                    is_dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, &["MyName", "my.name", "123-abc"])
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push(format!("name part {}", empty_error()));
    } else if name.len() > NAME_MAX_LEN {
        errs.push(format!("name part {}", max_len_error(NAME_MAX_LEN)));
    }
    if !is_name_token(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_ERR,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// Checks a label value: empty, or at most 63 characters matching the qualified-name
/// pattern (upstream: `validation.IsValidLabelValue`).
pub fn is_valid_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > NAME_MAX_LEN {
        errs.push(max_len_error(NAME_MAX_LEN));
    }
    if !value.is_empty() && !is_name_token(value) {
        errs.push(regex_error(
            LABEL_VALUE_ERR,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// Checks a lower-case RFC 1123 subdomain of at most 253 characters
/// (upstream: `validation.IsDNS1123Subdomain`).
pub fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LEN {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LEN));
    }
    if !value.split('.').all(is_dns1123_label_token) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, anchored.
fn is_name_token(s: &str) -> bool {
    let bytes = s.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, anchored.
fn is_dns1123_label_token(s: &str) -> bool {
    let ok_end = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let bytes = s.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            ok_end(first) && ok_end(last) && bytes.iter().all(|b| ok_end(b) || *b == b'-')
        }
        _ => false,
    }
}

fn empty_error() -> &'static str {
    "must be non-empty"
}

fn max_len_error(len: usize) -> String {
    format!("must be no more than {len} bytes")
}

/// apimachinery's `RegexError(msg, re, examples...)`.
fn regex_error(msg: &str, re: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{re}')");
    }
    let examples: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{msg} (e.g. {}regex used for validation is '{re}')",
        examples.join(" or ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_names() {
        for ok in [
            "a",
            "A",
            "k8s.io/zone",
            "topology.kubernetes.io/zone",
            "a-b_c.d",
            "1",
            "example.com/MyName",
        ] {
            assert!(is_qualified_name(ok).is_empty(), "{ok}");
        }
        assert_eq!(
            is_qualified_name("/simple"),
            vec!["prefix part must be non-empty".to_string()]
        );
        assert_eq!(is_qualified_name("").len(), 2);
        assert_eq!(is_qualified_name("a/").len(), 2);
        assert_eq!(
            is_qualified_name("a/b/c"),
            vec![
                "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
                    .to_string()
            ]
        );
        assert_eq!(
            is_qualified_name("NoUppercaseOrSpecialCharsLike=Equals"),
            vec!["name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')".to_string()]
        );
        let long = "a".repeat(64);
        assert_eq!(
            is_qualified_name(&long),
            vec!["name part must be no more than 63 bytes".to_string()]
        );
        assert_eq!(is_qualified_name("Example.com/a").len(), 1);
        assert!(
            is_qualified_name("Example.com/a")[0].starts_with("prefix part a lowercase RFC 1123")
        );
        assert_eq!(is_qualified_name("-a").len(), 1);
        assert_eq!(is_qualified_name("a-").len(), 1);
    }

    #[test]
    fn label_values() {
        assert!(is_valid_label_value("").is_empty());
        assert!(is_valid_label_value("my_value.1-x").is_empty());
        assert_eq!(is_valid_label_value("-x").len(), 1);
        assert_eq!(is_valid_label_value("a b").len(), 1);
        assert_eq!(is_valid_label_value(&"a".repeat(63)).len(), 0);
        assert_eq!(is_valid_label_value(&"a".repeat(64)).len(), 1);
        assert_eq!(is_valid_label_value(&"-".repeat(64)).len(), 2);
    }

    #[test]
    fn subdomains() {
        assert!(is_dns1123_subdomain("example.com").is_empty());
        assert!(is_dns1123_subdomain("a-1.b").is_empty());
        assert_eq!(is_dns1123_subdomain("").len(), 1);
        assert_eq!(is_dns1123_subdomain("a..b").len(), 1);
        assert_eq!(is_dns1123_subdomain("A.com").len(), 1);
        assert_eq!(is_dns1123_subdomain("a_b").len(), 1);
        assert_eq!(is_dns1123_subdomain(&"a".repeat(254)).len(), 1);
    }
}
