//! Secure serving as kube-scheduler's: HTTPS with a self-signed certificate, `/metrics`
//! behind a TokenReview and a SubjectAccessReview made against the fake API server, the
//! health endpoints always allowed, answers cached.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use std::io::{Read as _, Write as _};
use topospread_fakeapi::FakeApi;
use topospread_serve::{Delegation, Serving, TlsConfig};

use crate::support::*;

use crate::any_certificate::AnyCertificate;

/// `GET path` over HTTPS (HTTP/1.1, `Connection: close`) with an optional bearer token:
/// the status code and the body. Blocking I/O on a blocking thread (the tests' tokio
/// has no async I/O helpers).
pub async fn https_get(addr: SocketAddr, path: &str, token: Option<&str>) -> (u16, String) {
    let auth = token.map_or_else(String::new, |t| format!("Authorization: Bearer {t}\r\n"));
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Connection: close\r\n\r\n");
    tokio::task::spawn_blocking(move || {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .unwrap()
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
            .with_no_client_auth();
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let mut conn = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
        let mut tcp = std::net::TcpStream::connect(addr).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut tls = rustls::Stream::new(&mut conn, &mut tcp);
        tls.write_all(request.as_bytes()).unwrap();
        let mut raw = Vec::new();
        // A server closing without close_notify is an error rustls reports at the end.
        let _ = tls.read_to_end(&mut raw);
        let text = String::from_utf8_lossy(&raw).into_owned();
        let code = text
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let body = text
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default();
        (code, body)
    })
    .await
    .unwrap()
}

fn serving(fake: &FakeApi) -> Serving {
    let client = kube::Client::new(fake.router(), "default");
    Serving {
        tls: Some(TlsConfig::self_signed(&["topospread-0".into()]).unwrap()),
        delegation: Some(Delegation::new(client)),
    }
}

fn reviews(fake: &FakeApi, resource: &str) -> usize {
    fake.requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with(resource))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_need_a_token_the_cluster_knows_and_a_grant() {
    let fake = cluster(1);
    fake.add_token(
        "prometheus-token",
        "system:serviceaccount:monitoring:prometheus",
        &["system:serviceaccounts"],
    );
    fake.add_token("nobody-token", "nobody", &[]);
    fake.add_token("admin-token", "admin", &["system:masters"]);
    fake.allow_path(
        "system:serviceaccount:monitoring:prometheus",
        "get",
        "/metrics",
    );
    let mut o = options(false, "secure");
    o.listen = Some("127.0.0.1:0".parse().unwrap());
    o.serving = serving(&fake);
    let running = start(&fake, o);
    let addr = running.handle().listen_addr().unwrap();
    eventually(Duration::from_secs(10), "caches synced", || async {
        running.handle().ready()
    })
    .await;
    fake.clear_requests();

    // The health endpoints answer anyone, with no review at all.
    for path in ["/healthz", "/livez", "/readyz"] {
        assert_eq!(
            https_get(addr, path, None).await,
            (200, "ok".into()),
            "{path}"
        );
    }
    assert_eq!(reviews(&fake, "tokenreviews"), 0);
    assert_eq!(reviews(&fake, "subjectaccessreviews"), 0);

    // A granted service account reads the metrics.
    let (code, body) = https_get(addr, "/metrics", Some("prometheus-token")).await;
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("# EOF"), "{body}");

    // No token: system:anonymous, denied (403) as upstream's anonymous authenticator and
    // RBAC answer.
    let (code, body) = https_get(addr, "/metrics", None).await;
    assert_eq!(code, 403, "{body}");
    let status: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(status["reason"], "Forbidden");
    assert_eq!(
        status["message"],
        "forbidden: User \"system:anonymous\" cannot get path \"/metrics\""
    );

    // A token the cluster does not know: 401.
    let (code, body) = https_get(addr, "/metrics", Some("stolen")).await;
    assert_eq!(code, 401, "{body}");
    let status: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (status["reason"].as_str(), status["code"].as_u64()),
        (Some("Unauthorized"), Some(401))
    );

    // Known but not granted: 403 naming the user.
    let (code, body) = https_get(addr, "/metrics", Some("nobody-token")).await;
    assert_eq!(code, 403, "{body}");
    assert!(
        body.contains("User \\\"nobody\\\" cannot get path"),
        "{body}"
    );

    // system:masters needs no SubjectAccessReview.
    let before = reviews(&fake, "subjectaccessreviews");
    let (code, _) = https_get(addr, "/metrics", Some("admin-token")).await;
    assert_eq!(code, 200);
    assert_eq!(reviews(&fake, "subjectaccessreviews"), before);

    // Answers are cached: asking again makes no new review.
    let (tokens, accesses) = (
        reviews(&fake, "tokenreviews"),
        reviews(&fake, "subjectaccessreviews"),
    );
    for _ in 0..3 {
        assert_eq!(
            https_get(addr, "/metrics", Some("prometheus-token"))
                .await
                .0,
            200
        );
        assert_eq!(
            https_get(addr, "/metrics", Some("nobody-token")).await.0,
            403
        );
        assert_eq!(https_get(addr, "/metrics", Some("stolen")).await.0, 401);
    }
    assert_eq!(reviews(&fake, "tokenreviews"), tokens);
    assert_eq!(reviews(&fake, "subjectaccessreviews"), accesses);
    running.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_answers_expire() {
    let fake = cluster(1);
    fake.add_token("t", "alice", &[]);
    fake.allow_path("alice", "get", "/metrics");
    let client = kube::Client::new(fake.router(), "default");
    let d = Delegation::new(client).cache_ttl(Duration::from_millis(200));
    let user = d.authenticate("t").await.unwrap().unwrap();
    assert_eq!(user.username, "alice");
    assert!(user.groups.contains(&"system:authenticated".to_string()));
    assert_eq!(
        d.authorize(&user, "/metrics", "get").await.unwrap(),
        topospread_serve::Decision::Allow
    );
    assert_eq!(reviews(&fake, "tokenreviews"), 1);
    d.authenticate("t").await.unwrap();
    assert_eq!(reviews(&fake, "tokenreviews"), 1);
    tokio::time::sleep(Duration::from_millis(300)).await;
    d.authenticate("t").await.unwrap();
    d.authorize(&user, "/metrics", "get").await.unwrap();
    assert_eq!(reviews(&fake, "tokenreviews"), 2);
    assert_eq!(reviews(&fake, "subjectaccessreviews"), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_always_allowed_prefix_skips_authorization() {
    let fake = cluster(1);
    let mut o = options(false, "allow-paths");
    o.listen = Some("127.0.0.1:0".parse().unwrap());
    let mut s = serving(&fake);
    s.delegation = s
        .delegation
        .map(|d| d.always_allow_paths(vec!["/metrics*".into()]));
    o.serving = s;
    let running = start(&fake, o);
    let addr = running.handle().listen_addr().unwrap();
    assert_eq!(https_get(addr, "/metrics", None).await.0, 200);
    // /healthz is no longer in the list: anonymous is denied there now.
    assert_eq!(https_get(addr, "/healthz", None).await.0, 403);
    running.shutdown().await.unwrap();
}
