//! Volumes through a run and back (issue 42): claims made from a StatefulSet's
//! templates, the volumes provisioned for them and their bindings are written by
//! `-o yaml` and read back identically, so a later what-if keeps each stateful pod next
//! to its volume; Immediate classes are provisioned when the claim is created, where
//! external-provisioner would put the volume or in `--provision-zone`
//! (`fixtures/volumes/`).

use super::{fixture, run, stderr, stdout, temp};
use serde_json::Value;

/// `simulate -f three-zones.yaml -f CLASS.yaml` with `extra`: stdout, stderr, exit code.
fn simulate(class: &str, extra: &[&str]) -> (String, String, i32) {
    let nodes = fixture("volumes/three-zones.yaml");
    let class = fixture(&format!("volumes/{class}.yaml"));
    let mut args = vec!["simulate", "-f", nodes.as_str(), "-f", class.as_str()];
    args.extend(extra);
    let o = run(&args);
    (stdout(&o), stderr(&o), o.status.code().unwrap_or(-1))
}

fn parse(out: &str, err: &str) -> Value {
    let Ok(v) = serde_json::from_str(out) else {
        panic!("not JSON: {out}\n{err}")
    };
    v
}

/// Each pod's zone, by pod name (`None`: pending).
fn zones(v: &Value) -> Vec<(String, Option<String>)> {
    v["pods"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            (
                p["pod"].as_str().unwrap_or_default().to_string(),
                p["zone"].as_str().map(str::to_string),
            )
        })
        .collect()
}

#[test]
fn a_stateful_pod_stays_with_its_volume_when_its_zone_is_lost_after_a_round_trip() {
    let (yaml, err, code) = simulate("waitforfirstconsumer", &["-o", "yaml"]);
    assert_eq!(code, 0, "{err}");
    // Three provisioned volumes, each pinned to the zone its pod landed in, and three
    // claims bound to them.
    assert_eq!(
        yaml.matches("kind: PersistentVolume\n").count(),
        3,
        "{yaml}"
    );
    assert_eq!(yaml.matches("volumeName: pvc-default-data-db-").count(), 3);
    assert_eq!(
        yaml.matches("pv.kubernetes.io/bind-completed: \"yes\"")
            .count(),
        3
    );
    let state = temp("volumes-state.yaml", &yaml);

    // Read back, the same cluster is written again.
    let again = run(&["simulate", "-f", &state, "-o", "yaml"]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(stdout(&again), yaml, "-o yaml read back is not a fixpoint");

    // Lose the zone db-1 runs in: its replacement stays Pending by its volume.
    let pod_1 = yaml
        .split("---\n")
        .find(|d| d.contains("kind: Pod\n") && d.contains("name: db-1\n"))
        .expect("db-1 is written");
    let node = ["n1", "n2", "n3"]
        .into_iter()
        .position(|n| pod_1.contains(&format!("nodeName: {n}\n")))
        .expect("db-1 is bound");
    let lose = format!("topology.kubernetes.io/zone={}", ["a", "b", "c"][node]);
    let o = run(&["simulate", "-f", &state, "--lose", &lose, "-o", "json"]);
    let v = parse(&stdout(&o), &stderr(&o));
    let pending: Vec<String> = zones(&v)
        .into_iter()
        .filter(|(_, z)| z.is_none())
        .map(|(p, _)| p)
        .collect();
    assert_eq!(pending, ["db-1"], "{v}");
    let text = run(&["simulate", "-f", &state, "--lose", &lose]);
    assert!(
        stdout(&text).contains("didn't match PersistentVolume's node affinity"),
        "{}",
        stdout(&text)
    );
}

#[test]
fn immediate_claims_are_provisioned_where_the_provisioner_puts_them() {
    let (out, err, code) = simulate("immediate", &["-o", "json"]);
    assert_eq!(code, 0, "{err}");
    let v = parse(&out, &err);
    // external-provisioner rotates a StatefulSet's claims round the zones by ordinal:
    // the three pods follow their volumes into three zones.
    let mut placed: Vec<String> = zones(&v).into_iter().filter_map(|(_, z)| z).collect();
    placed.sort();
    assert_eq!(placed, ["a", "b", "c"], "{v}");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("Immediate StorageClass: volume provisioned by ebs.csi.aws.com")
            && notes.contains("--provision-zone to choose"),
        "{notes}"
    );

    // A chosen zone takes every volume, and so every pod.
    let (out, err, code) = simulate("immediate", &["--provision-zone", "b", "-o", "json"]);
    assert_eq!(code, 0, "{err}");
    let v = parse(&out, &err);
    assert!(
        zones(&v).iter().all(|(_, z)| z.as_deref() == Some("b")),
        "{v}"
    );

    // The -o yaml state keeps them there.
    let (yaml, _, _) = simulate("immediate", &["--provision-zone", "b", "-o", "yaml"]);
    assert_eq!(yaml.matches("nodeName: n2\n").count(), 3, "{yaml}");
    assert_eq!(yaml.matches("operator: In\n").count(), 3, "{yaml}");
}

#[test]
fn a_provision_zone_no_node_is_in_is_refused() {
    let (out, err, code) = simulate("immediate", &["--provision-zone", "q"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.is_empty(), "{out}");
    assert_eq!(
        err.trim(),
        "error: --provision-zone \"q\": no node has topology.kubernetes.io/zone=q"
    );
}
