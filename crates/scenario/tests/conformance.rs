//! Runs every scenario case under `tests/conformance/` through the engine.

use std::path::{Path, PathBuf};
use topospread_scenario::{Outcome, run_file};

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for e in entries {
        if e.is_dir() {
            yaml_files(&e, out);
        } else if e.extension().is_some_and(|x| x == "yaml") {
            out.push(e);
        }
    }
}

#[test]
fn conformance_cases_pass() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance");
    let mut files = Vec::new();
    yaml_files(&root, &mut files);
    assert!(!files.is_empty(), "no case files under {}", root.display());
    let (mut passed, mut failures) = (0, Vec::new());
    for f in &files {
        let text = std::fs::read_to_string(f).expect("case file is readable");
        let reports = run_file(&text, &f.display().to_string()).unwrap_or_else(|e| panic!("{e}"));
        for r in reports {
            match r.outcome {
                Outcome::Passed => passed += 1,
                Outcome::Skipped(_) => {}
                Outcome::Failed(ms) => {
                    for m in ms {
                        failures.push(format!(
                            "{}: {}: {}: want {}, got {}",
                            f.display(),
                            r.name,
                            m.expectation,
                            m.want,
                            m.got
                        ));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing expectations:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(passed >= 190, "only {passed} cases ran");
}
