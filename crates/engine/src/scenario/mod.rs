//! Scenario cases (`tests/conformance/**.yaml`): clusters, a pod or pods, and expectations.

/// One expectation of a case that did not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// Which expectation, e.g. `filter[node-a]` or `errors`.
    pub expectation: String,
    /// What the case wanted, rendered for a person.
    pub want: String,
    /// What topospread produced, rendered the same way.
    pub got: String,
}
