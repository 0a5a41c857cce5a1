//! `topospread test`: run scenario files and report failing expectations.

use crate::cli::TestArgs;
use anyhow::{Context as _, Result};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use topospread_jobs::Context;
use topospread_jobs::input::{InputPath, read_path};
use topospread_scenario::{self as scenario, Outcome};

/// Collects *.yaml / *.yml files under `path`, sorted for a stable order. A folder
/// reached twice (a symlink to a folder already walked, or a loop) is walked once.
fn collect(path: &Path, visited: &mut HashSet<PathBuf>, out: &mut Vec<PathBuf>) -> Result<()> {
    let meta =
        std::fs::metadata(path).with_context(|| format!("{}: cannot read", path.display()))?;
    if meta.is_dir() {
        let real = std::fs::canonicalize(path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        if !visited.insert(real) {
            return Ok(());
        }
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .with_context(|| format!("{}: cannot list", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for e in entries {
            if e.is_dir() || e.extension().is_some_and(|x| x == "yaml" || x == "yml") {
                collect(&e, visited, out)?;
            }
        }
    } else {
        out.push(path.to_path_buf());
    }
    Ok(())
}

pub(crate) fn run(ctx: &Context, args: &TestArgs) -> Result<ExitCode> {
    let mut files = Vec::new();
    let mut visited = HashSet::new();
    for p in &args.paths {
        collect(p, &mut visited, &mut files)?;
    }
    // Every file is read and parsed before anything is reported, so a broken file
    // stops the run with exit 2 and no partial verdict.
    let base = ctx.scheduler_features();
    let mut results = Vec::with_capacity(files.len());
    for f in &files {
        let text = read_path(&InputPath::File(f.clone()), ctx.input().max_input_bytes)?;
        let name = f.display().to_string();
        let reports = scenario::run_file_with(&text, &name, &base)?;
        results.push((name, reports));
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let (mut passed, mut failed) = (0usize, 0usize);
    for (file, reports) in &results {
        for r in reports {
            match &r.outcome {
                Outcome::Passed => {
                    passed += 1;
                    if args.verbose {
                        writeln!(out, "ok   {file}: {}", r.name)?;
                    }
                }
                Outcome::Failed(ms) => {
                    failed += 1;
                    for m in ms {
                        writeln!(
                            out,
                            "FAIL {file}: {}: {}: want {}, got {}",
                            r.name, m.expectation, m.want, m.got
                        )?;
                    }
                }
            }
        }
    }
    writeln!(out, "{passed} passed, {failed} failed")?;
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
