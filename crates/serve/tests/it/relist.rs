//! Relists: after watches expire (410) with changes the watchers never saw as events,
//! the cache equals the server's state.

use std::time::Duration;

use topospread_fakeapi::Faults;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_expired_watches_the_cache_equals_the_server() {
    let fake = cluster(6);
    for i in 0..12 {
        fake.insert(spread_pod(&format!("p-{i:02}"), "p")).unwrap();
    }
    let running = start(&fake, options(false, "a"));
    eventually(Duration::from_secs(15), "every pod bound", || async {
        all_bound(&fake)
    })
    .await;

    // Cut the watchers off, change the cluster behind their back, forget the history.
    fake.set_faults(
        Faults::seeded(1)
            .fail_requests(Some("watch"), None, 1.0)
            .fail_requests(Some("list"), None, 1.0),
    );
    fake.drop_watches();
    tokio::time::sleep(Duration::from_millis(100)).await;
    fake.delete("pods", "default", "p-00").unwrap();
    fake.delete("pods", "default", "p-01").unwrap();
    fake.delete("nodes", "", "n05").unwrap();
    fake.insert(node("n99", "c", "8")).unwrap();
    fake.insert(spread_pod("after", "p")).unwrap();
    fake.compact();
    fake.expire_watches();
    fake.clear_faults();

    eventually(
        Duration::from_secs(20),
        "cache equals the server",
        || async {
            let Some(view) = running.handle().cache_view().await else {
                return false;
            };
            let nodes: std::collections::BTreeSet<String> = fake
                .list("nodes", None)
                .unwrap()
                .iter()
                .map(|n| n["metadata"]["name"].as_str().unwrap().to_string())
                .collect();
            let ok = view.nodes == nodes && view.pods == placements(&fake) && all_bound(&fake);
            if !ok {
                eprintln!(
                    "view nodes {:?}\nserver nodes {nodes:?}\nview pods {:?}\nserver pods {:?}",
                    view.nodes,
                    view.pods,
                    placements(&fake)
                );
            }
            ok
        },
    )
    .await;
    running.shutdown().await.unwrap();
}

#[allow(dead_code)]
async fn debug_view(running: &topospread_serve::Running, fake: &topospread_fakeapi::FakeApi) {
    let view = running.handle().cache_view().await.unwrap();
    eprintln!(
        "view nodes {:?}\nview pods {:?}\nserver pods {:?}\nparked {} synced {}",
        view.nodes,
        view.pods,
        placements(fake),
        view.parked,
        view.synced
    );
}
