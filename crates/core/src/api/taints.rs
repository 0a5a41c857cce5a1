/// A taint's effect.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TaintEffect {
    /// New pods that do not tolerate it are not scheduled.
    NoSchedule,
    /// The scheduler tries to avoid the node.
    PreferNoSchedule,
    /// New pods are not scheduled and running ones are evicted.
    NoExecute,
}

impl TaintEffect {
    /// Parses an effect as written in a manifest.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "NoSchedule" => Some(Self::NoSchedule),
            "PreferNoSchedule" => Some(Self::PreferNoSchedule),
            "NoExecute" => Some(Self::NoExecute),
            _ => None,
        }
    }

    /// The effect's API name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoSchedule => "NoSchedule",
            Self::PreferNoSchedule => "PreferNoSchedule",
            Self::NoExecute => "NoExecute",
        }
    }

    /// Whether the effect keeps new pods off the node (`DoNotScheduleTaintsFilterFunc`).
    pub fn blocks_scheduling(self) -> bool {
        matches!(self, Self::NoSchedule | Self::NoExecute)
    }
}

/// A node taint.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Taint {
    /// The taint key.
    pub key: Box<str>,
    /// The taint value (may be empty).
    pub value: Box<str>,
    /// The effect.
    pub effect: TaintEffect,
}

impl std::fmt::Display for Taint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.value.is_empty() {
            write!(f, "{}: {}", self.key, self.effect.as_str())
        } else {
            write!(f, "{}={}: {}", self.key, self.value, self.effect.as_str())
        }
    }
}

/// How a toleration compares values.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TolerationOp {
    /// Values must be equal (also the meaning of an empty operator).
    Equal,
    /// Any value.
    Exists,
    /// The taint's value, as an integer, is less than the toleration's (gated).
    Lt,
    /// The taint's value, as an integer, is greater than the toleration's (gated).
    Gt,
    /// An operator the API does not know: tolerates nothing.
    Unknown,
}

/// A pod toleration.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Toleration {
    /// The taint key; empty means every key.
    pub key: Box<str>,
    /// The comparison.
    pub op: TolerationOp,
    /// The value compared against the taint's.
    pub value: Box<str>,
    /// The effect it tolerates; `None` means every effect.
    pub effect: Option<TaintEffect>,
}

impl Toleration {
    /// Whether this toleration tolerates `taint` (`ToleratesTaint`). `comparison_ops` is
    /// the TaintTolerationComparisonOperators gate: off, `Lt`/`Gt` tolerate nothing.
    pub fn tolerates(&self, taint: &Taint, comparison_ops: bool) -> bool {
        if self.effect.is_some_and(|e| e != taint.effect) {
            return false;
        }
        if !self.key.is_empty() && self.key != taint.key {
            return false;
        }
        match self.op {
            TolerationOp::Equal => self.value == taint.value,
            TolerationOp::Exists => true,
            TolerationOp::Lt | TolerationOp::Gt if comparison_ops => {
                let (Ok(ours), Ok(theirs)) =
                    (self.value.parse::<i64>(), taint.value.parse::<i64>())
                else {
                    return false;
                };
                if self.op == TolerationOp::Lt {
                    theirs < ours
                } else {
                    theirs > ours
                }
            }
            _ => false,
        }
    }
}

/// The first taint, among those `filter` keeps, that no toleration tolerates
/// (`FindMatchingUntoleratedTaint`).
pub fn find_untolerated_taint<'t>(
    taints: &'t [Taint],
    tolerations: &[Toleration],
    comparison_ops: bool,
    filter: impl Fn(&Taint) -> bool,
) -> Option<&'t Taint> {
    taints.iter().filter(|t| filter(t)).find(|t| {
        !tolerations
            .iter()
            .any(|tol| tol.tolerates(t, comparison_ops))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taint(key: &str, value: &str, effect: TaintEffect) -> Taint {
        Taint {
            key: key.into(),
            value: value.into(),
            effect,
        }
    }

    fn tol(key: &str, op: TolerationOp, value: &str, effect: Option<TaintEffect>) -> Toleration {
        Toleration {
            key: key.into(),
            op,
            value: value.into(),
            effect,
        }
    }

    #[test]
    fn equal_exists_and_effects() {
        let t = taint("foo", "bar", TaintEffect::NoSchedule);
        assert!(tol("foo", TolerationOp::Equal, "bar", None).tolerates(&t, false));
        assert!(!tol("foo", TolerationOp::Equal, "baz", None).tolerates(&t, false));
        assert!(tol("", TolerationOp::Exists, "", None).tolerates(&t, false));
        assert!(
            !tol(
                "foo",
                TolerationOp::Exists,
                "",
                Some(TaintEffect::NoExecute)
            )
            .tolerates(&t, false)
        );
    }

    #[test]
    fn comparison_operators_follow_the_gate() {
        let t = taint("sla", "800", TaintEffect::NoSchedule);
        let gt750 = tol("sla", TolerationOp::Gt, "750", None);
        let gt950 = tol("sla", TolerationOp::Gt, "950", None);
        assert!(gt750.tolerates(&t, true));
        assert!(!gt950.tolerates(&t, true));
        assert!(!gt750.tolerates(&t, false));
        assert!(tol("sla", TolerationOp::Lt, "900", None).tolerates(&t, true));
        assert!(!tol("sla", TolerationOp::Lt, "x", None).tolerates(&t, true));
    }
}
