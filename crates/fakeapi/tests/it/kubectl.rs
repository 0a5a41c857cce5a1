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
