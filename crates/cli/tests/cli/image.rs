//! The container image of `deploy/Dockerfile` builds and runs, where an image builder
//! exists: `cargo test -p topospread-cli --test cli -- --ignored image` (`.ci/run` runs it
//! when a docker daemon or podman answers, and says so when neither does).

use std::path::Path;
use std::process::Command;

/// The first image builder that answers (`docker info` fails without its daemon).
fn builder() -> Option<&'static str> {
    ["docker", "podman"].into_iter().find(|b| {
        Command::new(b)
            .arg("info")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

#[test]
#[ignore = "needs a docker daemon or podman"]
fn image_builds_and_runs_the_cli() {
    let builder = builder().expect("a docker daemon or podman that answers");
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
