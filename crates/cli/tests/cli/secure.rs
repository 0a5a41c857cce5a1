//! `topospread serve` as an operator runs it: HTTPS on --secure-port with a self-signed
//! or given certificate, /metrics behind the cluster's TokenReview and
//! SubjectAccessReview, plain HTTP only with --insecure-serving, bad certificate files
//! refused before any request, and --kube-api-qps/--kube-api-burst pacing the client.

use super::temp;
use serde_json::json;
use std::io::{Read as _, Write as _};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use topospread_fakeapi::FakeApi;

#[path = "../../../serve/tests/it/any_certificate.rs"]
mod any_certificate;
use any_certificate::AnyCertificate;

const CONFIG: &str = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n\
     leaderElection: {leaderElect: false}\nprofiles: [{schedulerName: topospread}]\n";

/// A fake cluster of two nodes on loopback, and its kubeconfig.
fn cluster(
    runtime: &tokio::runtime::Runtime,
    name: &str,
) -> (FakeApi, topospread_fakeapi::Served, String) {
    let fake = FakeApi::new();
    for n in ["n1", "n2"] {
        fake.insert(json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}))
            .unwrap();
    }
    let served = runtime
        .block_on(fake.serve("127.0.0.1:0".parse().unwrap()))
        .unwrap();
    let kubeconfig = temp(&format!("{name}-kubeconfig"), &served.kubeconfig());
    (fake, served, kubeconfig)
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The serve process, killed when dropped.
struct Serve(Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(kubeconfig: &str, extra: &[&str]) -> Serve {
    // One file per process started: the tests run in parallel.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let config = temp(&format!("secure-serve-{n}.yaml"), CONFIG);
    let child = Command::new(env!("CARGO_BIN_EXE_topospread"))
        .args(["serve", "--config", &config, "--kubeconfig", kubeconfig])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Serve(child)
}

/// `GET path` with an optional bearer token over HTTPS (`tls`) or plain HTTP: the status
/// code and the body; `None` when nothing answers.
fn get(addr: SocketAddr, tls: bool, path: &str, token: Option<&str>) -> Option<(u16, String)> {
    let mut tcp = std::net::TcpStream::connect(addr).ok()?;
    tcp.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let auth = token.map_or_else(String::new, |t| format!("Authorization: Bearer {t}\r\n"));
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Connection: close\r\n\r\n");
    let mut raw = Vec::new();
    if tls {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .unwrap()
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
            .with_no_client_auth();
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let mut conn = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
        let mut stream = rustls::Stream::new(&mut conn, &mut tcp);
        stream.write_all(request.as_bytes()).ok()?;
        let _ = stream.read_to_end(&mut raw);
    } else {
        tcp.write_all(request.as_bytes()).ok()?;
        let _ = tcp.read_to_end(&mut raw);
    }
    let text = String::from_utf8_lossy(&raw).into_owned();
    let code = text.split_whitespace().nth(1)?.parse().ok()?;
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string())?;
    Some((code, body))
}

/// Waits for `/healthz` to answer 200.
fn wait_healthy(addr: SocketAddr, tls: bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if get(addr, tls, "/healthz", None).is_some_and(|(c, _)| c == 200) {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("{addr} never answered /healthz");
}

#[test]
fn serve_answers_https_with_delegated_auth() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (fake, served, kubeconfig) = cluster(&runtime, "secure-https");
    fake.add_token("prom", "system:serviceaccount:monitoring:prometheus", &[]);
    fake.add_token("other", "someone", &[]);
    fake.allow_path(
        "system:serviceaccount:monitoring:prometheus",
        "get",
        "/metrics",
    );
    let port = free_port();
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let _serve = spawn(
        &kubeconfig,
        &[
            "--bind-address",
            "127.0.0.1",
            "--secure-port",
            &port.to_string(),
        ],
    );
    wait_healthy(addr, true);
    assert_eq!(get(addr, true, "/readyz", None).map(|r| r.0), Some(200));
    let (code, body) = get(addr, true, "/metrics", Some("prom")).unwrap();
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("scheduler_pending_pods"), "{body}");
    let (code, body) = get(addr, true, "/metrics", None).unwrap();
    assert_eq!(code, 403, "{body}");
    assert!(body.contains("system:anonymous"), "{body}");
    assert_eq!(
        get(addr, true, "/metrics", Some("other")).map(|r| r.0),
        Some(403)
    );
    assert_eq!(
        get(addr, true, "/metrics", Some("forged")).map(|r| r.0),
        Some(401)
    );
    // Plain HTTP gets no answer from a TLS port.
    assert_ne!(get(addr, false, "/healthz", None).map(|r| r.0), Some(200));
    runtime.block_on(served.shutdown());
}

#[test]
fn serve_with_given_files_and_insecure_serving() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (fake, served, kubeconfig) = cluster(&runtime, "secure-files");
    // Given files (the fixture), no delegation: /metrics answers anyone over HTTPS.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("secure-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cert, key) = (dir.join("tls.crt"), dir.join("tls.key"));
    std::fs::write(&cert, CERT).unwrap();
    std::fs::write(&key, KEY).unwrap();
    let port = free_port();
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    {
        let _serve = spawn(
            &kubeconfig,
            &[
                "--bind-address",
                "127.0.0.1",
                "--secure-port",
                &port.to_string(),
                "--tls-cert-file",
                cert.to_str().unwrap(),
                "--tls-private-key-file",
                key.to_str().unwrap(),
                "--skip-delegated-auth",
            ],
        );
        wait_healthy(addr, true);
        assert_eq!(get(addr, true, "/metrics", None).map(|r| r.0), Some(200));
    }
    fake.clear_requests();
    let port = free_port();
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let _serve = spawn(
        &kubeconfig,
        &[
            "--bind-address",
            "127.0.0.1",
            "--secure-port",
            &port.to_string(),
            "--insecure-serving",
        ],
    );
    wait_healthy(addr, false);
    assert_eq!(get(addr, false, "/metrics", None).map(|r| r.0), Some(200));
    assert!(
        fake.requests().iter().all(|r| !r.path.contains("review")),
        "no review is made without delegation"
    );
    runtime.block_on(served.shutdown());
}

#[test]
fn bad_certificate_files_are_one_line_and_exit_2_before_any_request() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (fake, served, kubeconfig) = cluster(&runtime, "secure-bad");
    let config = temp("secure-bad.yaml", CONFIG);
    let garbage = temp(
        "secure-garbage.crt",
        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
    );
    let key = temp("secure-good.key", KEY);
    let cert = temp("secure-good.crt", CERT);
    let missing = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("secure-missing.key");
    let missing = missing.to_str().unwrap();
    for (c, k, flag, file) in [
        (
            garbage.as_str(),
            key.as_str(),
            "--tls-cert-file",
            "secure-garbage.crt",
        ),
        (
            cert.as_str(),
            missing,
            "--tls-private-key-file",
            "secure-missing.key",
        ),
        (
            cert.as_str(),
            cert.as_str(),
            "--tls-private-key-file",
            "secure-good.crt",
        ),
    ] {
        // `guard --live` serves with the same flags and refuses the same files.
        let serve = ["serve", "--config", &config, "--kubeconfig", &kubeconfig];
        let guard = [
            "guard",
            "--live",
            "--kubeconfig",
            &kubeconfig,
            "--no-leader-elect",
        ];
        for command in [&serve[..], &guard[..]] {
            fake.clear_requests();
            let o = Command::new(env!("CARGO_BIN_EXE_topospread"))
                .args(command)
                .args(["--tls-cert-file", c, "--tls-private-key-file", k])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{command:?}: {err}");
            let line = err.lines().find(|l| l.starts_with("error:")).unwrap_or("");
            assert!(
                line.starts_with(&format!("error: {flag} ")) && line.contains(file),
                "{command:?}: {err}"
            );
            assert!(fake.requests().is_empty(), "{:?}", fake.requests());
        }
    }
    // One file without the other is a usage error.
    let o = Command::new(env!("CARGO_BIN_EXE_topospread"))
        .args(["serve", "--config", &config, "--tls-cert-file", &cert])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--tls-private-key-file"));
    runtime.block_on(served.shutdown());
}

/// The requests serve sends with `flags` within `window` of its start, or as soon as
/// they number more than `enough`.
fn requests_within(flags: &[&str], window: Duration, enough: usize) -> usize {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (fake, served, kubeconfig) = cluster(&runtime, "secure-qps");
    let mut args = vec!["--secure-port", "0"];
    args.extend_from_slice(flags);
    let serve = spawn(&kubeconfig, &args);
    let deadline = Instant::now() + window;
    let mut n = fake.requests().len();
    while n <= enough && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        n = fake.requests().len();
    }
    drop(serve);
    runtime.block_on(served.shutdown());
    n
}

/// --kube-api-qps and --kube-api-burst reach the client: at qps 2 and burst 2 serve
/// makes at most 2 + 2 requests per second (its release read, lists and watches wait),
/// where unlimited it makes every one of them at once.
#[test]
fn kube_api_qps_and_burst_pace_the_client() {
    // The whole window: the bound is on how many requests it holds.
    let window = Duration::from_millis(2500);
    let limited = requests_within(
        &["--kube-api-qps", "2", "--kube-api-burst", "2"],
        window,
        usize::MAX,
    );
    assert!(limited >= 1, "serve made no request");
    // The scheduler's client: a burst of 2, then 2 per second.
    assert!(
        limited <= 2 + 6,
        "{limited} requests in {window:?} at qps 2"
    );
    let unlimited = requests_within(&["--kube-api-qps", "-1"], Duration::from_secs(5), 2 + 10);
    assert!(unlimited > 2 + 10, "{unlimited} requests unlimited");
    // A burst as large as the start-up's requests lets them through at once, at qps 1.
    let burst = requests_within(
        &["--kube-api-qps", "1", "--kube-api-burst", "500"],
        Duration::from_secs(5),
        2 + 10,
    );
    assert!(burst > 2 + 10, "{burst} requests with a burst of 500");
}

/// A self-signed P-256 certificate and its key for localhost and 127.0.0.1 (made once
/// with `openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes
/// -days 36500`).
const CERT: &str = include_str!("../fixtures/tls/localhost.crt");
const KEY: &str = include_str!("../fixtures/tls/localhost.key");
