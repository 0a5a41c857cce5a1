//! Controller cases: a dump of a live cluster (`kind: List`), its workloads expanded as
//! their controllers would (existing ReplicaSets and pods adopted, scale-downs, rollouts)
//! and scheduled with the default profile, as `topospread simulate` does.

use super::{Mismatch, Outcome, ScenarioError};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use topospread::Features;
use topospread::api::Symbols;
use topospread::config::SchedulerConfig;
use topospread::version::FeatureGates;
use topospread_driver::{
    Admitted, BuildOptions, ClusterDriver, DriverError, Provisioning, SchedulerSetup, World,
    admit_objects, world,
};
use topospread_k8s::load::{self, parse_manifests};
use topospread_k8s::validation::ApiServerFeatures;
use topospread_k8s::workloads::{self, RolloutReport, Scale, WorkloadFeatures};

/// The name expectations give the new ReplicaSet, whose hash the case cannot know.
const NEW: &str = "(new)";

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ControllerCase {
    #[allow(dead_code)]
    name: String,
    #[serde(default)]
    #[allow(dead_code)]
    source: Option<String>,
    /// The dump: a `kind: List` (or one object).
    cluster: Value,
    /// Manifests applied over the dump, as a later `simulate -f` file is: `kubectl
    /// apply`'s update (immutable fields refused, an omitted `spec.replicas` kept).
    #[serde(default)]
    apply: Option<Value>,
    /// `--scale` values.
    #[serde(default)]
    scale: Vec<String>,
    /// The scheduler's gates and the release (`kubernetesVersion`), as other cases.
    #[serde(default)]
    features: Features,
    /// `--feature-gates` over the release's defaults, for the API server and the
    /// controllers (`StatefulSetStartOrdinal=true`).
    #[serde(default)]
    feature_gates: Option<String>,
    /// The ReplicaSet controller's clock (RFC 3339): scale-ins then compare ready and
    /// creation times by LogarithmicScaleDown's buckets; without it, exactly.
    #[serde(default)]
    now: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
    /// Rollouts: seconds from a new pod's binding until it is Ready, as `simulate
    /// --ready-after`.
    #[serde(default)]
    ready_after: u32,
    expect: Expect,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Expect {
    /// Pods created per owner (ReplicaSet, StatefulSet, DaemonSet, Job name), those
    /// admission refused left out; an owner not listed creates none.
    #[serde(default)]
    created: Option<BTreeMap<String, usize>>,
    /// Existing pods removed, in order.
    #[serde(default)]
    removed: Option<Vec<String>>,
    /// Per owner: its bound pods per node at the end (exact).
    #[serde(default)]
    nodes: BTreeMap<String, BTreeMap<String, usize>>,
    /// `--scale` must be refused with an error containing this text.
    #[serde(default)]
    error: Option<String>,
    /// The rollout of the case's Deployment.
    #[serde(default)]
    rollout: Option<RolloutExpect>,
    /// Objects the API server refuses as they are applied (an update of an immutable
    /// field, an invalid object), by `kind/name`, with its message, exactly; an object
    /// not listed is admitted.
    #[serde(default)]
    objects_refused: Option<BTreeMap<String, String>>,
    /// Objects a later manifest was applied over, by `kind/name`, with text its note
    /// contains (`spec.replicas 5 kept`); exact in the objects named.
    #[serde(default)]
    applied: Option<BTreeMap<String, String>>,
    /// Pods admission refused (a ResourceQuota exceeded, ...), with the API server's
    /// message, exactly.
    #[serde(default)]
    refused: Option<BTreeMap<String, String>>,
    /// Pods an OrderedReady StatefulSet never created, by set, lowest ordinal first
    /// (exact; a set not listed has none).
    #[serde(default)]
    not_created: Option<BTreeMap<String, Vec<String>>>,
    /// The claims StatefulSets created from their `volumeClaimTemplates`, by name
    /// (exact, sorted).
    #[serde(default)]
    claims: Option<Vec<String>>,
    /// Per StatefulSet: the pods its rolling update deleted and recreated from the
    /// update revision, in order (exact; a set not listed replaced none).
    #[serde(default)]
    replaced: Option<BTreeMap<String, Vec<String>>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RolloutExpect {
    /// Syncs of the deployment controller.
    #[serde(default)]
    steps: Option<usize>,
    /// Whether it completed.
    #[serde(default)]
    complete: Option<bool>,
    /// The most pods of all revisions together at any step.
    #[serde(default)]
    max_pods: Option<usize>,
    /// The fewest bound pods of all revisions together at any step.
    #[serde(default)]
    min_bound: Option<usize>,
    /// Per step (1-based) and ReplicaSet: bound pods per domain of each topology key.
    #[serde(default)]
    spread: Vec<StepSpread>,
    /// Where it stalled; each field left out is not checked.
    #[serde(default)]
    stalled: Option<StallExpect>,
    /// Per spread constraint (by topology key): the least and greatest end skew over
    /// the interleavings, exactly.
    #[serde(default)]
    end_skew: Vec<SkewExpect>,
    /// Whether the report warns that the rollout can leave the spread skewed.
    #[serde(default)]
    skew_warning: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SkewExpect {
    topology_key: String,
    min: i64,
    max: i64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct StallExpect {
    /// The step it stalled after (1-based; 0 = before the first).
    #[serde(default)]
    step: Option<usize>,
    /// The old ReplicaSets' pods at the stall.
    #[serde(default)]
    old_replicas: Option<usize>,
    /// The new ReplicaSet's pods at the stall.
    #[serde(default)]
    new_replicas: Option<usize>,
    /// Of those, bound.
    #[serde(default)]
    new_available: Option<usize>,
    /// Whether a DoNotSchedule spread constraint keeps a new pod Pending.
    #[serde(default)]
    topology_spread: Option<bool>,
    /// Text the stall's one-line reason must contain.
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct StepSpread {
    /// 1-based; left out = the last step.
    #[serde(default)]
    step: Option<usize>,
    replica_set: String,
    topology_key: String,
    counts: BTreeMap<String, u32>,
}

/// Runs one controller case.
pub(super) fn run(value: &Value, file: &str, name: &str) -> Result<Outcome, ScenarioError> {
    let case: ControllerCase = load::typed(value, file, &format!("case {name:?}"))?;
    let bad = |field: &str, e: &dyn std::fmt::Display| {
        ScenarioError::case(file, name, field, e.to_string())
    };
    let text = serde_json::to_string(&case.cluster).map_err(|e| bad("cluster", &e))?;
    let mut manifests = parse_manifests(&text, file)?;
    if let Some(apply) = &case.apply {
        let text = serde_json::to_string(apply).map_err(|e| bad("apply", &e))?;
        manifests
            .objects
            .extend(parse_manifests(&text, &format!("{file} (apply)"))?.objects);
    }
    workloads::name_generated(&mut manifests.objects, 0);
    let mut scale = Vec::new();
    for (i, s) in case.scale.iter().enumerate() {
        match s.parse::<Scale>() {
            Ok(s) => scale.push(s),
            Err(e) => {
                return expect_error(&case.expect, e.to_string(), &format!("scale[{i}]"), &bad);
            }
        }
    }
    let mut gates = FeatureGates::new(case.features.kubernetes_version());
    if let Some(spec) = &case.feature_gates {
        gates.apply(spec).map_err(|e| bad("featureGates", &e))?;
    }
    // Admitted as `simulate` admits its files: applied over, then validated on create.
    let admitted = match admit_objects(
        &mut manifests.objects,
        &ApiServerFeatures::from_gates(&gates),
    ) {
        Ok(admitted) => admitted,
        Err(e) => return expect_error(&case.expect, e.to_string(), "cluster", &bad),
    };
    let workload_features = match &case.now {
        Some(now) => WorkloadFeatures::from_gates(&gates).at(now.0.as_nanosecond()),
        None => WorkloadFeatures::from_gates(&gates),
    };
    let options = BuildOptions {
        seed: 0,
        max_pods: workloads::DEFAULT_MAX_PODS,
        scale: &scale,
        workloads: workload_features,
        requests: gates.request_options(),
        provisioning: Provisioning::Off,
    };
    // The same driver `topospread simulate` runs: the workloads expanded by their
    // controllers, then scheduled with the StatefulSets syncing and the rollouts after.
    let world = match world::build(&manifests.objects, &Symbols::default(), options) {
        Ok(world) => world,
        Err(DriverError::Refused(e)) => return expect_error(&case.expect, e, "scale", &bad),
        Err(e) => return Err(bad("cluster", &e)),
    };
    if let Some(want) = &case.expect.error {
        return Ok(Outcome::Failed(vec![Mismatch::new(
            "error",
            format!("an error containing {want:?}"),
            "no error",
        )]));
    }
    if let Some(e) = world.expansion.errors.first() {
        return Err(bad("cluster", e));
    }
    let setup = SchedulerSetup::new("default profile", SchedulerConfig::default(), case.features);
    let mut driver = ClusterDriver::start(world, &setup, 0).map_err(|e| bad("config", &e))?;
    driver
        .settle(&mut (), case.ready_after)
        .map_err(|e| bad("cluster", &e))?;
    let (world, _) = driver.into_parts();
    let mut mismatches = compare_admission(&case.expect, &admitted);
    match compare(&case.expect, &world, &bad)? {
        Outcome::Failed(more) => mismatches.extend(more),
        _ if mismatches.is_empty() => return Ok(Outcome::Passed),
        _ => {}
    }
    Ok(Outcome::Failed(mismatches))
}

/// `objectsRefused` and `applied` against what admitting the case's objects did.
fn compare_admission(expect: &Expect, admitted: &Admitted) -> Vec<Mismatch> {
    let mut mismatches = Vec::new();
    let refused: BTreeMap<String, String> = admitted
        .refused
        .iter()
        .map(|r| {
            let name = r.name.as_deref().unwrap_or_default();
            (
                format!("{}/{name}", r.kind.to_ascii_lowercase()),
                r.error.to_string(),
            )
        })
        .collect();
    let want = expect.objects_refused.clone().unwrap_or_default();
    if refused != want {
        mismatches.push(Mismatch::new(
            "objectsRefused",
            format!("{want:?}"),
            format!("{refused:?}"),
        ));
    }
    if let Some(want) = &expect.applied {
        // A note's subject is `file: kind/name (namespace ns)`.
        let notes: BTreeMap<String, &str> = admitted
            .notes
            .iter()
            .filter_map(|n| {
                let object = n.subject.rsplit(": ").next()?;
                let object = object.split(" (namespace").next()?;
                Some((object.to_string(), n.message.as_str()))
            })
            .collect();
        let same = notes.len() == want.len()
            && want
                .iter()
                .all(|(k, text)| notes.get(k).is_some_and(|m| m.contains(text.as_str())));
        if !same {
            mismatches.push(Mismatch::new(
                "applied",
                format!("{want:?}"),
                format!("{notes:?}"),
            ));
        }
    }
    mismatches
}

/// The case's expectations against the cluster the driver left: pods created per owner,
/// refusals, ordinals not created, claims, replacements, removals, placements, the
/// rollout.
fn compare(
    expect: &Expect,
    world: &World,
    bad: &dyn Fn(&str, &dyn std::fmt::Display) -> ScenarioError,
) -> Result<Outcome, ScenarioError> {
    let (snapshot, expansion, rollouts) = (&world.snapshot, &world.expansion, &world.rollouts);
    let refused: BTreeMap<String, String> = world
        .refused
        .iter()
        .map(|r| (r.name.clone(), r.error.to_string()))
        .collect();
    // `(new)` in expectations: the ReplicaSet a Deployment rolled out to or was given.
    let new_rs = rollouts
        .first()
        .map(|r| r.new_replica_set.clone())
        .or_else(|| {
            expansion
                .replica_sets
                .first()
                .and_then(|l| match &l.object {
                    load::Object::ReplicaSet(rs) => rs.metadata.name.clone(),
                    _ => None,
                })
        })
        .unwrap_or_default();
    let resolve = |s: &str| -> String {
        if s == NEW {
            new_rs.clone()
        } else {
            s.to_string()
        }
    };
    let mut mismatches = Vec::new();
    let created = created_per_owner(world, &refused);
    let want_created = expect.created.as_ref().map(|want| {
        want.iter()
            .map(|(k, v)| (resolve(k), *v))
            .collect::<BTreeMap<_, _>>()
    });
    check_eq("created", want_created.as_ref(), &created, &mut mismatches);
    check_eq(
        "refused",
        expect.refused.as_ref(),
        &refused,
        &mut mismatches,
    );
    if expect.not_created.is_some() {
        let got: BTreeMap<String, Vec<String>> = expansion
            .ordered
            .iter()
            .map(|o| (o.name.clone(), o.not_created()))
            .filter(|(_, n)| !n.is_empty())
            .collect();
        check_eq(
            "notCreated",
            expect.not_created.as_ref(),
            &got,
            &mut mismatches,
        );
    }
    if expect.claims.is_some() {
        let mut got: Vec<String> = expansion
            .claims
            .iter()
            .filter_map(|l| l.object.metadata()?.name.clone())
            .chain(
                expansion
                    .ordered
                    .iter()
                    .flat_map(|o| &o.created_claims)
                    .filter_map(|c| c.metadata.name.clone()),
            )
            .collect();
        got.sort();
        check_eq("claims", expect.claims.as_ref(), &got, &mut mismatches);
    }
    if expect.replaced.is_some() {
        let got: BTreeMap<String, Vec<String>> = expansion
            .ordered
            .iter()
            .filter_map(|o| Some((o.name.clone(), o.update.as_ref()?.replaced.clone())))
            .filter(|(_, r)| !r.is_empty())
            .collect();
        check_eq("replaced", expect.replaced.as_ref(), &got, &mut mismatches);
    }
    let mut removed: Vec<String> = expansion.removed.iter().map(|r| r.pod.clone()).collect();
    for r in rollouts {
        removed.extend(r.deleted.iter().cloned());
    }
    check_eq(
        "removed",
        expect.removed.as_ref(),
        &removed,
        &mut mismatches,
    );
    for (owner, want) in &expect.nodes {
        let owner = &resolve(owner);
        let mut got: BTreeMap<String, usize> = BTreeMap::new();
        for (id, p) in snapshot.pods() {
            if p.controller.as_ref().is_some_and(|c| &*c.name == owner)
                && let Some(n) = snapshot.pod_node(id)
            {
                *got.entry(snapshot.node(n).node.name.to_string())
                    .or_default() += 1;
            }
        }
        check_eq(&format!("nodes.{owner}"), Some(want), &got, &mut mismatches);
    }
    if let Some(want) = &expect.rollout {
        let Some(r) = rollouts.first() else {
            mismatches.push(Mismatch::new("rollout", "a rollout", "none"));
            return Ok(Outcome::Failed(mismatches));
        };
        check_rollout(want, r, &mut mismatches).map_err(|e| bad("expect.rollout", &e))?;
    }
    Ok(if mismatches.is_empty() {
        Outcome::Passed
    } else {
        Outcome::Failed(mismatches)
    })
}

/// A mismatch named `field` when an expectation is given and differs from `got`.
fn check_eq<T: PartialEq + std::fmt::Debug>(
    field: &str,
    want: Option<&T>,
    got: &T,
    mismatches: &mut Vec<Mismatch>,
) {
    if let Some(want) = want
        && want != got
    {
        mismatches.push(Mismatch::new(
            field,
            format!("{want:?}"),
            format!("{got:?}"),
        ));
    }
}

/// Pods created per owner (by the controller reference each carries), those admission
/// refused and ordinals never created left out, with each rollout's new pods.
fn created_per_owner(world: &World, refused: &BTreeMap<String, String>) -> BTreeMap<String, usize> {
    let expansion = &world.expansion;
    let held = |ns: &str, name: &str| {
        expansion
            .ordered
            .iter()
            .any(|o| o.namespace == ns && o.holds(name))
    };
    let mut created: BTreeMap<String, usize> = BTreeMap::new();
    for p in &expansion.pods {
        let ns = p.pod.metadata.namespace.as_deref().unwrap_or("default");
        let name = p.pod.metadata.name.as_deref().unwrap_or_default();
        if refused.contains_key(name) || held(ns, name) {
            continue;
        }
        let owner = p
            .pod
            .metadata
            .owner_references
            .iter()
            .flatten()
            .find(|o| o.controller == Some(true))
            .map(|o| o.name.clone())
            .unwrap_or_default();
        *created.entry(owner).or_default() += 1;
    }
    for r in &world.rollouts {
        if !r.created.is_empty() {
            *created.entry(r.new_replica_set.clone()).or_default() += r.created.len();
        }
    }
    created
}

/// An error the case may expect: passed when it does, else the case is broken.
fn expect_error(
    expect: &Expect,
    got: String,
    field: &str,
    bad: &dyn Fn(&str, &dyn std::fmt::Display) -> ScenarioError,
) -> Result<Outcome, ScenarioError> {
    match &expect.error {
        Some(want) if got.contains(want.as_str()) => Ok(Outcome::Passed),
        Some(want) => Ok(Outcome::Failed(vec![Mismatch::new(
            "error",
            format!("an error containing {want:?}"),
            got,
        )])),
        None => Err(bad(field, &got)),
    }
}

/// `rollout.stalled`: the stall's step, counts and cause, each as far as given.
fn check_stall(w: &StallExpect, r: &RolloutReport, mismatches: &mut Vec<Mismatch>) {
    let Some(got) = &r.stalled else {
        mismatches.push(Mismatch::new(
            "rollout.stalled",
            "a stall",
            if r.complete { "complete" } else { "no stall" },
        ));
        return;
    };
    let fields = [
        ("step", w.step, got.step),
        ("oldReplicas", w.old_replicas, got.old_replicas),
        ("newReplicas", w.new_replicas, got.new_replicas),
        ("newAvailable", w.new_available, got.new_available),
    ];
    for (field, want, got) in fields {
        if let Some(n) = want
            && n != got
        {
            mismatches.push(Mismatch::new(
                format!("rollout.stalled.{field}"),
                n.to_string(),
                got.to_string(),
            ));
        }
    }
    if let Some(t) = w.topology_spread
        && t != got.topology_spread
    {
        mismatches.push(Mismatch::new(
            "rollout.stalled.topologySpread",
            t.to_string(),
            got.topology_spread.to_string(),
        ));
    }
    if let Some(t) = &w.reason
        && !got.reason.contains(t.as_str())
    {
        mismatches.push(Mismatch::new(
            "rollout.stalled.reason",
            format!("a reason containing {t:?}"),
            got.reason.clone(),
        ));
    }
}

fn check_rollout(
    want: &RolloutExpect,
    r: &RolloutReport,
    mismatches: &mut Vec<Mismatch>,
) -> Result<(), String> {
    if let Some(n) = want.steps
        && n != r.steps.len()
    {
        mismatches.push(Mismatch::new(
            "rollout.steps",
            n.to_string(),
            r.steps.len().to_string(),
        ));
    }
    if let Some(c) = want.complete
        && c != r.complete
    {
        mismatches.push(Mismatch::new(
            "rollout.complete",
            c.to_string(),
            r.complete.to_string(),
        ));
    }
    let total = |s: &workloads::StepReport| s.revisions.iter().map(|v| v.pods).sum::<usize>();
    let bound = |s: &workloads::StepReport| s.revisions.iter().map(|v| v.bound).sum::<usize>();
    if let Some(m) = want.max_pods {
        let got = r.steps.iter().map(total).max().unwrap_or(0);
        if got != m {
            mismatches.push(Mismatch::new(
                "rollout.maxPods",
                m.to_string(),
                got.to_string(),
            ));
        }
    }
    if let Some(m) = want.min_bound {
        let got = r.steps.iter().map(bound).min().unwrap_or(0);
        if got != m {
            mismatches.push(Mismatch::new(
                "rollout.minBound",
                m.to_string(),
                got.to_string(),
            ));
        }
    }
    if let Some(w) = &want.stalled {
        check_stall(w, r, mismatches);
    }
    for (i, w) in want.end_skew.iter().enumerate() {
        let got = r
            .interleavings
            .first()
            .and_then(|il| {
                il.end
                    .iter()
                    .position(|e| e.constraint.topology_key == w.topology_key)
            })
            .and_then(|at| r.end_skew.get(at));
        let got = got.map_or_else(|| "none".to_string(), |g| format!("{} to {}", g.min, g.max));
        let want = format!("{} to {}", w.min, w.max);
        if got != want {
            mismatches.push(Mismatch::new(format!("rollout.endSkew[{i}]"), want, got));
        }
    }
    if let Some(w) = want.skew_warning
        && w != r.warning.is_some()
    {
        mismatches.push(Mismatch::new(
            "rollout.skewWarning",
            w.to_string(),
            format!("{:?}", r.warning),
        ));
    }
    for (i, s) in want.spread.iter().enumerate() {
        let step = match s.step {
            Some(0) => {
                return Err(format!(
                    "spread[{i}].step: Invalid value: 0: steps count from 1"
                ));
            }
            Some(n) => r.steps.get(n - 1).ok_or_else(|| {
                format!(
                    "spread[{i}].step: Not found: the rollout has {} steps",
                    r.steps.len()
                )
            })?,
            None => r.steps.last().ok_or("the rollout has no steps")?,
        };
        let rs = if s.replica_set == NEW {
            r.new_replica_set.as_str()
        } else {
            s.replica_set.as_str()
        };
        let Some(rev) = step.revisions.iter().find(|v| v.replica_set == rs) else {
            return Err(format!(
                "spread[{i}].replicaSet: Not found: no revision {:?}",
                s.replica_set
            ));
        };
        let got = rev.spread.get(&s.topology_key).cloned().unwrap_or_default();
        if got != s.counts {
            mismatches.push(Mismatch::new(
                format!("rollout.spread[{i}]"),
                format!("{:?}", s.counts),
                format!("{got:?}"),
            ));
        }
    }
    Ok(())
}
