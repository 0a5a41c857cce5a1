//! Every `topospread` command the README shows is run here, from the repository root,
//! and where the README shows its output, the output must be what the README says
//! (a `...` line stands for any lines). Commands that need a cluster or a file of the
//! reader's own are listed below with where they are tested instead; a new README
//! command must either run or join that list.
//!
//! The README's other commands run elsewhere: `cargo test --workspace` and the offline
//! `cargo run ... -- simulate` are `.ci/run`'s; `kubectl apply -k deploy/` is the
//! fake API server's kustomize test; the fuzz, bench and install commands are the
//! README's instructions for those tools.

use std::path::Path;
use std::process::Command;

/// README commands that cannot run here, with where they are covered.
const NOT_RUN: &[(&str, &str)] = &[
    (
        "topospread simulate --kubeconfig ~/.kube/config --context prod -f web-deployment.yaml",
        "a cluster and a file of the reader's: cli/live.rs runs simulate with --kubeconfig and -f against the fake API server",
    ),
    (
        "topospread show --live",
        "a cluster: cli/live.rs show_reads_the_cluster_without_files",
    ),
    (
        "topospread validate --live",
        "a cluster: cli/live.rs validate_reads_the_cluster_without_files",
    ),
];

/// A command of the README and the output it shows after it (empty: none shown).
#[derive(Debug)]
struct Example {
    line: usize,
    command: String,
    output: Vec<String>,
}

/// The `topospread` commands in the README's fenced blocks: `$ topospread ...` lines with
/// the lines up to the next `$` line or the block's end as their output, and bare
/// `topospread ...` lines; synopses (with `[`, `FILE` or a line continuation) are not
/// commands, and a `> FILE` redirection is left to the test, which reads stdout.
fn examples(readme: &str) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut in_block = false;
    let mut open: Option<Example> = None;
    // Below a `$` line, a block holds output: a line there is never a bare command.
    let mut after_prompt = false;
    for (i, raw) in readme.lines().enumerate() {
        if raw.starts_with("```") {
            in_block = !in_block;
            after_prompt = false;
            out.extend(open.take());
            continue;
        }
        if !in_block {
            continue;
        }
        let (command, prompt) = match raw.strip_prefix("$ ") {
            Some(c) => (c, true),
            None => (raw, false),
        };
        if !prompt && after_prompt {
            if let Some(e) = open.as_mut() {
                e.output.push(raw.trim_end().to_string());
            }
            continue;
        }
        after_prompt |= prompt;
        let is_command = command.starts_with("topospread ")
            && !command.contains('[')
            && !command.contains("FILE")
            && !command.trim_end().ends_with('\\');
        if prompt || is_command {
            out.extend(open.take());
        }
        if is_command {
            let command = command.split(" #").next().unwrap_or(command).trim_end();
            open = Some(Example {
                line: i + 1,
                command: command.to_string(),
                output: Vec::new(),
            });
        }
    }
    out.extend(open);
    out
}

/// Whether `actual` holds the shown lines in order, each `...` line standing for any run
/// of lines (none included); without a `...` the whole output must match.
fn matches(shown: &[String], actual: &[&str]) -> bool {
    let mut shown: Vec<&str> = shown.iter().map(String::as_str).collect();
    while shown.last().is_some_and(|l| l.is_empty()) {
        shown.pop();
    }
    let segments: Vec<&[&str]> = shown.split(|l| *l == "...").collect();
    let (first, rest) = match segments.split_first() {
        Some((first, rest)) if !rest.is_empty() => (*first, rest),
        _ => return shown == actual,
    };
    let Some((last, middle)) = rest.split_last() else {
        return false;
    };
    if !actual.starts_with(first)
        || actual.len() < first.len() + last.len()
        || !actual.ends_with(last)
    {
        return false;
    }
    let end = actual.len() - last.len();
    let mut at = first.len();
    for segment in middle {
        let Some(start) = (at..=end.saturating_sub(segment.len()))
            .find(|&s| s + segment.len() <= end && actual[s..s + segment.len()] == **segment)
        else {
            return false;
        };
        at = start + segment.len();
    }
    true
}

#[test]
fn every_readme_command_runs_and_shows_what_the_readme_says() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let examples = examples(&readme);
    assert!(examples.len() >= 8, "{examples:#?}");
    let mut skipped = Vec::new();
    for e in &examples {
        if let Some((c, _)) = NOT_RUN.iter().find(|(c, _)| *c == e.command) {
            skipped.push(*c);
            continue;
        }
        // `> FILE`: the test reads stdout itself.
        let command = e.command.split(" > ").next().unwrap_or(&e.command);
        let args: Vec<&str> = command.split_whitespace().skip(1).collect();
        let out = Command::new(env!("CARGO_BIN_EXE_topospread"))
            .args(&args)
            .current_dir(&root)
            .env_remove("COLUMNS")
            .output()
            .unwrap();
        let code = out.status.code();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            matches!(code, Some(0 | 1)),
            "README.md:{}: `{}` exited {code:?}: {}",
            e.line,
            e.command,
            String::from_utf8_lossy(&out.stderr)
        );
        if !e.output.is_empty() {
            let mut actual: Vec<&str> = stdout.lines().map(str::trim_end).collect();
            while actual.last().is_some_and(|l| l.is_empty()) {
                actual.pop();
            }
            assert!(
                matches(&e.output, &actual),
                "README.md:{}: `{}` prints\n{stdout}\nnot what the README shows:\n{}",
                e.line,
                e.command,
                e.output.join("\n")
            );
        }
    }
    let listed: Vec<&str> = NOT_RUN.iter().map(|(c, _)| *c).collect();
    assert_eq!(
        skipped, listed,
        "every command listed as not run is still in the README"
    );
}

#[test]
fn an_ellipsis_stands_for_any_lines_and_nothing_else_is_loose() {
    let shown = |s: &[&str]| s.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    assert!(matches(&shown(&["a", "b"]), &["a", "b"]));
    assert!(!matches(&shown(&["a", "b"]), &["a", "b", "c"]));
    assert!(!matches(&shown(&["b"]), &["a", "b"]));
    assert!(matches(&shown(&["...", "c"]), &["a", "b", "c"]));
    assert!(matches(&shown(&["a", "...", "c"]), &["a", "c"]));
    assert!(!matches(&shown(&["a", "...", "c"]), &["a", "c", "d"]));
    assert!(matches(&shown(&["a", "..."]), &["a", "b"]));
}
