//! `topospread test`: exit codes and the lines users read (a module of the one
//! integration-test binary, `tests/cli.rs`).

use std::path::Path;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/test");
    Command::new(env!("CARGO_BIN_EXE_topospread"))
        .arg("test")
        .args(args)
        .current_dir(fixtures)
        .output()
        .expect("the binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn passing_cases_exit_0_with_the_summary_last() {
    let out = run(&["pass.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "1 passed, 0 failed\n");
}

#[test]
fn a_failing_expectation_exits_1_and_names_file_case_expectation_want_and_got() {
    let out = run(&["pass.yaml", "fail.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(
            "FAIL fail.yaml: zone constraint allows only zone B: filter[node1]: want Success, got Unschedulable: node(s) didn't match pod topology spread constraints"
        ),
        "{stdout}"
    );
    assert!(stdout.ends_with("1 passed, 1 failed\n"), "{stdout}");
}

#[test]
fn json_names_every_case_and_each_failed_expectation() {
    let out = run(&["pass.yaml", "fail.yaml", "-o", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(v["apiVersion"], "topospread.dev/v1alpha1");
    assert_eq!(v["kind"], "TestReport");
    assert_eq!(
        (v["passed"].as_u64(), v["failed"].as_u64()),
        (Some(1), Some(1))
    );
    let failed = &v["cases"][1];
    assert_eq!(failed["file"], "fail.yaml");
    assert_eq!(failed["passed"], false);
    assert_eq!(failed["failures"][0]["expectation"], "filter[node1]");
    assert_eq!(failed["failures"][0]["want"], "Success");
}

#[test]
fn unreadable_files_exit_2_naming_file_case_and_field() {
    for (file, needle) in [
        ("malformed.yaml", "malformed.yaml: invalid YAML"),
        ("dangling.yaml", "pods[0]"),
        (
            "typo.yaml",
            "spec.topologySpreadConstraints[0].labelSelectr: unknown field",
        ),
        ("missing.yaml", "missing.yaml: cannot read"),
    ] {
        let out = run(&["pass.yaml", file]);
        assert_eq!(out.status.code(), Some(2), "{file}");
        let stderr = text(&out.stderr);
        assert!(stderr.contains(needle), "{file}: {stderr}");
        assert!(!stderr.contains("panicked"), "{file}: {stderr}");
        assert!(
            out.stdout.is_empty(),
            "{file}: no partial verdict on stdout"
        );
    }
}

#[test]
fn expectations_about_what_the_case_lacks_exit_2_naming_them() {
    for (file, needle) in [
        (
            "unknown-node.yaml",
            "unknown-node.yaml: case \"typo in a node name\": expect.placements.p1[1]: Not found: no node \"nodee2\" in the case",
        ),
        (
            "unknown-key.yaml",
            "spread[0].topologyKey: Not found: no node carries \"zon\"",
        ),
        (
            "unknown-domain.yaml",
            "spread[0].counts.zoneC: Not found: no node has zone=zoneC",
        ),
        (
            "duplicate-names.yaml",
            "duplicate-names.yaml: case \"same\": cases[1].name: Duplicate value: \"same\"",
        ),
        (
            "top-level-key.yaml",
            "top-level-key.yaml: case \"-\": case_defaults: unknown field",
        ),
    ] {
        let out = run(&[file]);
        assert_eq!(out.status.code(), Some(2), "{file}: {}", text(&out.stdout));
        let stderr = text(&out.stderr);
        assert!(stderr.contains(needle), "{file}: {stderr}");
        assert!(out.stdout.is_empty(), "{file}");
    }
}

#[test]
fn a_folder_linked_into_itself_is_walked_once() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("test-walk-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sub")).expect("dir");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/test");
    std::fs::copy(fixtures.join("pass.yaml"), dir.join("sub/pass.yaml")).expect("copy");
    std::os::unix::fs::symlink(&dir, dir.join("sub/up")).expect("symlink");
    let out = run(&[&dir.display().to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "1 passed, 0 failed\n");
}
