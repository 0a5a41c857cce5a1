//! Validation scenario cases (`tests/conformance/validation/*.yaml`, FORMAT.md
//! "Validation cases"): a pod or a `PodTopologySpreadArgs`, optional
//! `PodValidationOptions`, and the expected verdict and errors.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use serde::Deserialize;

use crate::Mismatch;
use topospread::config::PodTopologySpreadArgs;
use topospread::validation::validate_pod_topology_spread_args;
use topospread::validation::{ErrorType, FieldError, FieldPath};
use topospread::validation::{PodValidationOptions, validate_topology_spread_constraints};
use topospread_k8s::load::LoadError;

/// A file of validation cases: `cases: [...]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValidationCaseFile {
    /// The cases, in file order.
    pub cases: Vec<ValidationCase>,
}

/// One validation case.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValidationCase {
    /// Unique within its file.
    pub name: String,
    /// Where upstream the case comes from.
    pub source: String,
    /// Feature gates by case-file name (`matchLabelKeys`, ...). Validation cases validate
    /// as written with `options`, so gates do not change the outcome; kept for the record.
    #[serde(default)]
    pub features: BTreeMap<String, bool>,
    /// The pod whose `spec.topologySpreadConstraints` is validated as written (no
    /// create-time merge). `apiVersion`/`kind` may be left out.
    #[serde(default)]
    pub pod: Option<Pod>,
    /// The plugin args to validate (v1 field names).
    #[serde(default)]
    pub args: Option<PodTopologySpreadArgs>,
    /// Any object topospread reads (a workload, a LimitRange...), with `apiVersion` and
    /// `kind`: validated whole as the API server validates it on create
    /// (`topospread_k8s::validation::validate_objects`).
    #[serde(default)]
    pub object: Option<serde_json::Value>,
    /// The pod validation options; left out = all false.
    #[serde(default)]
    pub options: PodValidationOptions,
    /// The expected verdict.
    pub expect: ValidationExpectation,
}

/// The expected verdict of a validation case.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValidationExpectation {
    /// Whether the input is valid (no error at all).
    pub valid: bool,
    /// Every error, in order.
    #[serde(default)]
    pub errors: Vec<ExpectedError>,
}

/// One expected error: compared by type and field, and by origin when given.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedError {
    /// The rendered field path.
    pub field: String,
    /// The error type.
    #[serde(rename = "type")]
    pub kind: ErrorType,
    /// The upstream origin, if the case names one.
    #[serde(default)]
    pub origin: Option<String>,
}

impl ValidationCaseFile {
    /// Reads a case file as `topospread test` reads its cases: the YAML value tree, then
    /// strict typing, so an unknown key anywhere (also inside the pod and the args, where
    /// k8s-openapi's types would skip it) is an error naming its path.
    pub fn from_yaml(text: &str, file: &str) -> Result<Self, LoadError> {
        let docs = topospread_k8s::load::parse_yaml_documents(text, file)?;
        let doc = match <[serde_json::Value; 1]>::try_from(docs) {
            Ok([doc]) => doc,
            Err(docs) => {
                return Err(LoadError::Read {
                    file: file.to_string(),
                    message: format!(
                        "{} documents, where a validation case file is one",
                        docs.len()
                    ),
                });
            }
        };
        topospread_k8s::load::typed(&doc, file, "the case file")
    }
}

impl ValidationCase {
    /// Runs the validation the case names and returns the errors it produced.
    pub fn validate(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        if let Some(pod) = &self.pod {
            let constraints = pod
                .spec
                .as_ref()
                .and_then(|s| s.topology_spread_constraints.as_deref())
                .unwrap_or_default();
            errors.extend(validate_topology_spread_constraints(
                constraints,
                &FieldPath::new("spec").child("topologySpreadConstraints"),
                &self.options,
            ));
        }
        if let Some(args) = &self.args {
            errors.extend(validate_pod_topology_spread_args(args, &FieldPath::root()));
        }
        if let Some(object) = &self.object {
            errors.extend(validate_object(object));
        }
        errors
    }

    /// Runs the case and returns every expectation that did not hold (empty = pass).
    pub fn run(&self) -> Vec<Mismatch> {
        let mut mismatches = Vec::new();
        let given = [
            self.pod.is_some(),
            self.args.is_some(),
            self.object.is_some(),
        ];
        if given.iter().filter(|g| **g).count() != 1 {
            let set = |g: bool| if g { "set" } else { "unset" };
            mismatches.push(Mismatch {
                expectation: "input".to_string(),
                want: "exactly one of `pod`, `args` and `object`".to_string(),
                got: format!(
                    "pod: {}, args: {}, object: {}",
                    set(given[0]),
                    set(given[1]),
                    set(given[2])
                ),
            });
            return mismatches;
        }
        let errors = self.validate();
        let valid = errors.is_empty();
        if valid != self.expect.valid {
            mismatches.push(Mismatch {
                expectation: "valid".to_string(),
                want: self.expect.valid.to_string(),
                got: valid.to_string(),
            });
        }
        let want: Vec<ErrorKey> = self
            .expect
            .errors
            .iter()
            .map(|e| (e.kind, e.field.clone(), e.origin.clone()))
            .collect();
        let got: Vec<ErrorKey> = errors
            .iter()
            .map(|e| (e.kind, e.field.clone(), e.origin.map(str::to_string)))
            .collect();
        let matches = errors_match(&want, &got);
        if !matches {
            mismatches.push(Mismatch {
                expectation: "errors".to_string(),
                want: render(&want),
                got: errors
                    .iter()
                    .map(|e| match e.origin {
                        Some(o) => format!("{e} (origin {o})"),
                        None => e.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            });
        }
        mismatches
    }
}

/// The API server's create-time errors for one object; an object that does not load
/// is one Invalid error at its root naming why.
fn validate_object(object: &serde_json::Value) -> Vec<FieldError> {
    let source = topospread_k8s::load::Source {
        file: "case".into(),
        document: 1,
        item: None,
    };
    let mut manifests = topospread_k8s::load::Manifests::default();
    if let Err(e) = topospread_k8s::load::parse_object(object, source, &mut manifests) {
        return vec![FieldError::invalid(&FieldPath::root(), "", e.to_string())];
    }
    topospread_k8s::validation::validate_objects(&manifests.objects)
        .into_iter()
        .map(|r| r.error)
        .collect()
}

type ErrorKey = (ErrorType, String, Option<String>);

/// Whether the produced errors (`got`) meet the expected ones (`want`): same length, and
/// in order, same type and field, and the same origin where `want` names one.
///
/// Upstream reports `matchLabels` errors while walking a Go map, so their order across
/// keys is not stable. A run of consecutive errors at the same `...matchLabels` path is
/// therefore compared as a multiset; every other error keeps its position.
fn errors_match(want: &[ErrorKey], got: &[ErrorKey]) -> bool {
    let (want, got) = (segments(want), segments(got));
    want.len() == got.len() && want.iter().zip(&got).all(|(w, g)| segment_matches(w, g))
}

/// Splits a list into single errors and runs of errors at one `matchLabels` path.
fn segments(errors: &[ErrorKey]) -> Vec<&[ErrorKey]> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < errors.len() {
        let field = &errors[start].1;
        let mut end = start + 1;
        if field.ends_with(".matchLabels") {
            while end < errors.len() && &errors[end].1 == field {
                end += 1;
            }
        }
        out.push(&errors[start..end]);
        start = end;
    }
    out
}

fn segment_matches(want: &[ErrorKey], got: &[ErrorKey]) -> bool {
    if want.len() != got.len() {
        return false;
    }
    // Expected errors that name an origin claim their exact match first; those without
    // one then take any remaining error of their type (all share one field here).
    let mut used = vec![false; got.len()];
    let mut ordered: Vec<&ErrorKey> = want.iter().filter(|w| w.2.is_some()).collect();
    ordered.extend(want.iter().filter(|w| w.2.is_none()));
    ordered.into_iter().all(|w| {
        let found = got.iter().enumerate().position(|(i, g)| {
            !used[i] && g.0 == w.0 && g.1 == w.1 && (w.2.is_none() || w.2 == g.2)
        });
        match found {
            Some(i) => {
                used[i] = true;
                true
            }
            None => false,
        }
    })
}

fn render(errors: &[ErrorKey]) -> String {
    if errors.is_empty() {
        return "(none)".to_string();
    }
    errors
        .iter()
        .map(|(kind, field, origin)| match origin {
            Some(o) => format!("{field}: {} (origin {o})", kind.name()),
            None => format!("{field}: {}", kind.name()),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> ValidationCaseFile {
        ValidationCaseFile::from_yaml(yaml, "cases.yaml").unwrap()
    }

    #[test]
    fn a_passing_and_a_failing_case() {
        let file = parse(
            r#"
cases:
- name: ok
  source: here
  pod:
    metadata: {name: p}
    spec:
      containers: []
      topologySpreadConstraints:
      - {maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}
  expect:
    valid: false
    errors:
    - {field: 'spec.topologySpreadConstraints[0].maxSkew', type: Invalid, origin: minimum}
- name: wrong
  source: here
  args: {defaultingType: unknown}
  expect:
    valid: true
"#,
        );
        assert!(file.cases[0].run().is_empty());
        let m = file.cases[1].run();
        let what: Vec<&str> = m.iter().map(|m| m.expectation.as_str()).collect();
        assert_eq!(what, ["valid", "errors"]);
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let r = ValidationCaseFile::from_yaml(
            "cases:\n- {name: x, source: y, args: {}, expect: {valid: true}, extra: 1}\n",
            "cases.yaml",
        );
        assert!(r.is_err());
        let r = ValidationCaseFile::from_yaml(
            "cases:\n- {name: x, source: y, expect: {valid: true},\n   pod: {spec: {topologySpreadConstraints: [{maxSkew: 1, topologykey: z}]}}}\n",
            "cases.yaml",
        );
        match r {
            Err(LoadError::UnknownField { file, field, .. }) => {
                assert_eq!(
                    (file.as_str(), field.as_str()),
                    (
                        "cases.yaml",
                        "cases[0].pod.spec.topologySpreadConstraints[0].topologykey"
                    )
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn match_labels_runs_compare_as_multisets() {
        let key = |o: Option<&str>| {
            (
                ErrorType::Invalid,
                "x.matchLabels".to_string(),
                o.map(str::to_string),
            )
        };
        let other = (ErrorType::Required, "x.y".to_string(), None);
        let lk = Some("format=k8s-label-key");
        let got = [key(lk), key(None), other.clone()];
        assert!(errors_match(&[key(None), key(lk), other.clone()], &got));
        assert!(errors_match(&[key(None), key(None), other.clone()], &got));
        assert!(!errors_match(&[key(lk), key(lk), other.clone()], &got));
        assert!(!errors_match(&[other.clone(), key(lk), key(None)], &got));
        // outside matchLabels, order matters
        let a = (ErrorType::Invalid, "x.a".to_string(), None);
        let b = (ErrorType::Invalid, "x.b".to_string(), None);
        assert!(!errors_match(&[a.clone(), b.clone()], &[b, a]));
    }
}
