//! `topospread ui` as a binary: bad files fail at start as `simulate` fails, and a good
//! start prints the loopback URL on stderr and serves the page there.

use super::{run, stderr};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

#[test]
fn ui_refuses_bad_files_at_start_as_simulate_does() {
    let missing = "no-such-dir/cluster.yaml";
    let ui = run(&["ui", "-f", missing, "--port", "0"]);
    let simulate = run(&["simulate", "-f", missing]);
    assert_eq!(ui.status.code(), Some(2));
    assert_eq!(stderr(&ui), stderr(&simulate));
    assert_eq!(stderr(&ui).lines().count(), 1, "{}", stderr(&ui));
}

#[test]
fn ui_prints_its_loopback_url_and_serves_the_page() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_topospread"))
        .args(["ui", "--port", "0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let url = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| {
            l.split_whitespace()
                .find(|w| w.starts_with("http://127.0.0.1:"))
                .map(str::to_string)
        })
        .expect("the URL on stderr");
    let authority = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let mut s = TcpStream::connect(&authority).expect("connect");
    write!(
        s,
        "GET /api/simulation HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
    )
    .expect("write");
    let mut answer = String::new();
    s.read_to_string(&mut answer).expect("read");
    let _ = child.kill();
    let _ = child.wait();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\"kind\":\"SimulationReport\""), "{answer}");
}
