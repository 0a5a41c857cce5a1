//! Runs every validation case in `tests/conformance/validation/*.yaml` (repo root).

use std::path::{Path, PathBuf};

use topospread_scenario::ValidationCaseFile;

fn case_files() -> Result<Vec<PathBuf>, String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance/validation");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("reading {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    Ok(files)
}

#[test]
fn validation_cases() -> Result<(), String> {
    let files = case_files()?;
    assert!(
        files.iter().any(|f| f.ends_with("pod-validation.yaml"))
            && files.iter().any(|f| f.ends_with("args-validation.yaml")),
        "case files missing: {files:?}"
    );
    let mut failures = Vec::new();
    let mut count = 0;
    for file in &files {
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("reading {}: {e}", file.display()))?;
        let cases = ValidationCaseFile::from_yaml(&text, &file.display().to_string())
            .map_err(|e| format!("parsing {}: {e}", file.display()))?;
        let mut names = std::collections::HashSet::new();
        for case in &cases.cases {
            count += 1;
            assert!(
                names.insert(case.name.clone()),
                "{}: duplicate case name {:?}",
                file.display(),
                case.name
            );
            for m in case.run() {
                failures.push(format!(
                    "{} / {}: {}\n  want: {}\n  got:  {}",
                    file.file_name().and_then(|n| n.to_str()).unwrap_or("?"),
                    case.name,
                    m.expectation,
                    m.want.replace('\n', "\n        "),
                    m.got.replace('\n', "\n        "),
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {count} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{count} validation cases passed");
    Ok(())
}
