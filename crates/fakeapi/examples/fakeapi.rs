//! Serves an empty fake API server on loopback until Ctrl-C, for poking at it
//! with kubectl: `cargo run -p topospread-fakeapi --example fakeapi -- 127.0.0.1:8001`
//! then `kubectl --server http://127.0.0.1:8001 get pods -A`.

use std::net::SocketAddr;

use topospread_fakeapi::FakeApi;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr: SocketAddr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".to_owned())
        .parse()?;
    let served = FakeApi::new().serve(addr).await?;
    println!("fake API server at {}", served.url());
    tokio::signal::ctrl_c().await?;
    served.shutdown().await;
    Ok(())
}
