use std::borrow::Cow;
use std::fmt;

/// A plugin's verdict code, as upstream's `framework.Code`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Code {
    /// The plugin ran and the pod may proceed.
    Success,
    /// An internal error: the scheduling attempt fails and is retried.
    Error,
    /// The node does not fit now; preemption may help.
    Unschedulable,
    /// The node does not fit and preemption cannot help.
    UnschedulableAndUnresolvable,
    /// A Permit plugin asks to wait.
    Wait,
    /// The plugin has nothing to do for this pod; its later extension points are skipped.
    Skip,
    /// The pod waits for something outside the scheduler.
    Pending,
}

impl Code {
    /// The name upstream prints.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Success => "Success",
            Code::Error => "Error",
            Code::Unschedulable => "Unschedulable",
            Code::UnschedulableAndUnresolvable => "UnschedulableAndUnresolvable",
            Code::Wait => "Wait",
            Code::Skip => "Skip",
            Code::Pending => "Pending",
        }
    }

    /// Parses a code name as the scenario files write it.
    pub fn parse(s: &str) -> Option<Self> {
        [
            Code::Success,
            Code::Error,
            Code::Unschedulable,
            Code::UnschedulableAndUnresolvable,
            Code::Wait,
            Code::Skip,
            Code::Pending,
        ]
        .into_iter()
        .find(|c| c.as_str() == s)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A plugin's verdict: a code, the reasons a person reads, and the plugin that gave it.
/// A verdict is data; `Err` is reserved for failures of the program itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    code: Code,
    reasons: Vec<Cow<'static, str>>,
    plugin: Option<&'static str>,
}

impl Default for Status {
    fn default() -> Self {
        Self::success()
    }
}

impl Status {
    /// Success, with no reasons; allocation-free.
    pub const fn success() -> Self {
        Self {
            code: Code::Success,
            reasons: Vec::new(),
            plugin: None,
        }
    }

    /// A status with one reason.
    pub fn new(code: Code, reason: impl Into<Cow<'static, str>>) -> Self {
        Self {
            code,
            reasons: vec![reason.into()],
            plugin: None,
        }
    }

    /// A status with no reason.
    pub(crate) fn code_only(code: Code) -> Self {
        Self {
            code,
            reasons: Vec::new(),
            plugin: None,
        }
    }

    /// Skip: the plugin has nothing to do for this pod.
    pub fn skip() -> Self {
        Self::code_only(Code::Skip)
    }

    /// An internal error.
    pub fn error(reason: impl Into<Cow<'static, str>>) -> Self {
        Self::new(Code::Error, reason)
    }

    /// Adds a reason.
    pub(crate) fn with_reason(mut self, reason: impl Into<Cow<'static, str>>) -> Self {
        self.reasons.push(reason.into());
        self
    }

    /// Records which plugin gave this status.
    pub(crate) fn with_plugin(mut self, plugin: &'static str) -> Self {
        self.plugin = Some(plugin);
        self
    }

    /// The code.
    pub fn code(&self) -> Code {
        self.code
    }

    /// The reasons.
    pub fn reasons(&self) -> &[Cow<'static, str>] {
        &self.reasons
    }

    /// The plugin that gave the status, if recorded.
    pub fn plugin(&self) -> Option<&'static str> {
        self.plugin
    }

    /// Whether the code is Success.
    pub fn is_success(&self) -> bool {
        self.code == Code::Success
    }

    /// Whether the code is Skip.
    pub fn is_skip(&self) -> bool {
        self.code == Code::Skip
    }

    /// Whether the node (or pod) was rejected: Unschedulable or UnschedulableAndUnresolvable.
    pub(crate) fn is_rejected(&self) -> bool {
        matches!(
            self.code,
            Code::Unschedulable | Code::UnschedulableAndUnresolvable
        )
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.reasons.is_empty() {
            f.write_str(self.code.as_str())
        } else {
            write!(f, "{}: {}", self.code, self.reasons.join(", "))
        }
    }
}
