//! The conformance set at the oldest supported release: a case that does not name its
//! release (`features.kubernetesVersion`) must hold at every release, so expectations that
//! changed over releases are pinned and `topospread test --kubernetes-version` stays green.

use std::path::Path;
use topospread::features::Features;
use topospread::version::{FeatureGates, KubernetesVersion};
use topospread_scenario::{Outcome, run_file_with};

/// Every case file under `dir`, sorted.
fn case_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read a conformance directory") {
            let path = entry.expect("list a conformance directory").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "yaml") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The scheduler features `--kubernetes-version release` gives.
fn at(release: &str) -> Features {
    let version = KubernetesVersion::parse_any(release).expect("a supported release");
    FeatureGates::new(version).scheduler_features()
}

#[test]
fn cases_that_do_not_name_their_release_hold_at_the_oldest() {
    let base = at("1.25");
    assert_ne!(base, Features::default(), "1.25 differs from the newest release");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance");
    let files = case_files(&root);
    assert!(!files.is_empty(), "no case files under {}", root.display());
    let (mut passed, mut failures) = (0, Vec::new());
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read a case file");
        let reports = run_file_with(&text, &f.display().to_string(), &base)
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        for r in reports {
            match r.outcome {
                Outcome::Passed => passed += 1,
                Outcome::Failed(ms) => failures.extend(ms.into_iter().map(|m| {
                    format!(
                        "{}: {}: {}: want {}, got {}",
                        f.display(),
                        r.name,
                        m.expectation,
                        m.want,
                        m.got
                    )
                })),
            }
        }
    }
    eprintln!("at 1.25: {passed} passed, {} failing expectations", failures.len());
    assert!(passed > 300, "only {passed} cases ran");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
