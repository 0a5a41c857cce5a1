//! Serves a fake API server on loopback until Ctrl-C, for poking at it with kubectl:
//! `cargo run -p topospread-fakeapi --example fakeapi -- 127.0.0.1:8001` then
//! `kubectl --server http://127.0.0.1:8001 get pods -A`. Files after the address are
//! loaded first: JSON objects, one document each, separated by `---` lines (a YAML
//! stream of JSON documents, which `topospread simulate -f` reads as well).

use std::net::SocketAddr;

use topospread_fakeapi::FakeApi;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let addr: SocketAddr = args
        .next()
        .unwrap_or_else(|| "127.0.0.1:0".to_owned())
        .parse()?;
    let fake = FakeApi::builder().log_requests(false).build();
    let mut loaded = 0usize;
    for file in args {
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{file}: {e}"))?;
        for doc in text.split("---\n") {
            let doc = doc.trim();
            if doc.is_empty() {
                continue;
            }
            let obj: serde_json::Value =
                serde_json::from_str(doc).map_err(|e| format!("{file}: {e}"))?;
            fake.insert(obj).map_err(|e| format!("{file}: {e}"))?;
            loaded += 1;
        }
    }
    let served = fake.serve(addr).await?;
    println!(
        "fake API server at {} ({loaded} objects loaded)",
        served.url()
    );
    tokio::signal::ctrl_c().await?;
    served.shutdown().await;
    Ok(())
}
