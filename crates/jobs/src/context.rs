//! What every job follows besides its own request: the input limits and folder walk, and
//! the Kubernetes release with its feature gates. Passed to each call; nothing global.

use topospread::Features;
use topospread::version::{FeatureGates, KubernetesVersion, VersionError};
use topospread_k8s::validation::ApiServerFeatures;
use topospread_k8s::workloads;

/// The default of `--max-input-bytes`: 256 MiB.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 256 * 1024 * 1024;

/// The limits and folder walk every job's input goes through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct InputOptions {
    /// `--max-input-bytes`: the most bytes read from one input.
    pub max_input_bytes: u64,
    /// `--max-pods`: the most pods workload expansion makes.
    pub max_pods: usize,
    /// `-R`: folders are walked recursively.
    pub recursive: bool,
}

impl Default for InputOptions {
    fn default() -> Self {
        Self {
            max_input_bytes: DEFAULT_MAX_INPUT_BYTES,
            max_pods: workloads::DEFAULT_MAX_PODS,
            recursive: false,
        }
    }
}

impl InputOptions {
    /// The limits given, folders walked recursively or not.
    pub fn new(max_input_bytes: u64, max_pods: usize, recursive: bool) -> Self {
        Self {
            max_input_bytes,
            max_pods,
            recursive,
        }
    }
}

/// The settings a job runs under.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Context {
    input: InputOptions,
    gates: FeatureGates,
    version_given: bool,
}

impl Context {
    /// The newest release's defaults and the default input limits.
    pub fn new() -> Self {
        Self::default()
    }

    /// From `--kubernetes-version` and `--feature-gates` as given (`None`: not given).
    pub fn from_flags(
        version: Option<&str>,
        feature_gates: Option<&str>,
    ) -> Result<Self, VersionError> {
        let release = match version {
            Some(v) => v.parse::<KubernetesVersion>()?,
            None => KubernetesVersion::NEWEST,
        };
        let mut gates = FeatureGates::new(release);
        if let Some(spec) = feature_gates {
            gates.apply(spec)?;
        }
        Ok(Self {
            input: InputOptions::default(),
            gates,
            version_given: version.is_some(),
        })
    }

    /// With these input limits.
    pub fn with_input(mut self, input: InputOptions) -> Self {
        self.input = input;
        self
    }

    /// With this release and gates; `given` says the user chose the release (else the
    /// nodes' own release is only noted when it differs).
    pub fn with_gates(mut self, gates: FeatureGates, given: bool) -> Self {
        self.gates = gates;
        self.version_given = given;
        self
    }

    /// The input limits.
    pub fn input(&self) -> InputOptions {
        self.input
    }

    /// The release's gates with `--feature-gates` applied.
    pub fn gates(&self) -> &FeatureGates {
        &self.gates
    }

    /// Whether the release was chosen by the user.
    pub fn version_given(&self) -> bool {
        self.version_given
    }

    /// The scheduler's view of the gates.
    pub fn scheduler_features(&self) -> Features {
        self.gates.scheduler_features()
    }

    /// The API server's view of the gates.
    pub fn api_server_features(&self) -> ApiServerFeatures {
        ApiServerFeatures::from_gates(&self.gates)
    }
}
