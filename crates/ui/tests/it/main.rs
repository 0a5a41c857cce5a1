//! The web app's tests, one binary: its HTTP endpoints, and the page in headless
//! Chromium (ignored unless asked: `cargo test -p topospread-ui --test it -- --ignored`).

mod browser;
mod dump;
mod http;
