//! The container image of `deploy/Dockerfile` builds and runs, where an image builder
//! exists: `cargo test -p topospread-cli --test cli -- --ignored image` (`.ci/run` runs it
//! when docker or podman is on PATH, and says so when neither is).

use std::path::Path;
use std::process::Command;

/// The first image builder on PATH.
fn builder() -> Option<&'static str> {
    ["docker", "podman"].into_iter().find(|b| {
        Command::new(b)
            .arg("version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

#[test]
#[ignore = "needs docker or podman on PATH"]
fn image_builds_and_runs_the_cli() {
    let builder = builder().expect("docker or podman on PATH");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tag = "topospread:ci-test";
    let built = Command::new(builder)
        .args(["build", "-f", "deploy/Dockerfile", "-t", tag, "."])
        .current_dir(&root)
        .status()
        .unwrap();
    assert!(built.success(), "{builder} build failed");
    let run = Command::new(builder)
        .args(["run", "--rm", tag, "--version"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    let out = String::from_utf8_lossy(&run.stdout);
    assert_eq!(
        out.trim(),
        format!("topospread {}", env!("CARGO_PKG_VERSION")),
        "{out}"
    );
}
