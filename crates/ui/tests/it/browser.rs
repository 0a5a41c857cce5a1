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
    let Ok(result) = serde_json::from_str::<serde_json::Value>(&text.replace("&quot;", "\""))
    else {
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
