//! Workload expansion over a fixture holding one of each kind.

use topospread_k8s::load::parse_manifests;
use topospread_k8s::workloads::{POD_TEMPLATE_HASH_LABEL, STATEFULSET_POD_NAME_LABEL, expand};

fn fixture() -> Vec<topospread_k8s::load::Loaded> {
    let text = include_str!("../fixtures/workloads.yaml");
    parse_manifests(text, "workloads.yaml")
        .expect("fixture")
        .objects
}

fn names(e: &topospread_k8s::workloads::Expansion, prefix: &str) -> Vec<String> {
    e.pods
        .iter()
        .filter_map(|p| p.pod.metadata.name.clone())
        .filter(|n| n.starts_with(prefix))
        .collect()
}

#[test]
fn each_kind_expands_as_its_controller_would() {
    let e = expand(&fixture(), 0);
    // Deployment: one ReplicaSet named after the hash, three pods owned by it.
    assert_eq!(e.replica_sets.len(), 1);
    let web = names(&e, "web-");
    assert_eq!(web.len(), 3);
    let p = &e.pods[0].pod;
    let hash = &p.metadata.labels.as_ref().unwrap()[POD_TEMPLATE_HASH_LABEL];
    let owner = &p.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(owner.kind, "ReplicaSet");
    assert_eq!(owner.api_version, "apps/v1");
    assert_eq!(owner.name, format!("web-{hash}"));
    assert_eq!(owner.controller, Some(true));
    assert_eq!(p.metadata.namespace.as_deref(), Some("shop"));
    assert!(
        web.iter()
            .all(|n| n.starts_with(&format!("web-{hash}-")) && n.len() == 4 + hash.len() + 6)
    );
    // StatefulSet: ordered ordinals with the pod-name label.
    assert_eq!(names(&e, "db-"), ["db-0", "db-1"]);
    let db1 = e
        .pods
        .iter()
        .find(|p| p.pod.metadata.name.as_deref() == Some("db-1"))
        .unwrap();
    assert_eq!(
        db1.pod.metadata.labels.as_ref().unwrap()[STATEFULSET_POD_NAME_LABEL],
        "db-1"
    );
    // Job: parallelism capped by completions.
    assert_eq!(names(&e, "batch-").len(), 2);
    // CronJob: a note, no pods.
    assert!(names(&e, "nightly").is_empty());
    assert!(
        e.notes
            .iter()
            .any(|n| n.subject.contains("cronjob/nightly"))
    );
    // DaemonSet: n1 and n3 (the unschedulable taint is tolerated), not the tainted n2.
    let agents: Vec<_> = e
        .pods
        .iter()
        .filter(|p| {
            p.pod
                .metadata
                .name
                .as_deref()
                .is_some_and(|n| n.starts_with("agent-"))
        })
        .map(|p| {
            let na = p
                .pod
                .spec
                .as_ref()
                .unwrap()
                .affinity
                .as_ref()
                .unwrap()
                .node_affinity
                .as_ref()
                .unwrap();
            let term = &na
                .required_during_scheduling_ignored_during_execution
                .as_ref()
                .unwrap()
                .node_selector_terms[0];
            term.match_fields.as_ref().unwrap()[0]
                .values
                .as_ref()
                .unwrap()[0]
                .clone()
        })
        .collect();
    assert_eq!(agents, ["n1", "n3"]);
    // The RC's template is invalid: reported with its path; the rest went on.
    assert_eq!(e.errors.len(), 1);
    assert_eq!(e.errors[0].object, "replicationcontroller/legacy");
    assert_eq!(
        e.errors[0].field,
        "spec.template.spec.tolerations[0].effect"
    );
}

#[test]
fn expansion_is_deterministic_and_seeded() {
    let a = expand(&fixture(), 0);
    let b = expand(&fixture(), 0);
    let c = expand(&fixture(), 7);
    assert_eq!(names(&a, "web-"), names(&b, "web-"));
    assert_ne!(names(&a, "web-"), names(&c, "web-"));
}

#[test]
fn existing_pods_count_towards_the_workload() {
    let mut objects = fixture();
    let first = expand(&objects, 0);
    for p in &first.pods {
        objects.push(topospread_k8s::load::Loaded {
            source: p.source.clone(),
            object: topospread_k8s::load::Object::Pod(Box::new(p.pod.clone())),
        });
    }
    objects.extend(first.replica_sets.iter().cloned());
    let again = expand(&objects, 0);
    assert!(
        again.pods.is_empty(),
        "{:?}",
        again
            .pods
            .iter()
            .map(|p| &p.pod.metadata.name)
            .collect::<Vec<_>>()
    );
    assert!(again.replica_sets.is_empty());
}

/// Sets `status.phase` on a pod object.
fn with_phase(mut p: k8s_openapi::api::core::v1::Pod, phase: &str) -> topospread_k8s::load::Loaded {
    p.status = Some(k8s_openapi::api::core::v1::PodStatus {
        phase: Some(phase.into()),
        ..Default::default()
    });
    topospread_k8s::load::Loaded {
        source: topospread_k8s::load::Source {
            file: "pods.yaml".into(),
            document: 1,
            item: None,
        },
        object: topospread_k8s::load::Object::Pod(Box::new(p)),
    }
}

#[test]
fn finished_pods_do_not_count_but_succeeded_job_pods_complete_it() {
    let mut objects = fixture();
    let first = expand(&objects, 0);
    objects.extend(first.replica_sets.iter().cloned());
    // Every pod of the first expansion exists, but finished: the web Deployment's as
    // Failed (evicted), the Job's as Succeeded.
    for p in &first.pods {
        let name = p.pod.metadata.name.clone().unwrap();
        let phase = if name.starts_with("batch-") {
            "Succeeded"
        } else {
            "Failed"
        };
        objects.push(with_phase(p.pod.clone(), phase));
    }
    let again = expand(&objects, 0);
    // The ReplicaSet replaces its evicted pods; the StatefulSet recreates its ordinals.
    assert_eq!(names(&again, "web-").len(), 3);
    assert_eq!(names(&again, "db-"), ["db-0", "db-1"]);
    // The Job (completions 2) has both completions: nothing more to run.
    assert!(names(&again, "batch-").is_empty());
}

#[test]
fn finished_pods_are_left_out_of_the_snapshot() {
    let text = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: done}\nspec: {nodeName: n1, containers: [{name: c, image: i}]}\nstatus: {phase: Succeeded}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: evicted, namespace: x}\nspec: {nodeName: n1, containers: [{name: c, image: i}]}\nstatus: {phase: Failed, reason: Evicted}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: running}\nspec: {nodeName: n1, containers: [{name: c, image: i}]}\nstatus: {phase: Running}\n";
    let m = parse_manifests(text, "dump.yaml").unwrap();
    let built = topospread_k8s::build::build(&m.objects).unwrap();
    assert_eq!(built.finished, ["default/done", "x/evicted"]);
    assert!(built.snapshot.pod_id("default", "running").is_some());
    assert!(built.snapshot.pod_id("default", "done").is_none());
    assert!(built.snapshot.pod_id("x", "evicted").is_none());
}
