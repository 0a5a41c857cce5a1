//! Every `topospread` example the README shows is run here, from the repository root,
//! and where the README shows its output, the output must be what the README says.
//!
//! An example is a command in a fenced block: a `$ ...` line, or a bare line, that runs
//! `topospread` (also as `cargo run -p topospread-cli ... -- ARGS` or
//! `./target/release/topospread ARGS`). A bare line with `[`, `FILE` or a line
//! continuation is a synopsis, not an example. Each example is
//! - checked: the lines below its `$` line up to the next `$` line or the block's end
//!   are its output, compared after this normalisation: trailing spaces and trailing
//!   blank lines dropped, and a `...` line standing for any run of lines (the README
//!   elides what does not matter there; nothing else is loose, no timing or path in
//!   a checked output is left to chance);
//! - run: no output shown; it must exit 0 or 1, and a `> FILE.html` redirection must
//!   write an HTML page (the test reads stdout instead of writing the file);
//! - skipped: [`NOT_RUN`], each with why and where it is tested instead. A new README
//!   example must run or join that list.
//!
//! The README's other commands run elsewhere: `cargo test --workspace` is `.ci/run`;
//! `kubectl apply -k deploy/` is the fake API server's kustomize test; the fuzz, build
//! and `cargo bench` commands are the README's instructions for those tools.

use std::path::Path;
use std::process::Command;

/// README examples that cannot run here, with why and where they are covered.
const NOT_RUN: &[(&str, &str)] = &[
    (
        "topospread ui -f FILE...",
        "a web app serving until Ctrl-C, for a browser, on the reader's files: cli/ui.rs \
         starts it on --port 0, reads this line from stderr and fetches the page",
    ),
    (
        "topospread simulate --kubeconfig ~/.kube/config --context prod -f web-deployment.yaml",
        "a live cluster and a file of the reader's: cli/live.rs runs simulate with \
         --kubeconfig and -f against the fake API server",
    ),
    (
        "topospread show --live",
        "a live cluster: cli/live.rs show_reads_the_cluster_without_files",
    ),
    (
        "topospread validate --live",
        "a live cluster: cli/live.rs validate_reads_the_cluster_without_files",
    ),
    (
        "./target/release/topospread bench topology-spreading --runs 5",
        "a benchmark of minutes on a release build: cli.rs \
         bench_json_reports_the_measured_figures runs the 500-node workload",
    ),
    (
        "./target/release/topospread bench topology-spreading --runs 3 --percentage 100",
        "a benchmark of minutes on a release build (as above)",
    ),
];

/// A command of the README and the output it shows after it (empty: none shown).
#[derive(Debug)]
struct Example {
    line: usize,
    command: String,
    output: Vec<String>,
}

/// The program prefixes an example runs `topospread` with; the arguments follow.
fn arguments(command: &str) -> Option<&str> {
    if let Some(rest) = command.strip_prefix("topospread ") {
        return Some(rest);
    }
    if let Some(rest) = command.strip_prefix("./target/release/topospread ") {
        return Some(rest);
    }
    let rest = command.strip_prefix("cargo run -p topospread-cli")?;
    rest.split_once(" -- ").map(|(_, args)| args)
}

/// The `topospread` examples in the README's fenced blocks: `$` lines with the lines up
/// to the next `$` line or the block's end as their output, and bare lines; synopses
/// (a bare line with `[`, `FILE` or a line continuation) are not examples.
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
        let synopsis =
            command.contains('[') || command.contains("FILE") || command.trim_end().ends_with('\\');
        let is_example = arguments(command).is_some() && (prompt || !synopsis);
        if prompt || is_example {
            out.extend(open.take());
        }
        if is_example {
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

/// How an example fared.
#[derive(Debug, Default)]
struct Tally {
    checked: Vec<usize>,
    run: Vec<usize>,
    skipped: Vec<&'static str>,
}

#[test]
fn every_readme_example_runs_and_shows_what_the_readme_says() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let examples = examples(&readme);
    let mut tally = Tally::default();
    for e in &examples {
        if let Some((c, _)) = NOT_RUN.iter().find(|(c, _)| *c == e.command) {
            tally.skipped.push(*c);
            continue;
        }
        let (command, redirect) = match e.command.split_once(" > ") {
            Some((c, file)) => (c, Some(file.trim())),
            None => (e.command.as_str(), None),
        };
        let args: Vec<&str> = arguments(command)
            .unwrap_or_default()
            .split_whitespace()
            .collect();
        assert!(
            args.iter().all(|a| !a.contains("FILE")),
            "README.md:{}: `{}` names a placeholder: run it on repository files or list it in NOT_RUN",
            e.line,
            e.command
        );
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
        if redirect.is_some_and(|f| f.ends_with(".html")) {
            assert!(
                stdout.starts_with("<!DOCTYPE html>") && stdout.trim_end().ends_with("</html>"),
                "README.md:{}: `{}` writes no HTML page: {}",
                e.line,
                e.command,
                &stdout[..stdout.len().min(200)]
            );
        }
        if e.output.is_empty() {
            tally.run.push(e.line);
            continue;
        }
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
        tally.checked.push(e.line);
    }
    eprintln!(
        "README examples: {} ({} checked against the output shown, {} run with no output shown, {} skipped: {:?})",
        examples.len(),
        tally.checked.len(),
        tally.run.len(),
        tally.skipped.len(),
        tally.skipped
    );
    let listed: Vec<&str> = NOT_RUN.iter().map(|(c, _)| *c).collect();
    assert_eq!(
        tally.skipped, listed,
        "every example listed as not run is still in the README, in README order"
    );
    assert!(tally.checked.len() >= 9, "{tally:?}");
}

#[test]
fn examples_are_commands_in_blocks_and_synopses_are_not() {
    let readme = "text `topospread simulate -f x.yaml` in prose\n\
```sh\n\
cargo run -p topospread-cli --no-default-features -- simulate\n\
topospread guard -f FILE... [--config FILE]\n\
kubectl get nodes\n\
```\n\
```console\n\
$ topospread ui -f FILE...\n\
topospread ui: http://127.0.0.1:10270/\n\
$ topospread show --live   # a comment\n\
```\n";
    let found = examples(readme);
    let commands: Vec<&str> = found.iter().map(|e| e.command.as_str()).collect();
    assert_eq!(
        commands,
        [
            "cargo run -p topospread-cli --no-default-features -- simulate",
            "topospread ui -f FILE...",
            "topospread show --live"
        ]
    );
    assert_eq!(found[1].output, ["topospread ui: http://127.0.0.1:10270/"]);
    assert!(found[2].output.is_empty());
    assert_eq!(arguments(&found[0].command), Some("simulate"));
    assert_eq!(
        arguments("./target/release/topospread bench x"),
        Some("bench x")
    );
    assert_eq!(arguments("cargo bench -p topospread"), None);
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
