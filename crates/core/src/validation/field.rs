//! Field paths and field errors, printed exactly as apimachinery's `field.Path` and
//! `field.Error` print them (`k8s.io/apimachinery/pkg/util/validation/field`).

use std::fmt;

use serde::{Deserialize, Serialize};

/// A path to a field of an object, e.g. `spec.topologySpreadConstraints[0].maxSkew`.
///
/// Built like apimachinery's `field.Path`: [`child`](Self::child) adds `.name`,
/// [`index`](Self::index) adds `[i]`, [`key`](Self::key) adds `[key]`. The root path
/// ([`FieldPath::root`]) is empty, so `root().child("a")` renders as `a` and
/// `root().index(0)` as `[0]`, as a nil `*field.Path` does upstream.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FieldPath {
    rendered: String,
}

impl FieldPath {
    /// The empty path (upstream: a nil `*field.Path`).
    pub fn root() -> Self {
        Self::default()
    }

    /// A path starting at the field `name` (upstream: `field.NewPath(name)`).
    pub fn new(name: &str) -> Self {
        Self::root().child(name)
    }

    /// The path of the field `name` under this one.
    #[must_use]
    pub fn child(&self, name: &str) -> Self {
        let mut rendered = self.rendered.clone();
        if !rendered.is_empty() {
            rendered.push('.');
        }
        rendered.push_str(name);
        Self { rendered }
    }

    /// The path of list item `index` of this field.
    #[must_use]
    pub fn index(&self, index: usize) -> Self {
        Self {
            rendered: format!("{}[{index}]", self.rendered),
        }
    }

    /// The path of map entry `key` of this field (the key is not quoted, as upstream).
    #[must_use]
    pub fn key(&self, key: &str) -> Self {
        Self {
            rendered: format!("{}[{key}]", self.rendered),
        }
    }

    /// The rendered path.
    pub fn as_str(&self) -> &str {
        &self.rendered
    }

    /// Whether this is the empty root path.
    pub fn is_root(&self) -> bool {
        self.rendered.is_empty()
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.rendered)
    }
}

/// Why a field is invalid: the `field.ErrorType`s that topology spread validation uses.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ErrorType {
    /// Malformed or out-of-range value (`FieldValueInvalid`).
    Invalid,
    /// A required value is missing (`FieldValueRequired`).
    Required,
    /// A value outside an enumeration (`FieldValueNotSupported`).
    NotSupported,
    /// A value that must be unique is repeated (`FieldValueDuplicate`).
    Duplicate,
    /// A value not allowed in this context (`FieldValueForbidden`).
    Forbidden,
}

impl ErrorType {
    /// The short name used by the scenario cases (`Invalid`, `NotSupported`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Self::Invalid => "Invalid",
            Self::Required => "Required",
            Self::NotSupported => "NotSupported",
            Self::Duplicate => "Duplicate",
            Self::Forbidden => "Forbidden",
        }
    }

    /// The machine-readable reason, as in a `metav1.StatusCause` (`FieldValueInvalid`, ...).
    pub fn reason(self) -> &'static str {
        match self {
            Self::Invalid => "FieldValueInvalid",
            Self::Required => "FieldValueRequired",
            Self::NotSupported => "FieldValueNotSupported",
            Self::Duplicate => "FieldValueDuplicate",
            Self::Forbidden => "FieldValueForbidden",
        }
    }

    /// The human-readable text printed in error messages (`Invalid value`, ...).
    pub fn message(self) -> &'static str {
        match self {
            Self::Invalid => "Invalid value",
            Self::Required => "Required value",
            Self::NotSupported => "Unsupported value",
            Self::Duplicate => "Duplicate value",
            Self::Forbidden => "Forbidden",
        }
    }
}

impl fmt::Display for ErrorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

/// One field-level validation error (upstream: `*field.Error`).
///
/// `Display` prints it as the API server and kubectl do:
/// `spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldError {
    /// The rendered path of the offending field.
    pub field: String,
    /// The kind of error.
    pub kind: ErrorType,
    /// The offending value, already rendered the way Go prints it (`0`, `"x"`); `None`
    /// for errors that do not print a value (Required, Forbidden).
    pub bad_value: Option<String>,
    /// What is wrong, in apimachinery's words (may be empty).
    pub detail: String,
    /// The upstream `field.Error.Origin` (`minimum`, `format=k8s-label-key`, ...), when the
    /// newest upstream code attaches one.
    pub origin: Option<&'static str>,
}

impl FieldError {
    /// An Invalid error (upstream: `field.Invalid`).
    pub fn invalid(path: &FieldPath, value: impl GoValue, detail: impl Into<String>) -> Self {
        Self::with_value(ErrorType::Invalid, path, value.render(), detail.into())
    }

    /// A Required error (upstream: `field.Required`); prints no value.
    pub fn required(path: &FieldPath, detail: impl Into<String>) -> Self {
        Self {
            field: path.to_string(),
            kind: ErrorType::Required,
            bad_value: None,
            detail: detail.into(),
            origin: None,
        }
    }

    /// A Forbidden error (upstream: `field.Forbidden`); prints no value.
    pub fn forbidden(path: &FieldPath, detail: impl Into<String>) -> Self {
        Self {
            field: path.to_string(),
            kind: ErrorType::Forbidden,
            bad_value: None,
            detail: detail.into(),
            origin: None,
        }
    }

    /// A Duplicate error (upstream: `field.Duplicate`); no detail.
    pub fn duplicate(path: &FieldPath, value: impl GoValue) -> Self {
        Self::with_value(ErrorType::Duplicate, path, value.render(), String::new())
    }

    /// A NotSupported error listing the supported values (upstream: `field.NotSupported`).
    pub fn not_supported(path: &FieldPath, value: impl GoValue, supported: &[&str]) -> Self {
        let detail = if supported.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = supported.iter().map(|s| go_quote(s)).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        Self::with_value(ErrorType::NotSupported, path, value.render(), detail)
    }

    /// This error with its origin set (upstream: `.WithOrigin(origin)`).
    #[must_use]
    pub(crate) fn with_origin(mut self, origin: &'static str) -> Self {
        self.origin = Some(origin);
        self
    }

    /// The message without the field name (upstream: `ErrorBody`).
    pub fn body(&self) -> String {
        let mut s = match (self.kind, &self.bad_value) {
            (ErrorType::Required | ErrorType::Forbidden, _) => self.kind.message().to_string(),
            (_, Some(value)) => format!("{}: {value}", self.kind.message()),
            (_, None) => format!("{}: null", self.kind.message()),
        };
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }

    fn with_value(kind: ErrorType, path: &FieldPath, value: String, detail: String) -> Self {
        Self {
            field: path.to_string(),
            kind,
            bad_value: Some(value),
            detail,
            origin: None,
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

impl std::error::Error for FieldError {}

/// A list of errors as one message, as `field.ErrorList.ToAggregate().Error()` prints it:
/// duplicates (same message) dropped, one error printed alone, several as `[a, b]`.
/// `None` when the list is empty.
pub fn aggregate_message(errors: &[FieldError]) -> Option<String> {
    let unique = dedup_by_message(errors);
    match unique.as_slice() {
        [] => None,
        [one] => Some(one.to_string()),
        many => {
            let parts: Vec<String> = many.iter().map(ToString::to_string).collect();
            Some(format!("[{}]", parts.join(", ")))
        }
    }
}

/// The errors with later ones that print the same message dropped, as `ToAggregate` does.
pub fn dedup_by_message(errors: &[FieldError]) -> Vec<FieldError> {
    let mut seen = std::collections::HashSet::new();
    errors
        .iter()
        .filter(|e| seen.insert(e.to_string()))
        .cloned()
        .collect()
}

/// A value that an error prints, rendered as Go's `fmt` would print it in a `field.Error`:
/// integers plainly, strings quoted (`%q`).
pub trait GoValue {
    /// The Go rendering of the value.
    fn render(&self) -> String;
}

impl GoValue for i32 {
    fn render(&self) -> String {
        self.to_string()
    }
}

impl GoValue for i64 {
    fn render(&self) -> String {
        self.to_string()
    }
}

impl GoValue for &str {
    fn render(&self) -> String {
        go_quote(self)
    }
}

impl GoValue for &String {
    fn render(&self) -> String {
        go_quote(self)
    }
}

impl GoValue for String {
    fn render(&self) -> String {
        go_quote(self)
    }
}

/// `s` quoted as Go's `strconv.Quote` / `%q` does: `"`, `\` and control characters escaped,
/// printable Unicode kept.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{07}' => out.push_str("\\a"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            '\u{0b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => {
                let n = c as u32;
                if n <= 0xffff {
                    out.push_str(&format!("\\u{n:04x}"));
                } else {
                    out.push_str(&format!("\\U{n:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_render_like_field_path() {
        let p = FieldPath::new("spec")
            .child("topologySpreadConstraints")
            .index(0);
        assert_eq!(
            p.child("maxSkew").as_str(),
            "spec.topologySpreadConstraints[0].maxSkew"
        );
        assert_eq!(p.index(0).as_str(), "spec.topologySpreadConstraints[0][0]");
        assert_eq!(
            FieldPath::root().child("defaultingType").as_str(),
            "defaultingType"
        );
        assert_eq!(FieldPath::root().index(2).as_str(), "[2]");
        assert_eq!(
            FieldPath::new("metadata")
                .child("labels")
                .key("a/b")
                .as_str(),
            "metadata.labels[a/b]"
        );
        assert!(FieldPath::root().is_root());
    }

    #[test]
    fn errors_print_like_apimachinery() {
        let p = FieldPath::new("spec")
            .child("topologySpreadConstraints")
            .index(0);
        let e = FieldError::invalid(&p.child("maxSkew"), 0, "must be greater than zero");
        assert_eq!(
            e.to_string(),
            "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero"
        );
        let e = FieldError::required(&p.child("topologyKey"), "can not be empty");
        assert_eq!(
            e.to_string(),
            "spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty"
        );
        let e = FieldError::not_supported(
            &p.child("whenUnsatisfiable"),
            "x",
            &["DoNotSchedule", "ScheduleAnyway"],
        );
        assert_eq!(
            e.to_string(),
            "spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: \"x\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\""
        );
        let e = FieldError::duplicate(
            &p.child("{topologyKey, whenUnsatisfiable}"),
            "{zone, DoNotSchedule}",
        );
        assert_eq!(
            e.to_string(),
            "spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: Duplicate value: \"{zone, DoNotSchedule}\""
        );
        let e = FieldError::forbidden(
            &p.child("matchLabelKeys"),
            "must not be specified when labelSelector is not set",
        );
        assert_eq!(
            e.to_string(),
            "spec.topologySpreadConstraints[0].matchLabelKeys: Forbidden: must not be specified when labelSelector is not set"
        );
    }

    #[test]
    fn aggregate_dedups_and_brackets() {
        let p = FieldPath::new("a");
        let one = FieldError::required(&p, "x");
        assert_eq!(aggregate_message(&[]), None);
        assert_eq!(
            aggregate_message(&[one.clone(), one.clone()]).as_deref(),
            Some("a: Required value: x")
        );
        let two = FieldError::required(&FieldPath::new("b"), "y");
        assert_eq!(
            aggregate_message(&[one, two]).as_deref(),
            Some("[a: Required value: x, b: Required value: y]")
        );
    }

    #[test]
    fn quoting_matches_go() {
        assert_eq!(go_quote("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
        assert_eq!(go_quote("\u{1}"), "\"\\x01\"");
        assert_eq!(go_quote("zoné"), "\"zoné\"");
    }
}
