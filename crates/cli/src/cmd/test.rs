//! `topospread test`: run scenario files and report failing expectations.

use crate::cli::TestArgs;
use anyhow::Result;
use clap::ValueEnum;
use std::io::Write;
use std::process::ExitCode;
use topospread_jobs::Context;
use topospread_jobs::test::{TestReport, TestRequest, run as run_cases};

/// Output formats of `test`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// A line per failed expectation and a count.
    Text,
    /// A TestReport for tools (see crates/jobs/schema/test-report.json).
    Json,
}

pub(crate) fn run(ctx: &Context, args: &TestArgs) -> Result<ExitCode> {
    let report = run_cases(ctx, &TestRequest::new(args.paths.clone()))?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.output {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &report)?;
            writeln!(out)?;
        }
        Format::Text => print_text(&mut out, &report, args.verbose)?,
    }
    out.flush()?;
    Ok(if report.failed() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn print_text(out: &mut impl Write, report: &TestReport, verbose: bool) -> Result<()> {
    for case in &report.cases {
        if case.passed {
            if verbose {
                writeln!(out, "ok   {}: {}", case.file, case.name)?;
            }
            continue;
        }
        for f in &case.failures {
            writeln!(
                out,
                "FAIL {}: {}: {}: want {}, got {}",
                case.file, case.name, f.expectation, f.want, f.got
            )?;
        }
    }
    writeln!(out, "{} passed, {} failed", report.passed, report.failed)?;
    Ok(())
}
