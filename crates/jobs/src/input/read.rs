//! `-f` paths into inputs (files, folders as kubectl walks them, `-` for stdin), each
//! read through a byte cap whatever its metadata says: a FIFO, `/dev/zero` or a process
//! substitution stops at the cap instead of filling memory.

use crate::error::{Error, Result};
use std::collections::HashSet;
use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use topospread_k8s::load::LoadError;

/// One input: a file (or anything `open` reads: a FIFO, a device) or stdin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputPath {
    /// `-f -`.
    Stdin,
    /// A path.
    File(PathBuf),
}

impl fmt::Display for InputPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputPath::Stdin => f.write_str("<stdin>"),
            InputPath::File(p) => write!(f, "{}", p.display()),
        }
    }
}

/// The extensions kubectl reads from a folder.
const FOLDER_EXTENSIONS: &[&str] = &["yaml", "yml", "json"];

/// Resolves `-f` arguments as kubectl does: `-` is stdin, a file is read whatever its
/// name, a folder gives its `.yaml`, `.yml` and `.json` files (sorted; with `recursive`,
/// those of its subfolders too, never entering a folder twice through symlinks). A
/// kustomize folder or a Helm chart is refused: it holds the source of manifests.
pub fn resolve(args: &[PathBuf], recursive: bool) -> Result<Vec<InputPath>> {
    let (paths, problems) = resolve_each(args, recursive);
    match problems.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(paths),
    }
}

/// [`resolve`], going on past each argument or folder it cannot take: the inputs
/// found, and every problem (for `validate`, which reports them all).
pub(crate) fn resolve_each(args: &[PathBuf], recursive: bool) -> (Vec<InputPath>, Vec<Error>) {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    let mut visited = HashSet::new();
    for arg in args {
        if arg.as_os_str() == "-" {
            out.push(InputPath::Stdin);
            continue;
        }
        let meta = match std::fs::metadata(arg) {
            Ok(meta) => meta,
            Err(source) => {
                problems.push(Error::Io {
                    context: format!("{}: cannot read", arg.display()),
                    source,
                });
                continue;
            }
        };
        if !meta.is_dir() {
            out.push(InputPath::File(arg.clone()));
            continue;
        }
        let before = (out.len(), problems.len());
        walk(arg, recursive, &mut visited, &mut out, &mut problems);
        if (out.len(), problems.len()) == before {
            problems.push(Error::Refused(format!(
                "{}: nothing was read from the folder: no .yaml, .yml or .json files in it{}",
                arg.display(),
                if recursive {
                    " or below"
                } else {
                    " (-R reads its subfolders)"
                }
            )));
        }
    }
    (out, problems)
}

/// The files that make a folder kustomize's (`kubectl kustomize` reads the first).
const KUSTOMIZATION_FILES: &[&str] = &["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// Why `dir` holds the source of manifests rather than manifests: a kustomization, or a
/// Helm chart (`Chart.yaml` in it, or in its parent when it is the chart's `templates`).
fn unrendered_folder(dir: &Path) -> Option<LoadError> {
    let shown = dir.display().to_string();
    if let Some(k) = KUSTOMIZATION_FILES.iter().find(|k| dir.join(k).is_file()) {
        return Some(LoadError::Unrendered {
            what: format!("a kustomize folder ({k}), whose manifests kubectl kustomize renders"),
            render: format!("kubectl kustomize {shown}"),
            file: shown,
        });
    }
    let chart = if dir.join("Chart.yaml").is_file() {
        Some(dir)
    } else {
        dir.parent()
            .filter(|p| dir.ends_with("templates") && p.join("Chart.yaml").is_file())
    }?;
    Some(LoadError::Unrendered {
        what: "a Helm chart (Chart.yaml), whose templates helm renders into manifests".to_string(),
        render: format!("helm template {}", chart.display()),
        file: shown,
    })
}

/// The chart a Helm template at `file` belongs to (the nearest folder above it with a
/// `Chart.yaml`), for the advice to render it; `CHART` when there is none.
pub(crate) fn chart_of(file: &str) -> String {
    Path::new(file)
        .ancestors()
        .skip(1)
        .find(|p| !p.as_os_str().is_empty() && p.join("Chart.yaml").is_file())
        .map_or_else(|| "CHART".to_string(), |p| p.display().to_string())
}

fn walk(
    dir: &Path,
    recursive: bool,
    visited: &mut HashSet<PathBuf>,
    out: &mut Vec<InputPath>,
    problems: &mut Vec<Error>,
) {
    let real = match std::fs::canonicalize(dir) {
        Ok(real) => real,
        Err(source) => {
            problems.push(Error::Io {
                context: format!("{}: cannot read", dir.display()),
                source,
            });
            return;
        }
    };
    if !visited.insert(real) {
        return;
    }
    if let Some(e) = unrendered_folder(dir) {
        problems.push(Error::Load(e));
        return;
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(source) => {
            problems.push(Error::Io {
                context: format!("{}: cannot read the folder", dir.display()),
                source,
            });
            return;
        }
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        // Follows symlinks, as kubectl does; `visited` stops loops.
        let Ok(meta) = std::fs::metadata(&path) else {
            continue; // a dangling symlink
        };
        if meta.is_dir() {
            if recursive {
                walk(&path, recursive, visited, out, problems);
            }
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| FOLDER_EXTENSIONS.contains(&e))
        {
            out.push(InputPath::File(path));
        }
    }
}

/// Reads one input as UTF-8 text, at most `cap` bytes.
pub fn read_path(input: &InputPath, cap: u64) -> Result<String> {
    match input {
        InputPath::Stdin => read_capped(std::io::stdin().lock(), input, cap, 0),
        InputPath::File(path) => {
            let (file, hint) = open_file(input, path, cap)?;
            read_capped(file, input, cap, hint)
        }
    }
}

/// Opens a file with its size when it is a regular file (0 otherwise). A regular file's
/// size is known: it is refused before reading. Anything else (FIFO, device, /proc)
/// reports 0 and is stopped by the cap while reading.
fn open_file(input: &InputPath, path: &Path, cap: u64) -> Result<(std::fs::File, u64)> {
    let file = std::fs::File::open(path).map_err(|source| Error::Io {
        context: format!("{}: cannot read", path.display()),
        source,
    })?;
    let meta = file.metadata().map_err(|source| Error::Io {
        context: format!("{}: cannot read", path.display()),
        source,
    })?;
    let size = if meta.is_file() { meta.len() } else { 0 };
    if size > cap {
        return Err(Error::Refused(too_large(input, cap)));
    }
    Ok((file, size))
}

/// Opens one input for reading as a stream, at most `cap` bytes: past the cap, reads
/// fail with the message [`read_path`] gives (the loader names the input).
pub fn open_path(input: &InputPath, cap: u64) -> Result<Box<dyn BufRead>> {
    Ok(open_watched(input, cap)?.0)
}

/// Whether the text read so far holds `{{`, a Go template's action: set as the input is
/// read, so that an input that fails to parse can be told to be a Helm template.
#[derive(Clone, Debug, Default)]
pub(crate) struct TemplateMarks(Arc<AtomicBool>);

impl TemplateMarks {
    /// Whether `{{` came through.
    pub(crate) fn seen(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// [`open_path`], with the marks of a template seen in what is read.
pub(crate) fn open_watched(
    input: &InputPath,
    cap: u64,
) -> Result<(Box<dyn BufRead>, TemplateMarks)> {
    let reader: Box<dyn Read> = match input {
        InputPath::Stdin => Box::new(std::io::stdin()),
        InputPath::File(path) => Box::new(open_file(input, path, cap)?.0),
    };
    let marks = TemplateMarks::default();
    let reader = Capped {
        inner: reader,
        left: cap,
        cap,
        marks: marks.clone(),
        brace: false,
    };
    Ok((
        Box::new(BufReader::with_capacity(256 * 1024, reader)),
        marks,
    ))
}

/// A reader that fails once more than `cap` bytes have come through it, and notes `{{`.
struct Capped {
    inner: Box<dyn Read>,
    left: u64,
    cap: u64,
    marks: TemplateMarks,
    /// Whether the last byte read was `{`.
    brace: bool,
}

impl Read for Capped {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        // One byte past the cap is asked for, to tell "exactly the cap" from "more".
        let room = usize::try_from(self.left.saturating_add(1)).unwrap_or(usize::MAX);
        let want = buf.len().min(room);
        let n = self.inner.read(&mut buf[..want])?;
        if n as u64 > self.left {
            return Err(std::io::Error::other(format!(
                "input larger than {}; --max-input-bytes raises the limit",
                human(self.cap)
            )));
        }
        self.left -= n as u64;
        let read = &buf[..n];
        if n > 0 && !self.marks.seen() {
            let found =
                (self.brace && read[0] == b'{') || memchr::memmem::find(read, b"{{").is_some();
            if found {
                self.marks.0.store(true, Ordering::Relaxed);
            }
            self.brace = read[n - 1] == b'{';
        }
        Ok(n)
    }
}

/// The one-line message for an input past the cap.
fn too_large(input: &InputPath, cap: u64) -> String {
    format!(
        "{input}: input larger than {}; --max-input-bytes raises the limit",
        human(cap)
    )
}

/// `256 MiB (268435456 bytes)`, or `N bytes` when not a whole number of MiB.
fn human(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB ({bytes} bytes)", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// The size of each read buffer after the first, when the size is not known.
const CHUNK: usize = 8 * 1024 * 1024;

/// Reads `reader` to its end, failing past `cap` bytes. Data is kept in chunks (no
/// buffer doubling, so the memory held never exceeds the cap by more than one chunk)
/// and allocation failures are errors, not aborts.
fn read_capped(mut reader: impl Read, input: &InputPath, cap: u64, hint: u64) -> Result<String> {
    let cap_usize = usize::try_from(cap).unwrap_or(usize::MAX);
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    let mut total = 0usize;
    // A regular file fits its first buffer exactly (plus one byte to see the end).
    let mut next = usize::try_from(hint)
        .ok()
        .filter(|h| *h > 0)
        .map_or(64 * 1024, |h| h.saturating_add(1));
    loop {
        let room = cap_usize.saturating_add(1).saturating_sub(total);
        let size = next.min(room).max(1);
        let mut chunk = Vec::new();
        chunk.try_reserve_exact(size).map_err(|_| Error::Read {
            input: input.to_string(),
            reason: format!("cannot allocate {size} bytes to read it"),
        })?;
        // Into the reserved capacity, without zero-filling it first; `take` stops the
        // read at the chunk's end, so the vector never grows past its reservation.
        (&mut reader)
            .take(size as u64)
            .read_to_end(&mut chunk)
            .map_err(|source| Error::Io {
                context: format!("{input}: cannot read"),
                source,
            })?;
        let filled = chunk.len();
        total += filled;
        if total > cap_usize {
            return Err(Error::Refused(too_large(input, cap)));
        }
        let done = filled < size;
        chunks.push(chunk);
        if done {
            break;
        }
        next = CHUNK;
    }
    let bytes = if chunks.len() == 1 {
        chunks.pop().unwrap_or_default()
    } else {
        let mut all = Vec::new();
        all.try_reserve_exact(total).map_err(|_| Error::Read {
            input: input.to_string(),
            reason: format!("cannot allocate {total} bytes to read it"),
        })?;
        for c in chunks {
            all.extend_from_slice(&c);
        }
        all
    };
    String::from_utf8(bytes).map_err(|e| Error::Read {
        input: input.to_string(),
        reason: format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_holds_whatever_the_size_hint() {
        let input = InputPath::Stdin;
        let text = read_capped(&b"kind: Pod\n"[..], &input, 10, 0).expect("at the cap");
        assert_eq!(text, "kind: Pod\n");
        let e = read_capped(&b"kind: Pod\n!"[..], &input, 10, 0).expect_err("past the cap");
        assert_eq!(
            e.to_string(),
            "<stdin>: input larger than 10 bytes; --max-input-bytes raises the limit"
        );
        // An endless reader stops at the cap.
        let e =
            read_capped(std::io::repeat(b'a'), &input, 3 * 1024 * 1024, 0).expect_err("endless");
        assert!(e.to_string().contains("larger than 3 MiB"), "{e}");
        // More than one chunk, reassembled in order.
        let big: Vec<u8> = (0..(CHUNK + 100)).map(|i| b'a' + (i % 26) as u8).collect();
        let text = read_capped(&big[..], &input, u64::MAX, 10).expect("reads");
        assert_eq!(text.as_bytes(), &big[..]);
        let e = read_capped(&[0xff, 0xfe][..], &input, 10, 0).expect_err("not UTF-8");
        assert!(e.to_string().contains("not UTF-8"), "{e}");
    }
}
