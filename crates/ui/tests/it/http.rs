//! `topospread ui` over HTTP: the server started in-process on a free loopback port,
//! every endpoint read as a client would, the JSON checked against the report types,
//! and bad requests answered 4xx with a one-line JSON error.

use serde_json::Value;
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use topospread_jobs::{Cluster, Context};
use topospread_ui::{Options, Session};

/// A response: status, headers (lower-case names) and body.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        let Ok(v) = serde_json::from_str(&self.body) else {
            panic!("not JSON: {}", self.body)
        };
        v
    }

    /// The one-line error of a 4xx answer.
    fn error(&self) -> String {
        let e = self.json()["error"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(!e.is_empty() && !e.contains('\n'), "error {e:?}");
        e
    }
}

/// The docs' example (4 nodes, 2 zones, a Deployment of 6) served on a free port.
async fn server() -> SocketAddr {
    server_for(Vec::new()).await
}

/// `files` loaded and served on a free port (none: the docs' example).
async fn server_for(files: Vec<PathBuf>) -> SocketAddr {
    let session = Session::load(&Context::new(), Options::new(Cluster::new(files))).expect("load");
    let bound = topospread_ui::bind(IpAddr::V4(Ipv4Addr::LOCALHOST), 0)
        .await
        .expect("bind");
    let address = bound.address;
    tokio::spawn(bound.serve(Arc::new(session), std::future::pending()));
    address
}

/// One HTTP/1.1 request; `extra` header lines end in `\r\n`.
async fn request(addr: SocketAddr, method: &str, path: &str, extra: &str, body: &str) -> Answer {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n{extra}\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).await.expect("write");
    s.write_all(body.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).await.expect("read");
    let text = String::from_utf8(raw).expect("utf-8");
    let (head, body) = text.split_once("\r\n\r\n").expect("head");
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .expect("status line");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Answer {
        status,
        headers,
        body: body.to_string(),
    }
}

async fn get(addr: SocketAddr, path: &str) -> Answer {
    request(addr, "GET", path, "", "").await
}

async fn what_if(addr: SocketAddr, body: &str) -> Answer {
    request(
        addr,
        "POST",
        "/api/whatif",
        "Content-Type: application/json\r\n",
        body,
    )
    .await
}

#[tokio::test]
async fn the_page_and_its_assets_are_embedded_and_fetch_nothing_elsewhere() {
    let addr = server().await;
    let page = get(addr, "/").await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("<script src=\"/app.js\""));
    let csp = page.header("content-security-policy").expect("CSP");
    assert!(csp.contains("connect-src 'self'") && csp.contains("default-src 'none'"));
    let js = get(addr, "/app.js").await;
    assert_eq!(js.status, 200);
    assert!(js.body.contains("/api/explain"));
    // The SVG namespace (an XML name, never fetched) is the one URL-shaped string.
    let code = js.body.replace("\"http://www.w3.org/2000/svg\"", "");
    assert!(!code.contains("http://") && !code.contains("https://"));
    assert_eq!(get(addr, "/style.css").await.status, 200);
    let missing = get(addr, "/nope").await;
    assert_eq!(missing.status, 404);
    missing.error();
}

#[tokio::test]
async fn cluster_is_the_show_report_with_nodes_grouped_by_zone() {
    let addr = server().await;
    let a = get(addr, "/api/cluster").await;
    assert_eq!(a.status, 200);
    assert_eq!(a.header("content-type"), Some("application/json"));
    let v = a.json();
    assert_eq!(v["show"]["kind"], "ShowReport");
    assert_eq!(v["group_key"], "zone");
    let groups = v["groups"].as_array().expect("groups");
    let domains: Vec<&str> = groups.iter().filter_map(|g| g["domain"].as_str()).collect();
    assert_eq!(domains, ["zoneA", "zoneB"]);
    let nodes: Vec<&str> = groups
        .iter()
        .flat_map(|g| g["nodes"].as_array().into_iter().flatten())
        .filter_map(|n| n["name"].as_str())
        .collect();
    assert_eq!(nodes, ["node1", "node2", "node3", "node4"]);
    // Each group's count is the show report's count of its domain.
    let zone_counts = &v["show"]["domains"][0]["counts"];
    assert_eq!(groups[0]["count"], zone_counts["zoneA"]);
    assert_eq!(groups[1]["count"], zone_counts["zoneB"]);

    let marked = get(addr, "/api/cluster?selector=foo%3Dbar").await.json();
    assert!(
        marked["show"]["marked"]
            .as_str()
            .is_some_and(|m| m.contains("foo=bar"))
    );
    let bad = get(addr, "/api/cluster?selector=a%20in%20(").await;
    assert!((400..500).contains(&bad.status), "{}", bad.status);
    assert!(bad.error().contains("selector"));
}

#[tokio::test]
async fn simulation_and_explain_are_the_jobs_reports() {
    let addr = server().await;
    let sim = get(addr, "/api/simulation").await.json();
    assert_eq!(sim["kind"], "SimulationReport");
    assert_eq!(
        (sim["scheduled"].as_u64(), sim["pending"].as_u64()),
        (Some(6), Some(0))
    );
    let pod = &sim["pods"][0];
    let name = format!(
        "{}/{}",
        pod["namespace"].as_str().unwrap_or_default(),
        pod["pod"].as_str().unwrap_or_default()
    );
    let x = get(addr, &format!("/api/explain?pod={name}")).await;
    assert_eq!(x.status, 200, "{}", x.body);
    let x = x.json();
    assert_eq!(x["kind"], "ExplainReport");
    assert_eq!(x["pod"], name.as_str());
    let nodes = x["nodes"].as_array().expect("nodes");
    assert_eq!(nodes.len(), 4);
    for n in nodes {
        assert!(!n["filters"].as_array().expect("filters").is_empty());
        for s in n["scores"].as_array().into_iter().flatten() {
            for f in ["plugin", "raw", "normalized", "weighted"] {
                assert!(!s[f].is_null(), "{f} in {s}");
            }
        }
    }
    assert_eq!(x["outcome"]["scheduled"], pod["node"]);
    assert_eq!(x["spread"].as_array().map(Vec::len), Some(2));
    // Asked again: the kept report.
    let again = get(addr, &format!("/api/explain?pod={name}")).await;
    assert_eq!(again.json(), x);
}

/// A file under the repository's `tests/` or the CLI's fixtures.
fn repo_file(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

#[tokio::test]
async fn explain_answers_what_topospread_explain_answers_in_the_prepared_cluster() {
    // A pod that preempts (its failed cycle comes with it), one that stays Pending and
    // one the cluster does not have: each served answer is the fresh job's.
    let file = repo_file("crates/cli/tests/fixtures/preemption.yaml");
    let addr = server_for(vec![file.clone()]).await;
    let ctx = Context::new();
    for pod in ["default/checkout", "checkout", "default/nope"] {
        let served = get(addr, &format!("/api/explain?pod={pod}")).await;
        let fresh = topospread_jobs::explain::explain(
            &ctx,
            topospread_jobs::explain::ExplainRequest::new(vec![file.clone()], pod),
        );
        match fresh {
            Ok(report) => {
                assert_eq!(served.status, 200, "{pod}: {}", served.body);
                let fresh = serde_json::to_value(&report).expect("report JSON");
                assert_eq!(served.json(), fresh, "{pod}");
            }
            Err(e) => {
                assert_eq!(served.status, 404, "{pod}: {}", served.body);
                assert_eq!(served.error(), e.to_string(), "{pod}");
            }
        }
    }
    let preempting = get(addr, "/api/explain?pod=checkout").await.json();
    assert!(preempting["preempting_cycle"].is_object(), "{preempting}");
}

#[tokio::test]
async fn rebalance_is_the_jobs_report_and_its_moves_between_domains() {
    // Nine pods in z0, none in z1..z3, one in z4 (maxSkew 1, DoNotSchedule): seven
    // moves out of z0.
    let file = repo_file("tests/rebalance/minimal-one-constraint.yaml");
    let addr = server_for(vec![file.clone()]).await;
    let a = get(addr, "/api/rebalance").await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.header("content-type"), Some("application/json"));
    let report = a.json();
    let mut request = topospread_jobs::rebalance::RebalanceRequest::new(vec![file]);
    request.cluster.seed = 0;
    let fresh = topospread_jobs::rebalance::rebalance(&Context::new(), request).expect("plan");
    assert_eq!(
        report,
        serde_json::to_value(&fresh.report).expect("report JSON")
    );
    assert_eq!(report["kind"], "RebalanceReport");
    assert_eq!(report["strategy"], "topospread");
    let moves = report["moves"].as_array().expect("moves");
    assert_eq!(moves.len(), 7);
    assert!(moves.iter().all(|m| m["from"] == "n0"), "{report}");
    assert_eq!(report["before"][0]["constraints"][0]["skew"], 9);
    assert_eq!(report["after"][0]["constraints"][0]["skew"], 0);

    let charts = get(addr, "/api/rebalance/moves").await.json();
    let charts = charts.as_array().expect("one chart per topology key");
    assert_eq!(charts.len(), 1);
    let zone = &charts[0];
    assert_eq!(zone["topology_key"], "topology.kubernetes.io/zone");
    let domain_moves = zone["moves"].as_array().expect("moves");
    assert_eq!(domain_moves.len(), 7);
    let mut landed: BTreeMap<&str, usize> = BTreeMap::new();
    for (m, r) in domain_moves.iter().zip(moves) {
        assert_eq!(m["from"], "z0");
        assert_eq!(
            m["pod"].as_str(),
            Some(format!("default/{}", r["pod"].as_str().unwrap_or_default()).as_str())
        );
        *landed
            .entry(m["to"].as_str().unwrap_or_default())
            .or_default() += 1;
    }
    assert_eq!(
        landed,
        BTreeMap::from([("z1", 2), ("z2", 2), ("z3", 2), ("z4", 1)])
    );
    // The arrows `rebalance -o html` draws: one per (from, to) pair, titled with its
    // number of moves.
    let svg = zone["svg"].as_str().expect("svg");
    assert!(svg.starts_with("<svg class=\"chart moves\""), "{svg}");
    assert_eq!(svg.matches("<line class=\"move\"").count(), 4, "{svg}");
    assert!(svg.contains("<title>2 move(s): z0 to z1</title>"), "{svg}");
    assert!(svg.contains("<title>1 move(s): z0 to z4</title>"), "{svg}");

    let d = get(addr, "/api/rebalance?strategy=descheduler").await;
    assert_eq!(d.status, 200, "{}", d.body);
    assert_eq!(d.json()["strategy"], "descheduler");
    let bad = get(addr, "/api/rebalance/moves?strategy=nope").await;
    assert_eq!(bad.status, 400);
    assert!(bad.error().contains("strategy \"nope\""));
}

#[tokio::test]
async fn unknown_pods_and_missing_parameters_are_4xx_one_line_errors() {
    let addr = server().await;
    let a = get(addr, "/api/explain?pod=default/nope").await;
    assert_eq!(a.status, 404);
    assert!(a.error().contains("default/nope"));
    let a = get(addr, "/api/explain").await;
    assert_eq!(a.status, 400);
    assert!(a.error().contains("pod="));
}

/// `workload`'s pod count and its first constraint's counts on one side.
fn side<'a>(v: &'a Value, workload: &str) -> (u64, &'a Value) {
    let Some(w) = v["workloads"]
        .as_array()
        .and_then(|ws| ws.iter().find(|w| w["workload"] == workload))
    else {
        panic!("{workload} in {v}")
    };
    (
        w["pods"].as_u64().unwrap_or(0),
        &w["constraints"][0]["counts"],
    )
}

#[tokio::test]
async fn what_if_scales_drains_and_loses_with_before_and_after() {
    let addr = server().await;
    let web = "deployment/default/mypod";
    let a = what_if(addr, r#"{"scale":["deployment/mypod=10"]}"#).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let v = a.json();
    assert_eq!(side(&v["before"], web).0, 6);
    assert_eq!(side(&v["after"], web).0, 10);
    assert_eq!(v["report"]["kind"], "SimulationReport");

    let v = what_if(addr, r#"{"lose":["zone=zoneB"]}"#).await.json();
    let after = side(&v["after"], web).1;
    assert!(after.get("zoneB").is_none_or(|n| n == 0), "{after}");
    assert_eq!(
        v["report"]["drained"]["nodes"].as_array().map(Vec::len),
        Some(2)
    );

    // A drain cordons the node and keeps it, as kubectl drain does.
    let v = what_if(addr, r#"{"drain":["node1"]}"#).await.json();
    assert_eq!(v["report"]["drained"]["cordoned"][0], "node1");

    let v = what_if(
        addr,
        r#"{"constraints":[{"workload":"deployment/mypod","maxSkew":3,"whenUnsatisfiable":"ScheduleAnyway"}]}"#,
    )
    .await
    .json();
    let c = &v["after"]["workloads"][0]["constraints"];
    assert!(
        c.as_array()
            .into_iter()
            .flatten()
            .any(|c| c["max_skew"] == 3 && c["when_unsatisfiable"] == "ScheduleAnyway"),
        "{c}"
    );
}

#[tokio::test]
async fn a_what_if_the_api_server_refuses_is_shown_refused_with_its_reason() {
    let addr = server().await;
    let a = what_if(
        addr,
        r#"{"constraints":[{"workload":"deployment/mypod","maxSkew":0}]}"#,
    )
    .await;
    assert_eq!(a.status, 422, "{}", a.body);
    let e = a.error();
    assert!(e.contains("refused") && e.contains("maxSkew"), "{e}");
}

#[tokio::test]
async fn bad_what_ifs_are_4xx_one_line_errors() {
    let addr = server().await;
    for (body, status, says) in [
        ("{}", 400, "nothing to change"),
        ("not json", 400, "what-if"),
        (r#"{"scael":[]}"#, 400, "unknown field"),
        (r#"{"scale":["deployment/mypod"]}"#, 400, "--scale"),
        (r#"{"drain":["node9"]}"#, 404, "node9"),
        (r#"{"lose":["zone"]}"#, 422, "KEY=VALUE"),
        (
            r#"{"constraints":[{"workload":"deployment/nope","maxSkew":2}]}"#,
            400,
            "not found",
        ),
        (
            r#"{"constraints":[{"workload":"deployment/mypod","index":7,"maxSkew":2}]}"#,
            400,
            "topologySpreadConstraints[7]",
        ),
    ] {
        let a = what_if(addr, body).await;
        assert_eq!(a.status, status, "{body}: {}", a.body);
        assert!(a.error().contains(says), "{body}: {}", a.body);
    }
    let a = request(
        addr,
        "POST",
        "/api/whatif",
        "Content-Type: text/plain\r\n",
        "{}",
    )
    .await;
    assert_eq!(a.status, 415);
    a.error();
}

#[tokio::test]
async fn other_origins_and_non_loopback_hosts_are_refused() {
    let addr = server().await;
    let a = request(
        addr,
        "GET",
        "/api/simulation",
        "Origin: https://evil.example\r\n",
        "",
    )
    .await;
    assert_eq!(a.status, 403);
    assert!(a.error().contains("evil.example"));
    assert!(a.header("access-control-allow-origin").is_none());
    let a = request(
        addr,
        "GET",
        "/api/simulation",
        "Sec-Fetch-Site: cross-site\r\n",
        "",
    )
    .await;
    assert_eq!(a.status, 403);
    // DNS rebinding: a page served as evil.example resolving to 127.0.0.1.
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.write_all(b"GET /api/simulation HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
        .await
        .expect("write");
    let mut raw = String::new();
    s.read_to_string(&mut raw).await.expect("read");
    assert!(raw.starts_with("HTTP/1.1 403"), "{raw}");
    // The page's own origin is served.
    let own = format!("Origin: http://{addr}\r\n");
    assert_eq!(
        request(addr, "GET", "/api/simulation", &own, "")
            .await
            .status,
        200
    );
}

/// `GET /api/capacity`: the plan `capacity --node-template` makes, with its pictures
/// (the nodes added per zone, each constraint's spread after the verified run); without
/// templates, a one-line 400.
#[tokio::test(flavor = "multi_thread")]
async fn capacity_is_the_jobs_plan_with_its_pictures() {
    let cluster = repo_file("crates/cli/tests/fixtures/capacity/autoscaler-4129.yaml");
    let template = repo_file("crates/cli/tests/fixtures/capacity/nodegroup.yaml");
    let mut options = Options::new(Cluster::new(vec![cluster.clone()]));
    options.templates = vec![template.clone()];
    let session = Session::load(&Context::new(), options).expect("load");
    let bound = topospread_ui::bind(IpAddr::V4(Ipv4Addr::LOCALHOST), 0)
        .await
        .expect("bind");
    let addr = bound.address;
    tokio::spawn(bound.serve(Arc::new(session), std::future::pending()));
    let a = get(addr, "/api/capacity").await;
    assert_eq!(a.status, 200, "{}", a.body);
    let v = a.json();
    let fresh = topospread_jobs::capacity::capacity(
        &Context::new(),
        topospread_jobs::capacity::CapacityRequest::new(vec![cluster], vec![template]),
    )
    .expect("plan");
    assert_eq!(v["report"]["nodes"], fresh.nodes);
    assert_eq!(v["report"]["nodes"], 15);
    let figures = v["figures"].as_array().expect("figures");
    assert_eq!(figures[0]["title"], "nodes added per zone");
    let svg = figures[0]["svg"].as_str().expect("svg");
    assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"), "{svg}");
    assert_eq!(svg.matches("<rect class=\"bar\"").count(), 3, "{svg}");
    // The zone and the hostname constraint of the one workload.
    assert_eq!(figures.len(), 3);
    assert!(
        figures[1]["caption"]
            .as_str()
            .is_some_and(|c| c.contains("maxSkew = ")),
        "{}",
        figures[1]
    );

    let none = server().await;
    let e = get(none, "/api/capacity").await;
    assert_eq!(e.status, 400);
    assert!(e.error().contains("--node-template"), "{}", e.body);
}
