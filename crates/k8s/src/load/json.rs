//! JSON input read by serde_json directly (not through the YAML parser): one object, an
//! array of objects, or a stream of concatenated objects as `kubectl cluster-info dump`
//! prints them, with the container logs it interleaves (`==== START logs for ...` to
//! `==== END logs for ... ====`) passed over.

use super::LoadError;
use super::position::Origin;
use serde_json::Value;

/// What `kubectl cluster-info dump` prints before a container's log.
const LOG_START: &str = "==== START logs for";
/// What it prints after one.
const LOG_END: &str = "==== END logs for";

/// Whether `text` is JSON rather than YAML: its first non-blank character opens a JSON
/// object or array. (Flow-style YAML starting with `{` parses as JSON too, or fails with
/// a JSON message naming line and column.)
pub(crate) fn looks_like_json(text: &str) -> bool {
    text.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
        .starts_with(['{', '['])
}

/// The JSON values in `text`, in order; a top-level array contributes its elements.
pub(crate) fn documents(text: &str, file: &str) -> Result<Vec<Value>, LoadError> {
    documents_at(text, file, &Origin::file())
}

/// [`documents`] of a piece of the file that starts at `origin`: a syntax error names
/// its place in the file.
pub(crate) fn documents_at(
    text: &str,
    file: &str,
    origin: &Origin,
) -> Result<Vec<Value>, LoadError> {
    let mut out = Vec::new();
    let mut rest = text.trim_start_matches('\u{feff}');
    let mut consumed = text.len() - rest.len();
    loop {
        let trimmed = rest.trim_start();
        consumed += rest.len() - trimmed.len();
        rest = trimmed;
        if rest.is_empty() {
            return Ok(out);
        }
        if rest.starts_with(LOG_START) {
            let skip = log_section_len(rest);
            consumed += skip;
            rest = &rest[skip..];
            continue;
        }
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        match stream.next() {
            Some(Ok(Value::Array(items))) => out.extend(items),
            Some(Ok(value)) => out.push(value),
            Some(Err(e)) => return Err(syntax_error(&e, &text[..consumed], file, origin)),
            None => return Ok(out),
        }
        let used = stream.byte_offset();
        consumed += used;
        rest = &rest[used..];
    }
}

/// serde_json's error in the value that follows `before`, placed in the file: its line
/// and column (relative to where that value's parse started) moved past `before`, then
/// through `origin`.
fn syntax_error(e: &serde_json::Error, before: &str, file: &str, origin: &Origin) -> LoadError {
    let message = e.to_string();
    // serde_json's Display is its error code, then this suffix when it knows a place.
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let what = message.strip_suffix(&suffix).unwrap_or(&message);
    let line = before.matches('\n').count() + e.line();
    let column = if e.line() == 1 {
        let start = before.rfind('\n').map_or(0, |i| i + 1);
        before.len() - start + e.column()
    } else {
        e.column()
    };
    let (line, column) = origin.place(line, column);
    LoadError::Json {
        file: file.to_string(),
        message: format!("{what} at line {line} column {column}"),
    }
}

/// The length of a log section at the start of `text`: through the end of its
/// `==== END logs ... ====` line, or all of `text` if it never ends.
fn log_section_len(text: &str) -> usize {
    let Some(end) = text.find(LOG_END) else {
        return text.len();
    };
    match text[end..].find('\n') {
        Some(nl) => end + nl + 1,
        None => text.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concatenated_objects_arrays_and_logs() {
        let text = "{\"kind\": \"NodeList\", \"items\": []}\n{\"kind\": \"PodList\"}\n==== START logs for container c of pod kube-system/p ====\nI0101 {not json\n==== END logs for container c of pod kube-system/p ====\n[{\"kind\": \"Pod\"}, {\"kind\": \"Node\"}]";
        let docs = documents(text, "dump.json").expect("parses");
        let kinds: Vec<&str> = docs
            .iter()
            .filter_map(|d| d.get("kind").and_then(Value::as_str))
            .collect();
        assert_eq!(kinds, ["NodeList", "PodList", "Pod", "Node"]);
        assert!(looks_like_json("\n  {\"a\": 1}"));
        assert!(!looks_like_json("kind: Pod\n"));
    }

    #[test]
    fn errors_name_the_line_of_the_whole_file() {
        let e = documents("{\"a\": 1}\n\n{\"b\": ]}", "x.json").expect_err("invalid");
        assert_eq!(
            e.to_string(),
            "x.json: invalid JSON: expected value at line 3 column 7"
        );
    }
}
