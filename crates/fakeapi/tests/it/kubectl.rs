//! kubectl against the fake served on loopback: discovery, get, create, delete
//! and watch, checking the wire format with a real client. Ignored unless asked for, as it
//! needs kubectl on PATH: `cargo test -p topospread-fakeapi --test it -- --ignored kubectl`
//! (`.ci/run` does so whenever kubectl is installed).

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use topospread_fakeapi::FakeApi;

use crate::support::pod;

fn kubectl_present() -> bool {
    Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs kubectl against `server` with an empty config, feeding `stdin`.
fn kubectl(server: &str, home: &std::path::Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new("kubectl")
        .arg(format!("--server={server}"))
        .arg(format!("--cache-dir={}", home.join("cache").display()))
        .arg("--request-timeout=10s")
        .args(args)
        .env("KUBECONFIG", home.join("none"))
        .env("HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

fn ok(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "kubectl failed: {}\nstdout: {stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs kubectl on PATH"]
async fn kubectl_round_trip() {
    assert!(kubectl_present(), "kubectl is not on PATH");
    let fake = FakeApi::new();
    fake.insert(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"zone": "a"}}}))
        .unwrap();
    fake.insert(pod("seeded", json!({"app": "web"}), Some("n1")))
        .unwrap();
    let served = fake.serve("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let server = served.url();
    let home = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("fakeapi-kubectl-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let run = move |args: Vec<&'static str>, stdin: Option<String>| {
        let server = server.clone();
        let home = home.clone();
        tokio::task::spawn_blocking(move || kubectl(&server, &home, &args, stdin.as_deref()))
    };

    let out = ok(&run(vec!["get", "pods", "-A", "-o", "json"], None)
        .await
        .unwrap());
    let list: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(list["items"][0]["metadata"]["name"], "seeded");
    assert_eq!(list["items"][0]["kind"], "Pod");

    let out = ok(&run(vec!["get", "nodes"], None).await.unwrap());
    assert!(out.contains("n1"), "{out}");

    let manifest =
        serde_json::to_string(&pod("from-kubectl", json!({"app": "web"}), None)).unwrap();
    let out = ok(&run(vec!["create", "-f", "-"], Some(manifest))
        .await
        .unwrap());
    assert!(out.contains("pod/from-kubectl created"), "{out}");
    assert!(
        fake.get("pods", "default", "from-kubectl")
            .unwrap()
            .is_some()
    );

    let out = ok(&run(
        vec![
            "get",
            "pods",
            "-l",
            "app=web",
            "--field-selector",
            "spec.nodeName=",
            "-o",
            "name",
        ],
        None,
    )
    .await
    .unwrap());
    assert_eq!(out.trim(), "pod/from-kubectl");

    // A watch with a timeout prints the current state, then a change.
    let watch = run(
        vec![
            "get",
            "pods",
            "--watch",
            "--request-timeout=2s",
            "-o",
            "name",
        ],
        None,
    );
    tokio::time::sleep(Duration::from_millis(700)).await;
    fake.modify("pods", "default", "seeded", |p| {
        p["metadata"]["labels"]["v"] = json!("2")
    })
    .unwrap();
    let out = watch.await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.matches("pod/seeded").count() >= 2, "{stdout}");

    let out = ok(
        &run(vec!["delete", "pod", "from-kubectl", "--wait=true"], None)
            .await
            .unwrap(),
    );
    assert!(out.contains("deleted"), "{out}");
    assert!(
        fake.get("pods", "default", "from-kubectl")
            .unwrap()
            .is_none()
    );

    let out = ok(&run(vec!["get", "pods", "-A", "-o", "yaml"], None)
        .await
        .unwrap());
    assert!(out.contains("name: seeded"), "{out}");
    served.shutdown().await;
}

/// A temporary kubectl home for one test.
fn home(name: &str) -> std::path::PathBuf {
    let home = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("fakeapi-kubectl-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    home
}

/// `kubectl create -f` of a TokenReview and a SubjectAccessReview gets back what a real
/// API server answers: the review with its status (authenticated and the user; allowed,
/// or not allowed with no reason when nothing grants it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs kubectl on PATH"]
async fn kubectl_creates_reviews() {
    assert!(kubectl_present(), "kubectl is not on PATH");
    let fake = FakeApi::new();
    fake.add_token(
        "prom-token",
        "system:serviceaccount:monitoring:prometheus",
        &[
            "system:serviceaccounts",
            "system:serviceaccounts:monitoring",
        ],
    );
    fake.allow_path("system:serviceaccounts:monitoring", "get", "/metrics");
    let served = fake.serve("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let server = served.url();
    let home = home("reviews");
    let create = |manifest: &str| {
        let (server, home, manifest) = (server.clone(), home.clone(), manifest.to_string());
        tokio::task::spawn_blocking(move || {
            kubectl(
                &server,
                &home,
                &["create", "-f", "-", "-o", "json"],
                Some(&manifest),
            )
        })
    };
    let review = |out: Output| -> Value { serde_json::from_str(&ok(&out)).unwrap() };

    let r = review(
        create(
            "apiVersion: authentication.k8s.io/v1\nkind: TokenReview\nspec: {token: prom-token}\n",
        )
        .await
        .unwrap(),
    );
    assert_eq!(r["kind"], "TokenReview");
    assert_eq!(r["status"]["authenticated"], true, "{r}");
    assert_eq!(
        r["status"]["user"]["username"],
        "system:serviceaccount:monitoring:prometheus"
    );
    let groups = r["status"]["user"]["groups"].as_array().unwrap();
    assert!(groups.contains(&json!("system:authenticated")), "{r}");

    let r = review(
        create("apiVersion: authentication.k8s.io/v1\nkind: TokenReview\nspec: {token: wrong}\n")
            .await
            .unwrap(),
    );
    assert!(r["status"].get("authenticated").is_none(), "{r}");
    assert_eq!(r["status"]["user"], json!({}));
    assert!(
        r["status"]["error"]
            .as_str()
            .unwrap()
            .contains("invalid bearer token")
    );

    let sar = |user: &str, path: &str| {
        format!(
            "apiVersion: authorization.k8s.io/v1\nkind: SubjectAccessReview\nspec:\n  user: {user}\n  groups: [system:serviceaccounts:monitoring, system:authenticated]\n  nonResourceAttributes: {{path: {path}, verb: get}}\n"
        )
    };
    let allowed = sar("system:serviceaccount:monitoring:prometheus", "/metrics");
    let denied = sar(
        "system:serviceaccount:monitoring:prometheus",
        "/debug/pprof",
    );
    let r = review(create(&allowed).await.unwrap());
    assert_eq!(r["status"]["allowed"], true, "{r}");
    let r = review(create(&denied).await.unwrap());
    assert_eq!(r["status"], json!({"allowed": false}), "{r}");

    // Neither attributes: 422 Invalid, as upstream's validation answers.
    let out = create(
        "apiVersion: authorization.k8s.io/v1\nkind: SubjectAccessReview\nspec: {user: someone}\n",
    )
    .await
    .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is invalid")
            && err.contains("exactly one of nonResourceAttributes or resourceAttributes"),
        "{err}"
    );
    // Discovery lists the reviews as create-only.
    let out = ok(&kubectl(
        &served.url(),
        &home,
        &[
            "api-resources",
            "--api-group=authentication.k8s.io",
            "-o",
            "wide",
        ],
        None,
    ));
    assert!(
        out.contains("tokenreviews") && out.contains("create"),
        "{out}"
    );
    served.shutdown().await;
}

/// The kustomize base under deploy/ renders with kubectl's own
/// kustomize and applies to the fake API server, twice (the second apply changes
/// nothing), with the delegation's RBAC as kube-scheduler's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs kubectl on PATH"]
async fn kubectl_kustomize_applies_deploy() {
    assert!(kubectl_present(), "kubectl is not on PATH");
    let deploy = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy");
    let fake = FakeApi::new();
    let served = fake.serve("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let (server, home) = (served.url(), home("kustomize"));
    let rendered = {
        let (server, home, dir) = (server.clone(), home.clone(), deploy.clone());
        tokio::task::spawn_blocking(move || {
            kubectl(&server, &home, &["kustomize", dir.to_str().unwrap()], None)
        })
        .await
        .unwrap()
    };
    let rendered = ok(&rendered);
    let apply = |input: String| {
        let (server, home) = (server.clone(), home.clone());
        tokio::task::spawn_blocking(move || {
            kubectl(&server, &home, &["apply", "-f", "-"], Some(&input))
        })
    };
    let out = ok(&apply(rendered.clone()).await.unwrap());
    for created in [
        "namespace/topospread-system created",
        "serviceaccount/topospread created",
        "clusterrolebinding.rbac.authorization.k8s.io/topospread-auth-delegator created",
        "rolebinding.rbac.authorization.k8s.io/topospread-authentication-reader created",
        "configmap/topospread-config created",
        "deployment.apps/topospread created",
    ] {
        assert!(out.contains(created), "{created}: {out}");
    }
    let out = ok(&apply(rendered).await.unwrap());
    assert!(
        !out.contains("created") && !out.contains("configured"),
        "{out}"
    );
    assert!(
        out.contains("deployment.apps/topospread unchanged"),
        "{out}"
    );

    let binding = fake
        .get(
            "clusterrolebindings.rbac.authorization.k8s.io",
            "",
            "topospread-auth-delegator",
        )
        .unwrap()
        .unwrap();
    assert_eq!(binding["roleRef"]["name"], "system:auth-delegator");
    let reader = fake
        .get(
            "rolebindings.rbac.authorization.k8s.io",
            "kube-system",
            "topospread-authentication-reader",
        )
        .unwrap()
        .unwrap();
    assert_eq!(
        reader["roleRef"]["name"],
        "extension-apiserver-authentication-reader"
    );
    let deployment = fake
        .get("deployments.apps", "topospread-system", "topospread")
        .unwrap()
        .unwrap();
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["livenessProbe"]["httpGet"]["scheme"], "HTTPS");
    assert_eq!(container["ports"][0]["containerPort"], 10259);

    served.shutdown().await;
}

/// The base grants the scheduler alone (no `patch pods`, no `--guard`); an overlay with
/// deploy/components/guard adds the guard's ClusterRole, its Lease's Role and `--guard`,
/// and applies to the fake API server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs kubectl on PATH"]
async fn kubectl_kustomize_applies_the_guard_component() {
    assert!(kubectl_present(), "kubectl is not on PATH");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let fake = FakeApi::new();
    let served = fake.serve("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let (server, home) = (served.url(), home("kustomize-guard"));
    let render = |dir: std::path::PathBuf| {
        let (server, home) = (server.clone(), home.clone());
        tokio::task::spawn_blocking(move || {
            ok(&kubectl(
                &server,
                &home,
                &["kustomize", dir.to_str().unwrap()],
                None,
            ))
        })
    };
    let base = render(root.join("../../deploy")).await.unwrap();
    assert!(
        !base.contains("--guard") && !base.contains("topospread-guard"),
        "{base}"
    );
    let overlay = render(root.join("tests/fixtures/guard-overlay"))
        .await
        .unwrap();
    let out = {
        let (server, home) = (server.clone(), home.clone());
        tokio::task::spawn_blocking(move || {
            ok(&kubectl(
                &server,
                &home,
                &["apply", "-f", "-"],
                Some(&overlay),
            ))
        })
        .await
        .unwrap()
    };
    for created in [
        "clusterrole.rbac.authorization.k8s.io/topospread-guard created",
        "clusterrolebinding.rbac.authorization.k8s.io/topospread-guard created",
        "role.rbac.authorization.k8s.io/topospread-guard-leader-election created",
        "deployment.apps/topospread created",
    ] {
        assert!(out.contains(created), "{created}: {out}");
    }
    let deployment = fake
        .get("deployments.apps", "topospread-system", "topospread")
        .unwrap()
        .unwrap();
    let args = &deployment["spec"]["template"]["spec"]["containers"][0]["args"];
    assert_eq!(
        args.as_array().and_then(|a| a.last()),
        Some(&json!("--guard"))
    );
    served.shutdown().await;
}
