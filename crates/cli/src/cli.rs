//! Command-line definitions, kept apart from what the commands do.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Kubernetes Pod Topology Spread: where pods will land, and why.
#[derive(Debug, Parser)]
#[command(name = "topospread", version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Draw the cluster as the Kubernetes docs do: domains over nodes over pods.
    Show(ShowArgs),
    /// Schedule every pending pod (and the pods workloads would create) and report where they land.
    Simulate(SimulateArgs),
    /// Explain one pending pod: every node's verdict per plugin, scores, domain counts.
    Explain(ExplainArgs),
    /// Run scenario files (files or folders of *.yaml) and check their expectations.
    Test(TestArgs),
    /// Check topologySpreadConstraints and PodTopologySpreadArgs with the API server's and
    /// kube-scheduler's rules, plus lints (TS001...) for what is accepted but will misbehave.
    Validate(crate::cmd::validate::ValidateArgs),
    /// Generate a kube-scheduler scheduler_perf workload in memory, schedule it and print
    /// throughput, latency percentiles, peak memory and nodes scored per pod.
    Bench(BenchArgs),
    /// Run as a secondary scheduler in a cluster: schedule the pods whose
    /// spec.schedulerName is one of the configuration's profiles.
    Serve(ServeArgs),
}

/// `topospread serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The KubeSchedulerConfiguration (its profiles' schedulerNames are what is scheduled;
    /// its leaderElection block configures the Lease).
    #[arg(long)]
    pub(crate) config: PathBuf,
    /// Kubeconfig file (default: KUBECONFIG, ~/.kube/config, then in-cluster).
    #[arg(long)]
    pub(crate) kubeconfig: Option<PathBuf>,
    /// Kubeconfig context (default: the current context).
    #[arg(long)]
    pub(crate) context: Option<String>,
    /// Address for /metrics, /healthz and /readyz (plain http).
    #[arg(long, default_value = "0.0.0.0:10259")]
    pub(crate) listen: std::net::SocketAddr,
    /// Log format on stderr.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub(crate) log_format: LogFormat,
}

/// `topospread serve --log-format`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// `topospread bench`.
#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// The workload: topology-spreading, preferred-topology-spreading,
    /// default-topology-spreading, node-inclusion-policy (each also with `-500nodes`).
    pub(crate) workload: String,
    /// percentageOfNodesToScore: 0 is upstream's adaptive default, 100 scores every node.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(i32).range(0..=100))]
    pub(crate) percentage: i32,
    /// Seed for the tie-break among equally scored nodes.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = BenchFormat::Text)]
    pub(crate) format: BenchFormat,
    /// Count matching pods from scratch for every pod instead of incrementally (slow;
    /// the reference the incremental path is checked against).
    #[arg(long)]
    pub(crate) no_incremental: bool,
    /// Run the workload this many times, each on a fresh cluster, and report the run
    /// with the median throughput (shared machines are noisy).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub(crate) runs: u32,
}

/// `topospread bench --format`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum BenchFormat {
    /// Lines for a person.
    Text,
    /// One JSON object.
    Json,
}

/// `topospread show`.
#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// Manifest files (Nodes, Pods, workloads; multi-document YAML or `kind: List`);
    /// none: the Kubernetes docs' example.
    #[arg(short = 'f', long = "file")]
    pub(crate) files: Vec<PathBuf>,
    /// Mark pods matching this label selector (`app=web,tier in (a,b)`); default: the
    /// first topology spread constraint's selector, else every pod.
    #[arg(short = 'l', long)]
    pub(crate) selector: Option<String>,
    /// Topology keys to draw, outermost first (repeat the flag); default: the zone key
    /// then the hostname key the nodes carry.
    #[arg(long = "topology-key")]
    pub(crate) topology_keys: Vec<String>,
    /// Wrap rows of boxes wider than this many columns.
    #[arg(long, default_value_t = 100)]
    pub(crate) width: usize,
}

/// Output formats of `simulate`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputFormat {
    /// A placement table and per-workload spread, for people.
    Table,
    /// The resulting snapshot (nodes, workloads, pods with spec.nodeName), usable as input.
    Yaml,
    /// A machine-readable report.
    Json,
}

/// `topospread simulate`.
#[derive(Debug, Args)]
pub(crate) struct SimulateArgs {
    /// Manifest files; none: the Kubernetes docs' example (4 nodes, 2 zones, 6 replicas).
    #[arg(short = 'f', long = "file")]
    pub(crate) files: Vec<PathBuf>,
    /// Seed for generated pod names and for breaking ties between equally scored nodes.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// A KubeSchedulerConfiguration file.
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = OutputFormat::Table)]
    pub(crate) output: OutputFormat,
    /// Also draw the cluster after scheduling (table output).
    #[arg(long)]
    pub(crate) show: bool,
}

/// `topospread explain`.
#[derive(Debug, Args)]
pub(crate) struct ExplainArgs {
    /// Manifest files; none: the Kubernetes docs' example.
    #[arg(short = 'f', long = "file")]
    pub(crate) files: Vec<PathBuf>,
    /// The pending pod, as `name` or `namespace/name` (pods made from workloads count).
    pub(crate) pod: String,
    /// Seed for generated pod names and tie-breaking (as in `simulate`).
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// A KubeSchedulerConfiguration file.
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
}

/// `topospread test`.
#[derive(Debug, Args)]
pub(crate) struct TestArgs {
    /// Scenario files, or folders searched for *.yaml / *.yml.
    #[arg(required = true)]
    pub(crate) paths: Vec<PathBuf>,
    /// Also list every passing and skipped case.
    #[arg(short, long)]
    pub(crate) verbose: bool,
}
