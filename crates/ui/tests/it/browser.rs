//! The page in headless Chromium over a generated 5,000-node dump: it loads, a pod's
//! node table renders and sorts, a what-if changes the numbers, maxSkew 0 is shown
//! refused, and nothing reaches the console as an error; and the Rebalance view draws a
//! plan's moves as arrows between domains. The page's `?selftest=1` (`=rebalance`) does
//! the clicking and writes its findings into the DOM, which `--dump-dom` prints.
//!
//! Needs Debian's `chromium` (`.ci/run` installs it); `TOPOSPREAD_CHROMIUM` names
//! another binary, `TOPOSPREAD_UI_PODS` the dump's bound pods (default 50,000).

use crate::dump::{NODES, write_dump};
use std::net::{IpAddr, Ipv4Addr};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;
use topospread_jobs::{Context, InputOptions};
use topospread_ui::{Options, Session};

/// The text of the element `id` in a dumped DOM.
fn element_text<'a>(dom: &'a str, id: &str) -> Option<&'a str> {
    let start = dom.find(&format!("id=\"{id}\""))?;
    let open = start + dom[start..].find('>')? + 1;
    let close = open + dom[open..].find("</")?;
    Some(&dom[open..close])
}

/// Serves `session` and opens the page in headless Chromium with `?selftest=KIND`;
/// returns the self-test's findings, after checking that nothing reached the console
/// as an error.
fn self_test(session: Session, kind: &str) -> serde_json::Value {
    let chromium = std::env::var("TOPOSPREAD_CHROMIUM").unwrap_or_else(|_| "chromium".into());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let bound = runtime
        .block_on(topospread_ui::bind(IpAddr::V4(Ipv4Addr::LOCALHOST), 0))
        .expect("bind");
    let url = format!("{}?selftest={kind}", bound.url());
    runtime.spawn(bound.serve(Arc::new(session), std::future::pending()));

    let out = Command::new(&chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            // Virtual time runs on while requests are in flight; the budget bounds the
            // page's own timers, not the server's work.
            "--virtual-time-budget=600000",
            "--dump-dom",
            &url,
        ])
        .output()
        .expect("headless Chromium runs");
    let dom = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let text = element_text(&dom, "selftest").unwrap_or_default();
    let Ok(result) = serde_json::from_str::<serde_json::Value>(
        &text.replace("&quot;", "\"").replace("&amp;", "&"),
    ) else {
        panic!("no self-test result in the page:\n{dom}\n{stderr}")
    };
    eprintln!("self-test: {result}");
    let console_errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("CONSOLE") && (l.contains("Uncaught") || l.contains("Error")))
        .collect();
    assert!(
        console_errors.is_empty(),
        "console errors: {console_errors:?}"
    );
    result
}

#[test]
#[ignore = "needs chromium"]
fn the_page_over_5000_nodes_picks_sorts_and_runs_what_ifs_without_console_errors() {
    let pods = std::env::var("TOPOSPREAD_UI_PODS")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(50_000);
    let dir = std::env::temp_dir().join(format!("topospread-ui-browser-{}", std::process::id()));
    let files = write_dump(&dir, pods);
    let ctx = Context::new().with_input(InputOptions::new(u64::MAX, usize::MAX, false));
    let started = Instant::now();
    let session = Session::load(&ctx, Options::new(files)).expect("load the dump");
    eprintln!(
        "loaded {NODES} nodes, {pods} pods in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&dir);
    // The server's share of picking a pod (the page's self-test picks the first; this
    // one is not cached): its explain report, computed and serialized.
    if let Some(p) = session.simulation().pods.get(1) {
        let started = Instant::now();
        let json = session
            .explain(&format!("{}/{}", p.namespace, p.pod))
            .expect("explain");
        eprintln!(
            "explain {}/{}: {:.2} s, {} KiB of JSON",
            p.namespace,
            p.pod,
            started.elapsed().as_secs_f64(),
            json.len() / 1024
        );
    }

    let result = self_test(session, "1");
    eprintln!(
        "picking a pod to its full table, in the page: {} ms (Chromium's virtual clock, which does not advance while a request is in flight)",
        result["steps"]["pickMs"]
    );
    assert_eq!(result["ok"], true, "{result}");
    let steps = &result["steps"];
    assert_eq!(steps["nodes"], NODES);
    assert_eq!(steps["rows"], NODES, "every node in the pod's table");
    assert!(
        steps["domRows"].as_u64().is_some_and(|n| n > 0 && n < 200),
        "{steps}"
    );
    assert_eq!(steps["sorted"], true);
    // The nodes as a heatmap grouped by zone: a cell each, no caption cut.
    assert_eq!(steps["heatCells"], NODES, "{steps}");
    assert!(
        steps["heatGroups"].as_u64().is_some_and(|g| g >= 2),
        "{steps}"
    );
    assert!(
        steps["barCharts"].as_u64().is_some_and(|b| b >= 1),
        "{steps}"
    );
    assert_eq!(steps["clipped"], serde_json::json!([]), "{steps}");
    // The pod picked and the what-if run are in the URL.
    let url = steps["url"].as_str().unwrap_or_default();
    assert!(
        url.contains("view=whatif") && url.contains("pod=") && url.contains("whatif="),
        "{url}"
    );
    let whatif = &steps["whatIfPods"];
    assert_ne!(whatif[0], whatif[1], "the what-if changed the pods");
    assert!(
        steps["refusal"]
            .as_str()
            .is_some_and(|r| r.contains("maxSkew"))
    );
}

/// The Rebalance view over a decayed cluster (nine pods in z0, one in z4, maxSkew 1):
/// the plan's seven moves drawn as arrows out of z0 and listed in the moves table.
#[test]
#[ignore = "needs chromium"]
fn the_rebalance_view_draws_moves_as_arrows_between_domains() {
    let file = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/rebalance/minimal-one-constraint.yaml");
    let session = Session::load(&Context::new(), Options::new(vec![file])).expect("load");
    let result = self_test(session, "rebalance");
    assert_eq!(result["ok"], true, "{result}");
    let steps = &result["steps"];
    assert_eq!(steps["moves"], 7);
    assert_eq!(steps["moveRows"], 7);
    assert_eq!(
        steps["keys"],
        serde_json::json!(["topology.kubernetes.io/zone"])
    );
    assert_eq!(steps["arrows"], 4, "{steps}");
    assert_eq!(
        steps["arrowTitles"],
        serde_json::json!([
            "2 move(s): z0 to z1",
            "2 move(s): z0 to z2",
            "2 move(s): z0 to z3",
            "1 move(s): z0 to z4"
        ])
    );
}

/// Three zones and six nodes named as EKS names them (long), a Deployment spread over
/// the zones, and a bare Pod `mypod` with the same constraint.
fn long_names_cluster() -> std::path::PathBuf {
    let mut yaml = String::new();
    for i in 0..6 {
        let zone = format!(
            "us-west-2{}-a-rather-long-availability-zone",
            ["a", "b", "c"][i % 3]
        );
        yaml.push_str(&format!(
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: ip-10-0-{i}-23.us-west-2.compute.internal\n  labels:\n    kubernetes.io/hostname: ip-10-0-{i}-23.us-west-2.compute.internal\n    topology.kubernetes.io/zone: {zone}\nstatus:\n  allocatable: {{cpu: '4', memory: 16Gi, pods: '110'}}\n---\n"
        ));
    }
    let spread = "topologySpreadConstraints:\n  - maxSkew: 1\n    topologyKey: topology.kubernetes.io/zone\n    whenUnsatisfiable: DoNotSchedule\n    labelSelector: {matchLabels: {app: web}}\n";
    yaml.push_str(&format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: default}}\nspec:\n  replicas: 4\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec:\n      containers: [{{name: web, image: web}}]\n      {}---\n",
        spread.replace("\n  ", "\n        ").trim_end().to_string() + "\n"
    ));
    yaml.push_str(&format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: mypod, namespace: default, labels: {{app: web}}}}\nspec:\n  containers: [{{name: web, image: web}}]\n  {}",
        spread.replace("\n  ", "\n    ")
    ));
    let file = std::env::temp_dir().join(format!("topospread-ui-long-{}.yaml", std::process::id()));
    std::fs::write(&file, yaml).expect("write the cluster");
    file
}

/// The Domains view over long zone and node names: the zone constraint as bars with the
/// global minimum and the maxSkew band, the nodes as a heatmap grouped by zone; every
/// long name cut in the middle with the whole name on hover, no caption cut by its
/// chart's edge.
#[test]
#[ignore = "needs chromium"]
fn bars_and_heatmap_cut_long_names_in_the_middle_and_keep_captions_whole() {
    let file = long_names_cluster();
    let session = Session::load(&Context::new(), Options::new(vec![file.clone()])).expect("load");
    let _ = std::fs::remove_file(&file);
    let result = self_test(session, "pictures");
    assert_eq!(result["ok"], true, "{result}");
    let steps = &result["steps"];
    assert_eq!(steps["barCharts"], 1, "{steps}");
    assert_eq!(steps["bars"], 3, "a bar per zone: {steps}");
    assert_eq!(steps["bands"], 1, "{steps}");
    assert_eq!(steps["minLines"], 1, "{steps}");
    assert_eq!(steps["heatCells"], 6, "{steps}");
    assert_eq!(steps["heatGroups"], 3, "{steps}");
    assert_eq!(steps["clipped"], serde_json::json!([]), "{steps}");
    let labels: Vec<&str> = steps["labels"]
        .as_array()
        .expect("labels")
        .iter()
        .filter_map(|l| l.as_str())
        .collect();
    let titles: Vec<&str> = steps["titles"]
        .as_array()
        .expect("titles")
        .iter()
        .filter_map(|l| l.as_str())
        .collect();
    assert!(
        labels.contains(&"us-west-2a-a-rat\u{2026}vailability-zone"),
        "{labels:?}"
    );
    assert!(
        titles.contains(&"us-west-2a-a-rather-long-availability-zone"),
        "{titles:?}"
    );
    assert!(labels.iter().all(|l| l.chars().count() <= 33), "{labels:?}");
    assert!(
        steps["cellTitle"].as_str().is_some_and(
            |t| t.starts_with("ip-10-0-") && t.contains(".us-west-2.compute.internal: ")
        ),
        "{steps}"
    );
}

/// A link opens the same picture: the view, the pod explained and the what-if run are
/// read from the URL; the what-if's Before shows counts only, After the change.
#[test]
#[ignore = "needs chromium"]
fn a_link_opens_the_same_view_pod_and_what_if() {
    let file = long_names_cluster();
    let session = Session::load(&Context::new(), Options::new(vec![file.clone()])).expect("load");
    let _ = std::fs::remove_file(&file);
    let whatif = r#"{"scale":["deployment/default/web=10"]}"#;
    let query = format!(
        "link&view=whatif&pod=default%2Fmypod&whatif={}",
        whatif
            .bytes()
            .map(|b| format!("%{b:02X}"))
            .collect::<String>()
    );
    let result = self_test(session, &query);
    assert_eq!(result["ok"], true, "{result}");
    let steps = &result["steps"];
    assert_eq!(steps["view"], "whatif", "{steps}");
    assert_eq!(steps["pod"], "default/mypod", "{steps}");
    assert_eq!(steps["nodeRows"], 6, "{steps}");
    assert_eq!(steps["whatifScale"], "deployment/default/web=10", "{steps}");
    // Before and after, a table per constraint of the Deployment and of mypod.
    assert_eq!(steps["whatifDrawn"], 4, "{steps}");
    // Before: counts, never negative, no change column; After: the changes, upward.
    let before: Vec<i64> = steps["before"]
        .as_array()
        .expect("before")
        .iter()
        .filter_map(serde_json::Value::as_i64)
        .collect();
    assert_eq!(before, [2, 2, 1, 2, 2, 1], "{steps}");
    assert!(before.iter().all(|n| *n >= 0), "{steps}");
    assert_eq!(steps["beforeHasChange"], 0, "{steps}");
    let changes = steps["afterChanges"].as_array().expect("changes");
    assert!(!changes.is_empty(), "{steps}");
    assert!(
        changes
            .iter()
            .all(|c| c.as_str().is_some_and(|c| c.starts_with('+'))),
        "{steps}"
    );
    // The URL still names all three (the page rewrote it from its state).
    let url = steps["url"].as_str().unwrap_or_default();
    assert!(
        url.contains("view=whatif")
            && url.contains("pod=default%2Fmypod")
            && url.contains("whatif="),
        "{url}"
    );
}

/// The Capacity view, opened by a link (`?view=capacity&workload=...`), over
/// kubernetes/autoscaler#4129's shape: the nodes added per zone as three bars (5 each),
/// the additions table, the chosen workload's two constraints with their maxSkew bands, the
/// binpacking estimate beside it; the link's state kept in the URL.
#[test]
#[ignore = "needs chromium"]
fn the_capacity_view_draws_nodes_per_zone_and_the_spread_from_a_link() {
    let dir =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/fixtures/capacity");
    let mut options = Options::new(vec![dir.join("autoscaler-4129.yaml")]);
    options.templates = vec![dir.join("nodegroup.yaml")];
    let session = Session::load(&Context::new(), options).expect("load");
    let result = self_test(
        session,
        "capacity&view=capacity&workload=default%2Fweb-7466cc4bdb",
    );
    assert_eq!(result["ok"], true, "{result}");
    let steps = &result["steps"];
    assert_eq!(steps["view"], "capacity");
    assert_eq!(steps["nodes"], 15);
    assert_eq!(steps["zoneBars"], 3);
    assert_eq!(
        steps["zoneLabels"],
        serde_json::json!(["us-east-1a", "us-east-1b", "us-east-1c"])
    );
    assert_eq!(
        steps["additions"],
        serde_json::json!([
            ["m5-large", "us-east-1a", "5"],
            ["m5-large", "us-east-1b", "5"],
            ["m5-large", "us-east-1c", "5"]
        ])
    );
    assert_eq!(steps["workload"], "default/web-7466cc4bdb");
    assert_eq!(steps["spreadCharts"], 2, "{steps}");
    assert_eq!(steps["bands"], 2, "{steps}");
    assert_eq!(steps["greedyRows"], 1);
    assert!(
        steps["url"]
            .as_str()
            .is_some_and(|u| u.contains("view=capacity") && u.contains("workload=")),
        "{steps}"
    );
    assert_eq!(steps["clipped"], serde_json::json!([]), "{steps}");
}
