//! `serve` and `guard --live` as processes an operator runs: logs without terminal
//! colour when stderr is not a terminal, scheduling that goes on when stderr is closed
//! (the lines dropped and counted), SIGTERM releasing the Lease with exit 0, and a
//! start before the API server answers (health first, the release retried).

use super::temp;
use serde_json::{Value, json};
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::SocketAddr;
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::{Duration, Instant};
use topospread_fakeapi::FakeApi;

/// Leader election on, its Lease in `default` (the fake's namespace).
const CONFIG: &str = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n\
     leaderElection: {leaderElect: true, resourceNamespace: default}\n\
     profiles: [{schedulerName: topospread}]\n";

fn node(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
}

fn pending(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedulerName": "topospread", "containers": [{"name": "c", "image": "nginx"}]}})
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A child process, killed when dropped.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Daemon {
    /// `topospread ARGS` with stderr piped (stdout to nothing), logging at `RUST_LOG`.
    fn spawn(args: &[&str], log: &str) -> Self {
        let child = Command::new(env!("CARGO_BIN_EXE_topospread"))
            .args(args)
            .env_remove("NO_COLOR")
            .env("RUST_LOG", log)
            // The guard's Lease namespace (serve's config names its own).
            .env("POD_NAMESPACE", "default")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        Self(child)
    }

    fn stderr(&mut self) -> ChildStderr {
        self.0.stderr.take().unwrap()
    }

    /// Sends SIGTERM and waits up to 20 s for the exit code.
    fn terminate(&mut self) -> Option<i32> {
        let pid = self.0.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(sent.success());
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Some(status) = self.0.try_wait().unwrap() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("no exit within 20 s of SIGTERM");
    }
}

/// `serve` on `kubeconfig` with plain-HTTP health on `port`, at the `info` level.
fn serve(name: &str, kubeconfig: &str, port: u16) -> Daemon {
    serve_logging(name, kubeconfig, port, "info")
}

/// [`serve`] logging at `RUST_LOG=log`.
fn serve_logging(name: &str, kubeconfig: &str, port: u16, log: &str) -> Daemon {
    let config = temp(&format!("{name}-config.yaml"), CONFIG);
    Daemon::spawn(
        &[
            "serve",
            "--config",
            &config,
            "--kubeconfig",
            kubeconfig,
            "--insecure-serving",
            "--bind-address",
            "127.0.0.1",
            "--secure-port",
            &port.to_string(),
        ],
        log,
    )
}

/// `GET path` over plain HTTP: the status code and the body; `None` when nothing
/// answers.
fn get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    let mut tcp = std::net::TcpStream::connect(addr).ok()?;
    tcp.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    tcp.write_all(request.as_bytes()).ok()?;
    let mut raw = Vec::new();
    let _ = tcp.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let code = text.split_whitespace().nth(1)?.parse().ok()?;
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string())?;
    Some((code, body))
}

/// Waits up to `limit` for `done`, panicking with `what` otherwise.
fn eventually(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if done() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("not within {limit:?}: {what}");
}

fn bound(fake: &FakeApi, pod: &str) -> bool {
    fake.get("pods", "default", pod)
        .unwrap()
        .is_some_and(|p| p["spec"]["nodeName"].is_string())
}

/// A fake cluster of one node on loopback, and its kubeconfig.
fn cluster(
    runtime: &tokio::runtime::Runtime,
    name: &str,
) -> (FakeApi, topospread_fakeapi::Served, String) {
    let fake = FakeApi::new();
    fake.insert(node("n1")).unwrap();
    let served = runtime
        .block_on(fake.serve("127.0.0.1:0".parse().unwrap()))
        .unwrap();
    let kubeconfig = temp(&format!("{name}-kubeconfig"), &served.kubeconfig());
    (fake, served, kubeconfig)
}

/// Reads `stderr` on a thread until `line` holds `until` (or it ends); returns what was
/// read.
fn read_until(stderr: ChildStderr, until: &'static str) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let mut lines = BufReader::new(stderr);
        let mut line = String::new();
        while lines.read_line(&mut line).is_ok_and(|n| n > 0) {
            text.push_str(&line);
            if line.contains(until) {
                break;
            }
            line.clear();
        }
        text
    })
}

/// Logs to a pipe carry no terminal escape codes, for `serve` and `guard --live` (whose
/// `--log-format json` gives one JSON object a line); SIGTERM makes the guard release its
/// Lease and exit 0.
#[test]
fn logs_to_a_pipe_have_no_escape_codes() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (fake, served, kubeconfig) = cluster(&runtime, "daemon-ansi");
    let mut serve = serve("daemon-ansi", &kubeconfig, free_port());
    let text = read_until(serve.stderr(), "caches synced").join().unwrap();
    assert!(text.contains("caches synced"), "{text}");
    assert!(!text.contains('\x1b'), "{text:?}");

    let mut guard = Daemon::spawn(
        &[
            "guard",
            "--live",
            "--kubeconfig",
            &kubeconfig,
            "--insecure-serving",
            "--bind-address",
            "127.0.0.1",
            "--secure-port",
            &free_port().to_string(),
            "--log-format",
            "json",
        ],
        "info",
    );
    let text = read_until(guard.stderr(), "acquired the lease")
        .join()
        .unwrap();
    assert!(text.contains("acquired the lease"), "{text}");
    assert!(!text.contains('\x1b'), "{text:?}");
    for line in text.lines() {
        assert!(serde_json::from_str::<Value>(line).is_ok(), "{line}");
    }
    assert_eq!(guard.terminate(), Some(0));
    let lease = fake
        .get("leases.coordination.k8s.io", "default", "topospread-guard")
        .unwrap()
        .unwrap();
    assert_eq!(lease["spec"]["holderIdentity"], "", "{lease}");
    drop(serve);
    runtime.block_on(served.shutdown());
}

/// A closed stderr (a log collector gone) leaves serve scheduling: the lines it could
/// not write are counted on /metrics, and SIGTERM still releases the Lease with exit 0.
#[test]
fn a_closed_stderr_leaves_serve_scheduling() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (fake, served, kubeconfig) = cluster(&runtime, "daemon-closed");
    let port = free_port();
    // Debug lines go on being written (each watch event, each bind) after the close.
    let mut serve = serve_logging(
        "daemon-closed",
        &kubeconfig,
        port,
        "info,topospread_serve=debug",
    );
    let stderr = serve.stderr();
    let text = read_until(stderr, "caches synced").join().unwrap();
    assert!(text.contains("caches synced"), "{text}");
    // The reader is gone: the pipe is closed.
    fake.insert(pending("after-close")).unwrap();
    eventually(Duration::from_secs(20), "the pod bound", || {
        bound(&fake, "after-close")
    });
    assert!(serve.0.try_wait().unwrap().is_none(), "serve exited");
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    eventually(Duration::from_secs(10), "dropped lines counted", || {
        get(addr, "/metrics").is_some_and(|(_, body)| {
            body.lines().any(|l| {
                l.starts_with("topospread_log_lines_dropped_total ")
                    && l.split_whitespace().nth(1) != Some("0")
            })
        })
    });
    assert_eq!(serve.terminate(), Some(0));
    let lease = fake.get("leases.coordination.k8s.io", "default", "topospread");
    let lease = lease.unwrap().unwrap();
    assert_eq!(lease["spec"]["holderIdentity"], "", "{lease}");
    runtime.block_on(served.shutdown());
}

/// Started before its API server: /healthz answers at once and /readyz says what it
/// waits for; once the server answers, the release is read, the caches sync and pods
/// are bound.
#[test]
fn serve_starts_before_the_api_server() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let api = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let fake = FakeApi::new();
    fake.insert(node("n1")).unwrap();
    fake.insert(pending("early")).unwrap();
    let kubeconfig = temp(
        "daemon-early-kubeconfig",
        &format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: 'http://{api}'}}\n\
             users:\n- name: u\n  user: {{}}\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\n\
             current-context: c\n"
        ),
    );
    let port = free_port();
    let health = SocketAddr::from(([127, 0, 0, 1], port));
    let mut serve = serve("daemon-early", &kubeconfig, port);
    let log = read_until(serve.stderr(), "caches synced");
    eventually(Duration::from_secs(20), "/healthz 200", || {
        get(health, "/healthz").is_some_and(|(c, _)| c == 200)
    });
    let (code, body) = get(health, "/readyz").unwrap();
    assert_eq!(code, 503, "{body}");
    assert!(
        body.starts_with("waiting for the API server's release (/version)"),
        "{body}"
    );
    std::thread::sleep(Duration::from_secs(2));
    assert!(serve.0.try_wait().unwrap().is_none(), "serve exited");
    let served = runtime.block_on(fake.serve(api)).unwrap();
    eventually(Duration::from_secs(40), "the pod bound", || {
        bound(&fake, "early")
    });
    eventually(Duration::from_secs(10), "/readyz 200", || {
        get(health, "/readyz").is_some_and(|(c, _)| c == 200)
    });
    assert_eq!(serve.terminate(), Some(0));
    let log = log.join().unwrap();
    assert!(
        log.contains("reading the API server's release (/version) failed; retrying"),
        "{log}"
    );
    runtime.block_on(served.shutdown());
}

/// SIGTERM while the API server never answered: exit 0 at once.
#[test]
fn sigterm_before_the_api_server_answers_exits_0() {
    let kubeconfig = temp(
        "daemon-never-kubeconfig",
        &format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: 'http://127.0.0.1:{}'}}\n\
             users:\n- name: u\n  user: {{}}\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\n\
             current-context: c\n",
            free_port()
        ),
    );
    let port = free_port();
    let mut serve = serve("daemon-never", &kubeconfig, port);
    let health = SocketAddr::from(([127, 0, 0, 1], port));
    eventually(Duration::from_secs(20), "/healthz 200", || {
        get(health, "/healthz").is_some_and(|(c, _)| c == 200)
    });
    assert_eq!(serve.terminate(), Some(0));
}
