//! Runs every scenario case under `tests/conformance/` through the engine. Every file
//! must hold at least one case and every case must pass, at the newest release and at the
//! oldest; the counts are printed.

use std::path::{Path, PathBuf};
use topospread::Features;
use topospread::version::{FeatureGates, KubernetesVersion};
use topospread_scenario::{Outcome, run_file_with};

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<Vec<PathBuf>>>()?;
    entries.sort();
    for e in entries {
        if e.is_dir() {
            yaml_files(&e, out)?;
        } else if e.extension().is_some_and(|x| x == "yaml") {
            out.push(e);
        }
    }
    Ok(())
}

/// `path` with the I/O error that stopped reading it.
fn at(path: &Path) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| format!("{}: {e}", path.display())
}

/// Runs every case file under `tests/conformance/` with `base` as the run's release and
/// gates; the number of cases that passed, and each failing expectation.
fn run_all(base: &Features) -> Result<(usize, Vec<String>), String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance");
    let mut files = Vec::new();
    yaml_files(&root, &mut files).map_err(at(&root))?;
    assert!(!files.is_empty(), "no case files under {}", root.display());
    let (mut passed, mut failures) = (0, Vec::new());
    for f in &files {
        let text = std::fs::read_to_string(f).map_err(at(f))?;
        let reports =
            run_file_with(&text, &f.display().to_string(), base).map_err(|e| e.to_string())?;
        assert!(!reports.is_empty(), "{}: holds no case", f.display());
        for r in reports {
            match r.outcome {
                Outcome::Passed => passed += 1,
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
    Ok((passed, failures))
}

#[test]
fn conformance_cases_pass() -> Result<(), String> {
    let (passed, failures) = run_all(&Features::default())?;
    eprintln!("{passed} passed, {} failing expectations", failures.len());
    assert!(
        failures.is_empty(),
        "{} failing expectations:\n{}",
        failures.len(),
        failures.join("\n")
    );
    Ok(())
}

/// A case that does not name its release (`features.kubernetesVersion`) must hold at every
/// release: run at the oldest, the set stays green under `topospread test
/// --kubernetes-version`, so expectations that changed over releases are pinned.
#[test]
fn cases_that_do_not_name_their_release_hold_at_the_oldest() -> Result<(), String> {
    let oldest = KubernetesVersion::parse_any("1.25").map_err(|e| e.to_string())?;
    let base = FeatureGates::new(oldest).scheduler_features();
    assert_ne!(
        base,
        Features::default(),
        "1.25 differs from the newest release"
    );
    let (passed, failures) = run_all(&base)?;
    eprintln!(
        "at 1.25: {passed} passed, {} failing expectations",
        failures.len()
    );
    assert!(passed > 300, "only {passed} cases ran");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}
