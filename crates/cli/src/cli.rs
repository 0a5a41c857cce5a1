//! Command-line definitions, kept apart from what the commands do.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Kubernetes Pod Topology Spread: where pods will land, and why.
#[derive(Debug, Parser)]
#[command(name = "topospread", version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
    /// Read folders given with -f recursively (their subfolders' .yaml, .yml, .json).
    #[arg(short = 'R', long, global = true)]
    pub(crate) recursive: bool,
    /// The most bytes read from one input (file, folder entry, stdin); larger inputs are
    /// refused.
    #[arg(long, global = true, default_value_t = topospread_jobs::DEFAULT_MAX_INPUT_BYTES, value_name = "BYTES")]
    pub(crate) max_input_bytes: u64,
    /// The most pods workload expansion may create in total; a larger replica count is
    /// refused.
    #[arg(long, global = true, default_value_t = topospread_k8s::workloads::DEFAULT_MAX_PODS, value_name = "N")]
    pub(crate) max_pods: usize,
    /// The Kubernetes release to behave as (MAJOR.MINOR, 1.25 to 1.38): its feature-gate
    /// defaults and what changed between releases (README: Kubernetes versions).
    #[arg(long, global = true, value_name = "MAJOR.MINOR")]
    pub(crate) kubernetes_version: Option<String>,
    /// Feature gates as kube-scheduler takes them: `Name=true,Name=false`.
    #[arg(long, global = true, value_name = "NAME=BOOL,...")]
    pub(crate) feature_gates: Option<String>,
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
    /// Plan moves that restore topology spread (or, with --scale, which pods a
    /// scale-down should remove), checked with the scheduler; prints, never evicts.
    Rebalance(RebalanceArgs),
    /// Run as a secondary scheduler in a cluster: schedule the pods whose
    /// spec.schedulerName is one of the configuration's profiles.
    Serve(ServeArgs),
    /// A local web app over the cluster, loaded once: the domains, the pending pods,
    /// each node's verdicts and scores for a pod, what-ifs (http://127.0.0.1:10270/).
    Ui(UiArgs),
    /// The pod-deletion-cost annotations that make ReplicaSet scale-ins keep topology
    /// spread, and the skew predicted after scale-ins; prints, never patches.
    Guard(GuardArgs),
    /// The fewest nodes of the given templates, per zone, that let every pending pod
    /// schedule, checked by simulating them; beside it cluster-autoscaler's binpacking
    /// estimate. --remove-idle: the nodes that can go.
    Capacity(CapacityArgs),
}

/// `topospread capacity`.
#[derive(Debug, Args)]
#[command(mut_arg(
    "files",
    help(
        "Manifest files (a cluster dump with its pending pods); none: the Kubernetes docs' example"
    )
))]
pub(crate) struct CapacityArgs {
    /// The cluster, seed and configuration.
    #[command(flatten)]
    pub(crate) cluster: ClusterArgs,
    /// Files of node templates, each a kind of node that may be added: Node manifests
    /// (labels, taints, status.allocatable; annotations topospread.io/max-count,
    /// topospread.io/price, topospread.io/zones), Karpenter NodePools (karpenter.sh/v1,
    /// sized by --instance-type) or cluster-autoscaler's Cluster API node groups
    /// (MachineDeployment, MachineSet, MachinePool). Repeatable.
    #[arg(long = "node-template", value_name = "FILE", required = true)]
    pub(crate) templates: Vec<PathBuf>,
    /// An instance type a NodePool may launch, with its allocatable (a NodePool does not
    /// state it): NAME=CPU,MEMORY,PODS, then optionally price=P and KEY=VALUE labels
    /// (m6g.large=1930m,7Gi,29,price=0.077,kubernetes.io/arch=arm64). Repeatable.
    #[arg(long = "instance-type", value_name = "NAME=CPU,MEMORY,PODS[,...]")]
    pub(crate) instance_types: Vec<String>,
    /// Also list the nodes that can be removed with every pod rescheduled and no
    /// DoNotSchedule constraint's skew made worse, checked by simulation.
    #[arg(long)]
    pub(crate) remove_idle: bool,
    /// Output: the plan for people, or the versioned JSON report.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = PlanFormat::Table)]
    pub(crate) output: PlanFormat,
}

/// Output formats of `capacity`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum PlanFormat {
    /// The nodes to add and the spread they give, for people.
    Table,
    /// A machine-readable report.
    Json,
    /// One self-contained HTML page: the nodes added per zone and the resulting spread
    /// as bars.
    Html,
}

/// `topospread guard`.
#[derive(Debug, Args)]
pub(crate) struct GuardArgs {
    /// Manifest files (a cluster dump) to plan on; prints the patches.
    // The live-only flags conflict with -f here: their `requires = "live"` alone lets
    // them through, since clap excuses a required --live that conflicts with -f.
    #[arg(
        short = 'f',
        long = "file",
        required_unless_present = "live",
        conflicts_with_all = [
            "live", "dry_run", "kubeconfig", "context", "no_leader_elect", "qps",
            "bind_address", "secure_port", "tls_cert_file", "tls_private_key_file",
            "insecure_serving", "skip_delegated_auth", "authorization_always_allow_paths",
            "log_format",
        ]
    )]
    pub(crate) files: Vec<PathBuf>,
    /// Run the guard against the cluster (see `--kubeconfig`): keep the costs up to
    /// date, leader-elected on the Lease `topospread-guard`, until SIGTERM/SIGINT.
    #[arg(long)]
    pub(crate) live: bool,
    /// Live: print the patches instead of writing them.
    #[arg(long, requires = "live")]
    pub(crate) dry_run: bool,
    /// Live: the kubeconfig file (default: KUBECONFIG, ~/.kube/config, then in-cluster).
    #[arg(long, requires = "live")]
    pub(crate) kubeconfig: Option<PathBuf>,
    /// Live: the kubeconfig context (default: the current context).
    #[arg(long, requires = "live")]
    pub(crate) context: Option<String>,
    /// Live: how /metrics and the health endpoints are served (HTTPS on 10260 by
    /// default, delegated authentication and authorization as `serve`).
    #[command(flatten)]
    pub(crate) serving: SecureServingArgs,
    /// Live: run without leader election (only one replica may then run).
    #[arg(long, requires = "live")]
    pub(crate) no_leader_elect: bool,
    /// Live: patches a second at most.
    #[arg(long, requires = "live", default_value_t = 5.0)]
    pub(crate) qps: f32,
    /// Live: log format on stderr (as `serve --log-format`).
    #[arg(long, requires = "live", value_enum, default_value_t = LogFormat::Text)]
    pub(crate) log_format: LogFormat,
    /// A KubeSchedulerConfiguration file (its PodTopologySpread default constraints).
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// Replace deletion costs a user set by hand too (left alone by default).
    #[arg(long)]
    pub(crate) override_user_costs: bool,
    /// Output: patches and predicted skew for people, JSON, or the patches as YAML
    /// merge-patch documents for `kubectl patch --type merge`.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = OutputFormat::Table)]
    pub(crate) output: OutputFormat,
}

/// How `rebalance` plans.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum StrategyArg {
    /// Greedy moves, each checked with the scheduler and lowering the global violation.
    Topospread,
    /// The descheduler's RemovePodsViolatingTopologySpreadConstraint, in rounds.
    Descheduler,
}

/// `topospread rebalance`.
#[derive(Debug, Args)]
#[command(mut_arg(
    "files",
    help("Manifest files (a cluster dump); none: the Kubernetes docs' example")
))]
pub(crate) struct RebalanceArgs {
    /// The cluster (nothing is written to a live one), seed and configuration.
    #[command(flatten)]
    pub(crate) cluster: ClusterArgs,
    /// Only move pods of this namespace (and report only its workloads).
    #[arg(short = 'n', long)]
    pub(crate) namespace: Option<String>,
    /// Only move pods this label selector matches (`app=web,tier!=db`).
    #[arg(short = 'l', long = "selector")]
    pub(crate) selector: Option<String>,
    /// At most this many moves (evictions for the descheduler strategy).
    #[arg(long, default_value_t = 1000)]
    pub(crate) max_moves: usize,
    /// The planning strategy.
    #[arg(long, value_enum, default_value_t = StrategyArg::Topospread)]
    pub(crate) strategy: StrategyArg,
    /// Descheduler strategy: balance ScheduleAnyway constraints too.
    #[arg(long)]
    pub(crate) include_schedule_anyway: bool,
    /// Descheduler strategy: its `topologyBalanceNodeFit: false` (evict pods that fit
    /// no node of a below-average domain too).
    #[arg(long)]
    pub(crate) no_topology_balance_node_fit: bool,
    /// Descheduler strategy: the default evictor's `nodeFit: true` (evict only pods
    /// that fit some other node).
    #[arg(long)]
    pub(crate) node_fit: bool,
    /// Descheduler strategy: its `namespaces.exclude` (repeatable).
    #[arg(long, value_name = "NAMESPACE")]
    pub(crate) exclude_namespace: Vec<String>,
    /// Plan a scale-down instead: `deployment/web=3` (also replicaset/NAME,
    /// replicationcontroller/NAME); prints the pod-deletion-cost annotations.
    #[arg(long, value_name = "KIND/NAME=N")]
    pub(crate) scale: Option<String>,
    /// Output: the plan for people, JSON, the resulting snapshot as YAML, or an HTML page.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = ReportFormat::Table)]
    pub(crate) output: ReportFormat,
}

/// Secure serving of /metrics and the health endpoints, as kube-scheduler's flags:
/// shared by `serve` and `guard --live`.
#[derive(Debug, Args)]
pub(crate) struct SecureServingArgs {
    /// The address /metrics, /healthz, /livez and /readyz listen on, as kube-scheduler's
    /// flag.
    #[arg(long, value_name = "IP", default_value = "0.0.0.0")]
    pub(crate) bind_address: std::net::IpAddr,
    /// Their port, HTTPS, as kube-scheduler's flag (default 10259 for `serve`, 10260 for
    /// `guard --live`); 0: serve nothing.
    #[arg(long, value_name = "PORT")]
    pub(crate) secure_port: Option<u16>,
    /// The serving certificate (PEM, the chain after it). Without it and
    /// --tls-private-key-file, a self-signed one is made at start-up for localhost,
    /// 127.0.0.1 and the host name, as kube-scheduler does.
    #[arg(long, value_name = "FILE", requires = "tls_private_key_file")]
    pub(crate) tls_cert_file: Option<PathBuf>,
    /// The serving certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert_file")]
    pub(crate) tls_private_key_file: Option<PathBuf>,
    /// For local use: plain HTTP on --bind-address and --secure-port, with no
    /// authentication or authorization (kube-scheduler has no such mode).
    #[arg(long, conflicts_with_all = ["tls_cert_file", "tls_private_key_file"])]
    pub(crate) insecure_serving: bool,
    /// For local use: HTTPS, but /metrics answers anyone (no TokenReview or
    /// SubjectAccessReview).
    #[arg(long)]
    pub(crate) skip_delegated_auth: bool,
    /// Paths answered without authorization (a trailing `*` matches a prefix), as
    /// kube-scheduler's flag and its default.
    #[arg(
        long,
        value_name = "PATHS",
        value_delimiter = ',',
        default_value = "/healthz,/readyz,/livez"
    )]
    pub(crate) authorization_always_allow_paths: Vec<String>,
}

/// `topospread ui`. Without the `ui` feature (part of `live`) the flags parse and the
/// command is refused, so nothing reads them there.
#[derive(Debug, Args)]
#[cfg_attr(not(feature = "ui"), allow(dead_code))]
#[command(
    mut_arg(
        "files",
        help(
            "Manifest files, folders (-R to recurse) or `-` for stdin, as \
        `simulate` reads them; none: the Kubernetes docs' example"
        )
    ),
    mut_arg("seed", help(SEED_AS_IN_SIMULATE))
)]
pub(crate) struct UiArgs {
    /// The cluster, seed and configuration, as `simulate` takes them.
    #[command(flatten)]
    pub(crate) cluster: ClusterArgs,
    /// Set a workload's replicas first, as `simulate --scale` (`deployment/web=5`).
    #[arg(long = "scale", value_name = "KIND/NAME=N")]
    pub(crate) scale: Vec<topospread_k8s::workloads::Scale>,
    /// The address to listen on (loopback by default: anything else exposes the
    /// cluster's contents to the network).
    #[arg(long, default_value = "127.0.0.1")]
    pub(crate) address: std::net::IpAddr,
    /// The port (0: any free port; the URL is printed on stderr).
    #[arg(long, default_value_t = 10270)]
    pub(crate) port: u16,
    /// `-n`: the namespace of objects that name none.
    #[command(flatten)]
    pub(crate) namespace: NamespaceArgs,
    /// Node templates for the Capacity view, as `capacity --node-template`. Repeatable.
    #[arg(long = "node-template", value_name = "FILE")]
    pub(crate) templates: Vec<PathBuf>,
    /// Instance types of the templates' NodePools, as `capacity --instance-type`.
    #[arg(long = "instance-type", value_name = "NAME=CPU,MEMORY,PODS[,...]")]
    pub(crate) instance_types: Vec<String>,
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
    /// How /metrics and the health endpoints are served (HTTPS on 10259 by default).
    #[command(flatten)]
    pub(crate) serving: SecureServingArgs,
    /// Log format on stderr.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub(crate) log_format: LogFormat,
    /// Accept `leaderElection.resourceName: kube-scheduler` (the cluster scheduler's own
    /// Lease: holding it stops that scheduler). Without it such a config is refused.
    #[arg(long)]
    pub(crate) allow_kube_scheduler_lease: bool,
    /// How many workloads `topospread_domain_skew` reports (the most skewed); 0: none.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub(crate) skew_metrics_top: usize,
    /// Run the guard beside the scheduler (see `topospread guard --live`): keep
    /// ReplicaSets' pod-deletion-costs spread-preserving, on its own Lease when the
    /// configuration elects a leader.
    #[arg(long)]
    pub(crate) guard: bool,
    /// Client queries per second (overrides clientConnection.qps; default 50; negative:
    /// no limit), as kube-scheduler's flag.
    #[arg(long, value_name = "QPS", allow_negative_numbers = true)]
    pub(crate) kube_api_qps: Option<f32>,
    /// Client burst (overrides clientConnection.burst; default 100), as kube-scheduler's
    /// flag.
    #[arg(long, value_name = "N")]
    pub(crate) kube_api_burst: Option<u32>,
    /// Serve a cluster whose release topospread does not model (outside 1.25 to 1.38),
    /// behaving as the nearest supported release (default: refused at start-up; or give
    /// --kubernetes-version).
    #[arg(long)]
    pub(crate) allow_unsupported_kubernetes_version: bool,
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
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct BenchArgs {
    /// `bench load`: loading and simulating a generated cluster dump; `bench guard`:
    /// the guard's planning on a generated cluster.
    #[command(subcommand)]
    pub(crate) command: Option<BenchCommand>,
    /// The workload: topology-spreading, preferred-topology-spreading,
    /// default-topology-spreading, node-inclusion-policy (each also with `-500nodes`),
    /// unschedulable, preemption-unhelpful.
    #[arg(required = true)]
    pub(crate) workload: Option<String>,
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
    /// Run every pod's whole cycle, even when an identical pod just failed on the same
    /// cluster (the reference the failure cache is checked against).
    #[arg(long)]
    pub(crate) no_failure_cache: bool,
    /// Run the workload this many times, each on a fresh cluster, and report the run
    /// with the median throughput (shared machines are noisy).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub(crate) runs: u32,
}

/// `topospread bench` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum BenchCommand {
    /// Generate a kubectl-style dump (nodes and bound pods, JSON or YAML) plus a
    /// Deployment with spread constraints, then measure `simulate` on it: load time,
    /// simulate time and peak RSS, each run in a fresh process.
    Load(BenchLoadArgs),
    /// Generate a cluster of spread ReplicaSets in memory (the shape of
    /// tests/rebalance/generate_large.py) and time the guard's planning on it.
    Guard(BenchGuardArgs),
}

/// `topospread bench guard`.
#[derive(Debug, Args)]
pub(crate) struct BenchGuardArgs {
    /// Nodes, over three zones.
    #[arg(long, default_value_t = 5000)]
    pub(crate) nodes: usize,
    /// ReplicaSets, each spread over zones (DoNotSchedule) and nodes (ScheduleAnyway).
    #[arg(long, default_value_t = 500)]
    pub(crate) replica_sets: usize,
    /// Pods per ReplicaSet.
    #[arg(long, default_value_t = 100)]
    pub(crate) replicas: usize,
    /// Plan this many times on the same cluster and report the median.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub(crate) runs: u32,
    /// Output format of the figures.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = BenchFormat::Text)]
    pub(crate) output: BenchFormat,
}

/// `topospread bench load`.
#[derive(Debug, Args)]
pub(crate) struct BenchLoadArgs {
    /// Nodes in the dump.
    #[arg(long, default_value_t = 5000)]
    pub(crate) nodes: usize,
    /// Bound pods in the dump.
    #[arg(long, default_value_t = 50_000)]
    pub(crate) pods: usize,
    /// Replicas of the Deployment simulated on top.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(i32).range(0..))]
    pub(crate) replicas: i32,
    /// The dump's format, as `kubectl get -o` writes it.
    #[arg(long, value_enum, default_value_t = DumpFormatArg::Json)]
    pub(crate) format: DumpFormatArg,
    /// Output format of the figures.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = BenchFormat::Text)]
    pub(crate) output: BenchFormat,
    /// Measure this many times (a fresh process each) and report the median.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub(crate) runs: u32,
    /// Write the files here and keep them (default: a temporary folder, removed after).
    #[arg(long)]
    pub(crate) dir: Option<PathBuf>,
    /// Measure this existing dump (JSON or YAML, e.g. `gen_dump.py`'s) instead of
    /// generating one; `json.load` reads it, or for YAML the `.json` file of the same name.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["nodes", "pods", "format"])]
    pub(crate) dump: Option<PathBuf>,
    /// Internal: measure `simulate` on these files in this process and print one JSON
    /// line (the parent runs each measurement in a fresh process).
    #[arg(long, hide = true, num_args = 1..)]
    pub(crate) measure: Vec<PathBuf>,
}

/// `topospread bench load --format`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum DumpFormatArg {
    /// `kubectl get -o json`.
    Json,
    /// `kubectl get -o yaml`.
    Yaml,
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
#[command(mut_arg(
    "files",
    help(
        "Manifest files, folders (-R to recurse) or `-` for stdin (Nodes, Pods, workloads; \
        YAML or JSON, `kind: List`, kubectl dumps); none: the Kubernetes docs' example"
    )
))]
pub(crate) struct ShowArgs {
    /// The cluster's objects.
    #[command(flatten)]
    pub(crate) source: SourceArgs,
    /// Mark pods matching this label selector (`app=web,tier in (a,b)`); default: the
    /// first topology spread constraint's selector, else every pod.
    #[arg(short = 'l', long)]
    pub(crate) selector: Option<String>,
    /// Topology keys to draw, outermost first (repeat the flag); default: the keys of the
    /// first constrained pod's constraints (without --selector), else the zone key then
    /// the hostname key the nodes carry.
    #[arg(long = "topology-key")]
    pub(crate) topology_keys: Vec<String>,
    /// Wrap rows of boxes wider than this many columns (default: `COLUMNS`, else 80);
    /// nodes that do not fit even so are drawn as one summary per domain.
    #[arg(long)]
    pub(crate) width: Option<usize>,
    /// Draw every node and list every domain's count, however wide.
    #[arg(long)]
    pub(crate) wide: bool,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = ShowFormat::Text)]
    pub(crate) output: ShowFormat,
    /// `-n`: the namespace of objects that name none.
    #[command(flatten)]
    pub(crate) namespace: NamespaceArgs,
}

/// Output formats of `show`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ShowFormat {
    /// The drawing, for people.
    Text,
    /// The counts per domain, machine-readable (`kind: ShowReport`).
    Json,
}

/// Output formats of `simulate` and `rebalance`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ReportFormat {
    /// A table and per-workload spread, for people.
    Table,
    /// The resulting snapshot (nodes, workloads, pods with spec.nodeName), usable as input.
    Yaml,
    /// A machine-readable report.
    Json,
    /// One self-contained HTML page (inline CSS and SVG charts, a little script to sort
    /// tables; nothing fetched), to attach to a pull request or an incident.
    Html,
}

/// Output formats of `guard`.
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
#[command(mut_arg(
    "files",
    help(
        "Manifest files, folders (-R to recurse) or `-` for stdin; a \
        KubeSchedulerConfiguration among them is used as --config is; none: the Kubernetes \
        docs' example (4 nodes, 2 zones, 6 replicas)"
    )
))]
pub(crate) struct SimulateArgs {
    /// The cluster, seed and configuration.
    #[command(flatten)]
    pub(crate) cluster: ClusterArgs,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = ReportFormat::Table)]
    pub(crate) output: ReportFormat,
    /// Also draw the cluster after scheduling (table output).
    #[arg(long)]
    pub(crate) show: bool,
    /// List every domain's count (table output); by default a key with more domains
    /// than fit a line is summarised (domains, min/max/skew, histogram, extremes).
    #[arg(long)]
    pub(crate) wide: bool,
    /// What-if: drain these nodes as `kubectl drain --ignore-daemonsets` does (cordoned
    /// and kept; pods evicted through their PodDisruptionBudgets, replacements
    /// scheduled with the node still counted). Repeatable.
    #[arg(long = "drain", value_name = "NODE")]
    pub(crate) drain: Vec<String>,
    /// What-if: delete these Node objects before scheduling (their controllers' pods
    /// come back pending and are rescheduled). Repeatable.
    #[arg(long = "remove-node", value_name = "NODE")]
    pub(crate) remove_node: Vec<String>,
    /// What-if: lose every node labelled KEY=VALUE (a zone outage:
    /// `topology.kubernetes.io/zone=us-east-1a`), as --remove-node does. Repeatable.
    #[arg(long = "lose", value_name = "KEY=VALUE")]
    pub(crate) lose: Vec<String>,
    /// Set a workload's replicas (repeatable): `deployment/web=5`,
    /// `statefulset/prod/db=2` (KIND/[NAMESPACE/]NAME=N); extra pods are removed in the
    /// controller's order.
    #[arg(long = "scale", value_name = "KIND/NAME=N")]
    pub(crate) scale: Vec<topospread_k8s::workloads::Scale>,
    /// Rollouts: seconds from a new pod's binding until it is Ready (its kubelet's
    /// start-up and readiness probe); `minReadySeconds` comes on top before it counts
    /// as available to the deployment controller.
    #[arg(long = "ready-after", value_name = "SECONDS", default_value_t = 0)]
    pub(crate) ready_after: u32,
    /// `-n`: the namespace of objects that name none.
    #[command(flatten)]
    pub(crate) namespace: NamespaceArgs,
}

/// `topospread explain`.
#[derive(Debug, Args)]
#[command(mut_arg("seed", help(SEED_AS_IN_SIMULATE)))]
pub(crate) struct ExplainArgs {
    /// The cluster, seed (as in `simulate`) and configuration.
    #[command(flatten)]
    pub(crate) cluster: ClusterArgs,
    /// The pending pod, as `name` or `namespace/name` (pods made from workloads count),
    /// or a workload as `KIND/NAME` or `KIND/NAMESPACE/NAME` (`deployment/web`): its next
    /// pending pod.
    pub(crate) pod: String,
    /// Set a workload's replicas first, as `simulate --scale` (`deployment/web=5`), so
    /// `explain deployment/web` shows where the next replica would go.
    #[arg(long = "scale", value_name = "KIND/NAME=N")]
    pub(crate) scale: Vec<topospread_k8s::workloads::Scale>,
    /// Text output: how many of the highest-scoring nodes to list with their per-plugin
    /// scores.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub(crate) top: usize,
    /// Text output: every node with its verdict per Filter plugin and score per Score
    /// plugin, instead of the nodes grouped by verdict and the top-scoring ones.
    #[arg(long)]
    pub(crate) wide: bool,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = ExplainFormat::Text)]
    pub(crate) output: ExplainFormat,
    /// `-n`: the namespace of objects that name none.
    #[command(flatten)]
    pub(crate) namespace: NamespaceArgs,
}

/// Output formats of `explain`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ExplainFormat {
    /// The nodes grouped by verdict and the top-scoring ones (`--wide`: node by node),
    /// for people.
    Text,
    /// The same data, machine-readable.
    Json,
    /// One self-contained HTML page (inline CSS and SVG, a little script to sort the
    /// node table; nothing fetched), to attach to a pull request or an incident.
    Html,
}

/// `topospread test`.
#[derive(Debug, Args)]
pub(crate) struct TestArgs {
    /// Scenario files, or folders searched for *.yaml / *.yml.
    #[arg(required = true)]
    pub(crate) paths: Vec<PathBuf>,
    /// Also list every passing case.
    #[arg(short, long)]
    pub(crate) verbose: bool,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = crate::cmd::test::Format::Text)]
    pub(crate) output: crate::cmd::test::Format,
}

/// Where a command reads the cluster's objects: `-f` manifests and a live cluster.
/// (Commands whose `-f` help says more override it with [`help`].)
#[derive(Debug, Args)]
pub(crate) struct SourceArgs {
    /// Manifest files, folders (-R to recurse) or `-` for stdin; none: the Kubernetes
    /// docs' example.
    #[arg(short = 'f', long = "file")]
    pub(crate) files: Vec<PathBuf>,
    /// Read the live cluster too (see `--kubeconfig`).
    #[command(flatten)]
    pub(crate) live: LiveArgs,
}

/// `-n`: the namespace of manifests that name none, as kubectl's `-n`.
#[derive(Debug, Args)]
pub(crate) struct NamespaceArgs {
    /// The namespace of the files' namespaced objects that name none (an object naming
    /// another is refused, as kubectl refuses it)
    #[arg(short = 'n', long = "namespace", value_name = "NAMESPACE")]
    pub(crate) namespace: Option<String>,
}

/// The cluster a command runs the scheduler over: its objects, the seed and the
/// KubeSchedulerConfiguration (the release and gates are the global flags).
#[derive(Debug, Args)]
pub(crate) struct ClusterArgs {
    /// The objects.
    #[command(flatten)]
    pub(crate) source: SourceArgs,
    /// Seed for generated pod names and for breaking ties between equally scored nodes.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// A KubeSchedulerConfiguration file.
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// The zone the volumes of Immediate StorageClasses' claims are provisioned in
    /// (default: the zone external-provisioner picks for each claim's name).
    #[arg(long, value_name = "ZONE")]
    pub(crate) provision_zone: Option<String>,
}

/// The `--seed` help of the commands that follow `simulate`'s seed (no final period:
/// clap drops it from doc comments, so the overrides match).
const SEED_AS_IN_SIMULATE: &str =
    "Seed for generated pod names and tie-breaking (as in `simulate`)";

/// Replaces a shared flag's help with a command's own wording, in
/// `#[command(mut_arg(..))]`.
fn help(text: &'static str) -> impl FnOnce(clap::Arg) -> clap::Arg {
    move |arg| arg.help(text)
}

/// Where a live cluster is read from. Its objects come first; `-f` files add to them
/// (a new Deployment to try against the real cluster).
#[derive(Debug, Args)]
pub(crate) struct LiveArgs {
    /// Read the cluster this kubeconfig points at.
    #[arg(long, value_name = "FILE")]
    pub(crate) kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (default: its current context).
    #[arg(long, value_name = "NAME")]
    pub(crate) context: Option<String>,
    /// Read the cluster kubectl would: KUBECONFIG, ~/.kube/config, or the in-cluster
    /// service account.
    #[arg(long)]
    pub(crate) live: bool,
    /// Read a cluster whose release topospread does not model (outside 1.25 to 1.38),
    /// behaving as the nearest supported release (default: refused; or give
    /// --kubernetes-version).
    #[arg(long)]
    pub(crate) allow_unsupported_kubernetes_version: bool,
    /// Not a flag: the command reading the cluster, named in the client's User-Agent
    /// (`topospread/VERSION (show)`); `main` sets it after parsing.
    #[arg(skip)]
    #[cfg_attr(not(feature = "cluster"), allow(dead_code))]
    pub(crate) command: &'static str,
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::{CommandFactory, Parser};
    use std::fmt::Write as _;

    /// `cmd`'s help as `--help` prints it, then what the help does not show of each
    /// flag (arity, parser, defaults, required, global, conflicts) sorted by id (clap's
    /// internal order is not the surface; the help's order is), then its subcommands'.
    fn surface(cmd: &clap::Command, path: &str, out: &mut String) {
        let _ = writeln!(out, "===== {path}\n{}", cmd.clone().render_help());
        let mut args: Vec<&clap::Arg> = cmd.get_arguments().collect();
        args.sort_by_key(|a| a.get_id().as_str());
        for arg in args {
            if arg.is_global_set() && path.contains(' ') {
                // A global flag propagates to every subcommand: listed at the top.
                continue;
            }
            let conflicts: Vec<String> = cmd
                .get_arg_conflicts_with(arg)
                .iter()
                .map(|c| c.get_id().to_string())
                .collect();
            let defaults: Vec<String> = arg
                .get_default_values()
                .iter()
                .map(|d| d.to_string_lossy().into_owned())
                .collect();
            let _ = writeln!(
                out,
                "{}: long {:?} short {:?} aliases {:?} values {:?} num_args {:?} parser {:?} \
                 action {:?} defaults {defaults:?} required {} global {} hidden {} \
                 conflicts {conflicts:?} help {:?}",
                arg.get_id(),
                arg.get_long(),
                arg.get_short(),
                arg.get_all_aliases(),
                arg.get_value_names(),
                arg.get_num_args(),
                arg.get_value_parser().type_id(),
                arg.get_action(),
                arg.is_required_set(),
                arg.is_global_set(),
                arg.is_hide_set(),
                arg.get_help().map(ToString::to_string),
            );
        }
        for sub in cmd.get_subcommands() {
            surface(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }

    /// Every command's flags, as users and scripts rely on them: a change here is a
    /// change of the CLI's surface.
    #[test]
    #[cfg_attr(
        not(debug_assertions),
        ignore = "clap names value parsers only in debug builds"
    )]
    fn every_flag_of_every_command() {
        let mut cmd = Cli::command();
        cmd.build();
        let mut out = String::new();
        surface(&cmd, "topospread", &mut out);
        insta::assert_snapshot!("surface", out);
    }

    /// The rules between flags that the help does not print: requirements and
    /// conflicts, as the parser enforces them.
    #[test]
    fn flag_requirements_and_conflicts() {
        let cases: &[&[&str]] = &[
            &["validate"],
            &["validate", "--live"],
            &["validate", "--context", "c"],
            &["validate", "--filename", "a", "b"],
            &["validate", "-f", "a", "--kubeconfig", "k"],
            &["guard"],
            &["guard", "--live"],
            &["guard", "-f", "a", "--live"],
            &["guard", "-f", "a", "--dry-run"],
            &["guard", "-f", "a", "--kubeconfig", "k"],
            &["guard", "-f", "a", "--secure-port", "0"],
            &["guard", "-f", "a", "--qps", "1", "--no-leader-elect"],
            &[
                "guard",
                "-f",
                "a",
                "--config",
                "c",
                "--override-user-costs",
                "-o",
                "json",
            ],
            &[
                "guard",
                "--live",
                "--qps",
                "1",
                "--no-leader-elect",
                "--secure-port",
                "0",
            ],
            &[
                "guard",
                "--live",
                "--kubeconfig",
                "k",
                "--context",
                "c",
                "--dry-run",
            ],
            &["simulate", "-f", "a", "--live"],
            &[
                "simulate", "-f", "a", "-f", "b", "--seed", "3", "--config", "c",
            ],
            &["simulate", "--seed", "x"],
            &["simulate", "--scale", "deployment/web"],
            &["explain"],
            &[
                "explain",
                "web",
                "--kubeconfig",
                "k",
                "--context",
                "c",
                "--scale",
                "deployment/web=2",
            ],
            &[
                "show",
                "-f",
                "a",
                "--live",
                "--allow-unsupported-kubernetes-version",
            ],
            &[
                "rebalance",
                "--live",
                "--seed",
                "1",
                "--config",
                "c",
                "-n",
                "ns",
            ],
            &["rebalance", "--scale", "deployment/web=3", "-f", "a"],
            &[
                "ui",
                "-f",
                "a",
                "--seed",
                "2",
                "--config",
                "c",
                "--scale",
                "deployment/web=2",
            ],
            &["serve", "--config", "c", "--tls-cert-file", "x"],
            &[
                "serve",
                "--config",
                "c",
                "--insecure-serving",
                "--tls-cert-file",
                "x",
                "--tls-private-key-file",
                "y",
            ],
            &[
                "--kubernetes-version",
                "1.30",
                "simulate",
                "--feature-gates",
                "A=true",
            ],
        ];
        let mut out = String::new();
        for argv in cases {
            let parsed =
                Cli::try_parse_from(std::iter::once("topospread").chain(argv.iter().copied()));
            let verdict = match parsed {
                Ok(_) => "ok".to_string(),
                Err(e) => format!("{:?}", e.kind()),
            };
            let _ = writeln!(out, "{}: {verdict}", argv.join(" "));
        }
        insta::assert_snapshot!("flag_rules", out);
    }
}
