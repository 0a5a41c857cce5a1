//! Manifests read object by object from a byte stream, never as one document tree: a
//! `kubectl get -o json|yaml` dump is one `List` of tens of thousands of items, so its
//! `items` are cut out one at a time (by bracket depth in JSON, by indentation in YAML)
//! and each is typed on its own, then dropped. What is not a list item (a manifest's
//! documents, a list's own fields) is read whole, as before.
//!
//! Each piece is typed straight from its text (serde_json into the k8s-openapi type,
//! unknown fields detected; YAML converted to JSON first by [`super::yaml_json`], or
//! typed by serde-saphyr where that converter leaves it); only when that fails, or for
//! kinds read untyped, is it read again the thorough way ([`super::parse_document`]: a
//! value tree, numbers read as strings, the field path of the error), so results and
//! error messages are those of the tree reader.

use super::{
    Compactor, LoadError, Loaded, Manifests, Object, Source, builtin, is_list, json, yaml_json,
};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::io::{BufRead, ErrorKind};

/// What `kubectl cluster-info dump` prints before a container's log.
const LOG_START: &[u8] = b"==== START logs for";
/// What it prints after one.
const LOG_END: &[u8] = b"==== END logs for";

/// One piece of input: its text and where it starts in the file (1-based).
struct Piece {
    text: Vec<u8>,
    line: usize,
    column: usize,
    yaml: bool,
}

/// Parses every manifest read from `reader` (YAML or JSON, as [`super::parse_manifests`]),
/// holding one list item at a time. An I/O error (the caller's byte cap included) is
/// [`LoadError::Read`].
pub fn parse_manifests_reader(reader: impl BufRead, file: &str) -> Result<Manifests, LoadError> {
    read_manifests(reader, file, Manifests::default())
}

/// [`parse_manifests_reader`], bound pods converted by `compactor` as they are read
/// ([`Object::CompactPod`]): a dump's pods never all exist as k8s-openapi objects at
/// once. The compactor comes back with the manifests, for the next file and the build.
pub fn parse_manifests_reader_compact(
    reader: impl BufRead,
    file: &str,
    compactor: Compactor,
) -> Result<(Manifests, Compactor), LoadError> {
    let out = Manifests {
        compactor: Some(compactor),
        ..Manifests::default()
    };
    let mut out = read_manifests(reader, file, out)?;
    out.compact_new();
    let compactor = out.compactor.take().unwrap_or_default();
    Ok((out, compactor))
}

fn read_manifests(
    reader: impl BufRead,
    file: &str,
    mut out: Manifests,
) -> Result<Manifests, LoadError> {
    let mut src = Src::new(reader, file);
    let mut docs = Documents {
        file,
        count: 0,
        out: &mut out,
    };
    src.skip_bom()?;
    src.skip_ws(None)?;
    match src.peek()? {
        Some(b'{' | b'[') => json_stream(&mut src, &mut docs)?,
        Some(_) => yaml_stream(&mut src, &mut docs)?,
        None => {}
    }
    Ok(out)
}

/// The documents of one file, numbered as they come.
struct Documents<'a> {
    file: &'a str,
    count: usize,
    out: &'a mut Manifests,
}

impl Documents<'_> {
    fn next_source(&mut self) -> Source {
        self.out.compact_new();
        self.count += 1;
        Source {
            file: self.file.to_string(),
            document: self.count,
            item: None,
        }
    }
}

/// The byte source: a `BufRead` with the line and column of the next byte.
struct Src<'f, R> {
    r: R,
    file: &'f str,
    line: usize,
    /// Bytes read since the last newline.
    column: usize,
}

impl<'f, R: BufRead> Src<'f, R> {
    fn new(r: R, file: &'f str) -> Self {
        Src {
            r,
            file,
            line: 1,
            column: 0,
        }
    }

    fn io(&self, e: std::io::Error) -> LoadError {
        LoadError::Read {
            file: self.file.to_string(),
            message: match e.kind() {
                ErrorKind::Other => e.to_string(),
                _ => format!("cannot read: {e}"),
            },
        }
    }

    fn buf(&mut self) -> Result<&[u8], LoadError> {
        loop {
            match self.r.fill_buf() {
                Ok(_) => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io(e)),
            }
        }
        // Filled above: this returns the buffer without reading.
        let file = self.file;
        self.r.fill_buf().map_err(|e| LoadError::Read {
            file: file.to_string(),
            message: format!("cannot read: {e}"),
        })
    }

    fn peek(&mut self) -> Result<Option<u8>, LoadError> {
        Ok(self.buf()?.first().copied())
    }

    /// Consumes `n` bytes of the buffer (`bytes` is them), keeping line and column.
    fn consume(&mut self, bytes_len: usize, newlines: usize, after_last_newline: usize) {
        if newlines > 0 {
            self.line += newlines;
            self.column = after_last_newline;
        } else {
            self.column += bytes_len;
        }
        self.r.consume(bytes_len);
    }

    fn consume_counted(&mut self, n: usize) -> Result<(), LoadError> {
        let buf = self.buf()?;
        let taken = &buf[..n];
        let newlines = taken.iter().filter(|&&b| b == b'\n').count();
        let after = taken
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| n - p - 1);
        self.consume(n, newlines, after);
        Ok(())
    }

    /// Where the next byte is, 1-based.
    fn position(&self) -> (usize, usize) {
        (self.line, self.column + 1)
    }

    /// The input ended inside a list: serde_json's words, at the last byte.
    fn eof(&self) -> LoadError {
        json_error(
            self.file,
            "EOF while parsing a list",
            self.line,
            self.column,
        )
    }

    fn skip_bom(&mut self) -> Result<(), LoadError> {
        if self.buf()?.starts_with("\u{feff}".as_bytes()) {
            self.r.consume(3);
        }
        Ok(())
    }

    /// Consumes bytes while `keep` holds, copying them to `copy` when given.
    fn take_while(
        &mut self,
        mut copy: Option<&mut Vec<u8>>,
        keep: impl Fn(u8) -> bool,
    ) -> Result<(), LoadError> {
        loop {
            let buf = self.buf()?;
            if buf.is_empty() {
                return Ok(());
            }
            let n = buf.iter().position(|&b| !keep(b)).unwrap_or(buf.len());
            if let Some(c) = copy.as_deref_mut() {
                c.extend_from_slice(&buf[..n]);
            }
            let done = n < buf.len();
            self.consume_counted(n)?;
            if done {
                return Ok(());
            }
        }
    }

    /// Skips JSON whitespace, copying it to `copy` when given.
    fn skip_ws(&mut self, copy: Option<&mut Vec<u8>>) -> Result<(), LoadError> {
        self.take_while(copy, |b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    }

    /// Reads one line (through its newline) into `line`; false at the end.
    fn read_line(&mut self, line: &mut Vec<u8>) -> Result<bool, LoadError> {
        line.clear();
        loop {
            let buf = self.buf()?;
            if buf.is_empty() {
                return Ok(!line.is_empty());
            }
            match memchr::memchr(b'\n', buf) {
                Some(i) => {
                    line.extend_from_slice(&buf[..=i]);
                    self.r.consume(i + 1);
                    self.line += 1;
                    self.column = 0;
                    return Ok(true);
                }
                None => {
                    let n = buf.len();
                    line.extend_from_slice(buf);
                    self.r.consume(n);
                    self.column += n;
                }
            }
        }
    }

    /// Copies a scalar (number, literal, or whatever malformed text stands there) up to
    /// the next delimiter.
    fn copy_scalar(&mut self, out: &mut Vec<u8>) -> Result<(), LoadError> {
        self.take_while(Some(out), |b| {
            !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
        })
    }

    /// Copies one JSON value (object, array, string or scalar) to `out`, verbatim: only
    /// brackets and string quotes are followed, so a malformed value is copied as far as
    /// it goes and serde_json reports it.
    fn copy_value(&mut self, out: &mut Vec<u8>) -> Result<(), LoadError> {
        let mut depth = 0usize;
        let mut in_string = false;
        let mut escaped = false;
        let mut started = false;
        loop {
            let buf = self.buf()?;
            if buf.is_empty() {
                return Ok(());
            }
            let mut i = 0;
            let mut done = false;
            if !started {
                started = true;
                match buf[0] {
                    b'{' | b'[' | b'"' => {}
                    _ => return self.copy_scalar(out),
                }
            }
            let mut newlines = 0usize;
            let mut last_newline = None;
            while i < buf.len() {
                if in_string {
                    // Straight to the next quote or backslash.
                    match memchr::memchr2(b'"', b'\\', &buf[i..]) {
                        None if escaped => {
                            escaped = false;
                            i += 1;
                        }
                        None => i = buf.len(),
                        Some(_) if escaped => {
                            escaped = false;
                            i += 1;
                        }
                        Some(j) => {
                            i += j;
                            if buf[i] == b'\\' {
                                escaped = true;
                            } else {
                                in_string = false;
                                if depth == 0 {
                                    i += 1;
                                    done = true;
                                    break;
                                }
                            }
                            i += 1;
                        }
                    }
                    continue;
                }
                match buf[i] {
                    b'"' => in_string = true,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            i += 1;
                            done = true;
                            break;
                        }
                    }
                    b'\n' => {
                        newlines += 1;
                        last_newline = Some(i);
                    }
                    _ => {}
                }
                i += 1;
            }
            out.extend_from_slice(&buf[..i]);
            let after = last_newline.map_or(0, |p| i - p - 1);
            self.consume(i, newlines, after);
            if done {
                return Ok(());
            }
        }
    }
}

/// A JSON stream: objects, arrays of objects (each element a document), concatenated,
/// with `kubectl cluster-info dump`'s log sections passed over.
fn json_stream<R: BufRead>(
    src: &mut Src<'_, R>,
    docs: &mut Documents<'_>,
) -> Result<(), LoadError> {
    let mut line = Vec::new();
    loop {
        src.skip_ws(None)?;
        match src.peek()? {
            None => return Ok(()),
            Some(b'{') => json_document(src, docs)?,
            Some(b'[') => {
                src.consume_counted(1)?;
                loop {
                    src.skip_ws(None)?;
                    match src.peek()? {
                        Some(b']') => {
                            src.consume_counted(1)?;
                            break;
                        }
                        Some(b'{') => json_document(src, docs)?,
                        Some(_) => {
                            // Not an object: serde_json says what it is (or what is wrong).
                            let mut text = Vec::new();
                            let (l, c) = src.position();
                            src.copy_value(&mut text)?;
                            let piece = Piece {
                                text,
                                line: l,
                                column: c,
                                yaml: false,
                            };
                            let source = docs.next_source();
                            thorough(&piece, &source, None, 0, docs.out)?;
                        }
                        None => return Err(src.eof()),
                    }
                    src.skip_ws(None)?;
                    match src.peek()? {
                        Some(b',') => src.consume_counted(1)?,
                        Some(b']') => {}
                        Some(_) => {
                            let (l, c) = src.position();
                            return Err(json_error(src.file, "expected `,` or `]`", l, c + 1));
                        }
                        None => {
                            let (l, c) = src.position();
                            return Err(json_error(src.file, "EOF while parsing a list", l, c));
                        }
                    }
                }
            }
            Some(_) => {
                let (l, c) = src.position();
                src.read_line(&mut line)?;
                let trimmed = line.trim_ascii();
                if trimmed == b"---" || trimmed == b"..." {
                    // JSON documents in a YAML stream, separated as YAML separates them.
                    continue;
                }
                if line.starts_with(LOG_START) {
                    // A log section: through its END line (or the end of the input).
                    while src.read_line(&mut line)? {
                        if memmem(&line, LOG_END) {
                            break;
                        }
                    }
                } else {
                    return Err(json_error(src.file, "expected value", l, c));
                }
            }
        }
    }
}

fn memmem(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn json_error(file: &str, what: &str, line: usize, column: usize) -> LoadError {
    LoadError::Json {
        file: file.to_string(),
        message: format!("{what} at line {line} column {column}"),
    }
}

/// One top-level JSON object. When it has an `items` array, the items are cut out and
/// read one by one; the rest of the object (its `kind`, `apiVersion`, `metadata`) is
/// kept, with `"items":[]`, to learn what it is.
fn json_document<R: BufRead>(
    src: &mut Src<'_, R>,
    docs: &mut Documents<'_>,
) -> Result<(), LoadError> {
    let (line, column) = src.position();
    let source = docs.next_source();
    let mut rest = Vec::new();
    let mut list = ListState::new(docs.out);
    src.consume_counted(1)?;
    rest.push(b'{');
    loop {
        src.skip_ws(Some(&mut rest))?;
        match src.peek()? {
            Some(b'"') => {}
            // `}` closes it; anything else is copied for serde_json to report.
            _ => {
                src.copy_rest(&mut rest, 1)?;
                break;
            }
        }
        let key_start = rest.len();
        src.copy_value(&mut rest)?;
        let is_items = &rest[key_start..] == b"\"items\"";
        src.skip_ws(Some(&mut rest))?;
        if src.peek()? != Some(b':') {
            src.copy_rest(&mut rest, 1)?;
            break;
        }
        src.consume_counted(1)?;
        rest.push(b':');
        src.skip_ws(Some(&mut rest))?;
        if is_items && src.peek()? == Some(b'[') {
            rest.extend_from_slice(b"[]");
            json_items(src, &source, &mut list, docs.out)?;
        } else {
            src.copy_value(&mut rest)?;
        }
        src.skip_ws(Some(&mut rest))?;
        match src.peek()? {
            Some(b',') => {
                src.consume_counted(1)?;
                rest.push(b',');
            }
            _ => {
                src.copy_rest(&mut rest, 1)?;
                break;
            }
        }
    }
    let piece = Piece {
        text: rest,
        line,
        column,
        yaml: false,
    };
    list.finish(&piece, &source, docs.out)
}

impl<R: BufRead> Src<'_, R> {
    /// Copies the rest of a container `depth` deep (its closing bracket included).
    fn copy_rest(&mut self, out: &mut Vec<u8>, depth: usize) -> Result<(), LoadError> {
        let mut depth = depth;
        loop {
            self.skip_ws(Some(out))?;
            match self.peek()? {
                None => return Ok(()),
                Some(b @ (b'}' | b']')) => {
                    self.consume_counted(1)?;
                    out.push(b);
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                Some(b',' | b':') => {
                    let b = self.peek()?.unwrap_or(b',');
                    self.consume_counted(1)?;
                    out.push(b);
                }
                Some(_) => self.copy_value(out)?,
            }
        }
    }
}

/// The items of a JSON `items` array, each read as it is cut out.
fn json_items<R: BufRead>(
    src: &mut Src<'_, R>,
    source: &Source,
    list: &mut ListState,
    out: &mut Manifests,
) -> Result<(), LoadError> {
    src.consume_counted(1)?;
    let mut index = 0;
    loop {
        src.skip_ws(None)?;
        match src.peek()? {
            Some(b']') => {
                src.consume_counted(1)?;
                return Ok(());
            }
            Some(_) => {}
            None => return Err(src.eof()),
        }
        let (line, column) = src.position();
        let mut text = Vec::new();
        src.copy_value(&mut text)?;
        let piece = Piece {
            text,
            line,
            column,
            yaml: false,
        };
        let item_source = Source {
            item: Some(index),
            ..source.clone()
        };
        list.item(piece, item_source, out)?;
        index += 1;
        src.skip_ws(None)?;
        match src.peek()? {
            Some(b',') => src.consume_counted(1)?,
            Some(b']') => {}
            Some(_) => {
                let (l, c) = src.position();
                return Err(json_error(src.file, "expected `,` or `]`", l, c));
            }
            None => return Err(src.eof()),
        }
    }
}

/// A document whose items are read before its own `kind` is known (kubectl prints
/// `items` before `kind`): items that name their kind are read at once; the others wait
/// for the list's kind and apiVersion. Should the document turn out not to be a list,
/// what its items gave is taken back.
struct ListState {
    objects_before: usize,
    skipped_before: usize,
    waiting: Vec<(Piece, Source)>,
    /// Items cut out but not yet read: they are typed in parallel, a batch at a time.
    batch: Vec<(Piece, Source)>,
    any: bool,
}

/// How many items are typed together (over the machine's cores).
const BATCH: usize = 512;

impl ListState {
    fn new(out: &Manifests) -> Self {
        ListState {
            objects_before: out.objects.len(),
            skipped_before: out.skipped.len(),
            waiting: Vec::new(),
            batch: Vec::new(),
            any: false,
        }
    }

    fn item(&mut self, piece: Piece, source: Source, out: &mut Manifests) -> Result<(), LoadError> {
        self.any = true;
        self.batch.push((piece, source));
        if self.batch.len() >= BATCH {
            self.flush(out)?;
        }
        Ok(())
    }

    /// Reads the batch: typed in parallel, then taken in file order (so the first error
    /// in the file is the one reported).
    fn flush(&mut self, out: &mut Manifests) -> Result<(), LoadError> {
        let batch = std::mem::take(&mut self.batch);
        let prepared = prepare_all(&batch);
        for ((piece, source), (head, object)) in batch.into_iter().zip(prepared) {
            match (head, object) {
                (_, Some(object)) => out.objects.push(Loaded { source, object }),
                (Some(h), None) if h.kind.is_some() => thorough(&piece, &source, None, 1, out)?,
                _ => self.waiting.push((piece, source)),
            }
        }
        out.compact_new();
        Ok(())
    }

    /// The document without its items: what it is decides what its items were.
    fn finish(
        mut self,
        rest: &Piece,
        source: &Source,
        out: &mut Manifests,
    ) -> Result<(), LoadError> {
        self.flush(out)?;
        if !self.any {
            let h = head(rest).unwrap_or_default();
            return read_piece(rest, source, None, h, 0, out);
        }
        let value = tree(rest, source)?;
        let kind = value.get("kind").and_then(Value::as_str);
        let Some(kind) = kind else {
            return Err(LoadError::MissingKind {
                file: source.file.clone(),
                document: source.document,
            });
        };
        if !is_list(kind, &value) {
            // Not a list after all: `items` is a field of the object, which no type the
            // scheduler reads has.
            out.objects.truncate(self.objects_before);
            out.skipped.truncate(self.skipped_before);
            super::parse_document(&value, source, None, 0, out)?;
            if out.objects.len() > self.objects_before {
                out.objects.truncate(self.objects_before);
                return Err(LoadError::UnknownField {
                    file: source.file.clone(),
                    object: super::object_name(kind, &value),
                    field: "items".into(),
                });
            }
            return Ok(());
        }
        let item_kind = kind.strip_suffix("List").filter(|k| !k.is_empty());
        let api_version = value
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        for (piece, item_source) in &self.waiting {
            let Some(item_kind) = item_kind else {
                // `kind: List` items must name their kind: the tree reader says so.
                thorough(piece, item_source, None, 1, out)?;
                continue;
            };
            let h = Head {
                kind: Some(item_kind.to_string()),
                api_version: Some(
                    head(piece)
                        .and_then(|h| h.api_version)
                        .unwrap_or_else(|| api_version.to_string()),
                ),
            };
            read_piece(
                piece,
                item_source,
                Some((item_kind, api_version)),
                h,
                1,
                out,
            )?;
        }
        Ok(())
    }
}

/// An object's `kind` and `apiVersion`, read without typing the rest.
#[derive(Default, serde::Deserialize)]
struct Head {
    kind: Option<String>,
    #[serde(rename = "apiVersion")]
    api_version: Option<String>,
}

/// The piece's kind and apiVersion; `None` when it is not an object that reads.
fn head(piece: &Piece) -> Option<Head> {
    if piece.yaml {
        let text = std::str::from_utf8(&piece.text).ok()?;
        let h = yaml_head(text);
        if h.kind.is_some() || !text.trim_start().starts_with('{') {
            return Some(h);
        }
        // A flow mapping (`- {kind: Node, ...}`): the parser finds its keys.
        serde_saphyr::from_str_with_options(text, super::yaml_options()).ok()
    } else {
        // Only `kind` and `apiVersion` are built; the rest is skipped.
        let h: Head = serde_json::from_slice(&piece.text).ok()?;
        Some(h)
    }
}

/// `kind:` and `apiVersion:` among a YAML mapping's top keys (the indentation of its
/// first key), as plain or quoted scalars.
fn yaml_head(text: &str) -> Head {
    let mut indent = None;
    let mut h = Head::default();
    for line in text.lines() {
        let content = line.trim_start();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let here = line.len() - content.len();
        let top = *indent.get_or_insert(here);
        if here != top {
            continue;
        }
        let value = |key: &str| -> Option<String> {
            let v = content.strip_prefix(key)?.strip_prefix(':')?;
            let v = v.split(" #").next().unwrap_or("").trim();
            let v = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(v);
            (!v.is_empty()).then(|| v.to_string())
        };
        if let Some(k) = value("kind") {
            h.kind = Some(k);
        } else if let Some(a) = value("apiVersion") {
            h.api_version = Some(a);
        }
    }
    h
}

/// An item's head, and the object typed straight from it when that works.
fn prepare(piece: &Piece) -> (Option<Head>, Option<Object>) {
    let h = head(piece);
    let object = h.as_ref().and_then(|h| typed_object(piece, h));
    (h, object)
}

/// The built-in object `head` names, typed straight from the piece, without what
/// nothing reads; `None` when it is not one or does not type.
fn typed_object(piece: &Piece, head: &Head) -> Option<Object> {
    let (kind, api_version) = (head.kind.as_deref()?, head.api_version.as_deref()?);
    if !builtin(kind, api_version) || super::api_serving(kind, api_version).is_some() {
        return None;
    }
    let mut object = fast(piece, kind)?;
    super::drop_unread(&mut object);
    Some(object)
}

/// [`prepare`] for every item, spread over the machine's cores.
fn prepare_all(batch: &[(Piece, Source)]) -> Vec<(Option<Head>, Option<Object>)> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    if threads < 2 || batch.len() < 2 {
        return batch.iter().map(|(p, _)| prepare(p)).collect();
    }
    let per = batch.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = batch
            .chunks(per)
            .map(|chunk| {
                scope.spawn(move || chunk.iter().map(|(p, _)| prepare(p)).collect::<Vec<_>>())
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// Reads one object, typed straight from its text when it can be, else thoroughly.
fn read_piece(
    piece: &Piece,
    source: &Source,
    list: Option<(&str, &str)>,
    head: Head,
    depth: usize,
    out: &mut Manifests,
) -> Result<(), LoadError> {
    if let Some(object) = typed_object(piece, &head) {
        out.objects.push(Loaded {
            source: source.clone(),
            object,
        });
        return Ok(());
    }
    thorough(piece, source, list, depth, out)
}

/// The object typed straight from the piece, for the kinds whose reading is only typing;
/// `None` when that fails in any way (the thorough reader then says why, or reads it
/// leniently).
fn fast(piece: &impl Typer, kind: &str) -> Option<Object> {
    Some(match kind {
        "Node" => Object::Node(Box::new(piece.typed()?)),
        "Pod" => Object::Pod(Box::new(piece.typed()?)),
        "Service" => Object::Service(Box::new(piece.typed()?)),
        "ReplicaSet" => Object::ReplicaSet(Box::new(piece.typed()?)),
        "ReplicationController" => Object::ReplicationController(Box::new(piece.typed()?)),
        "StatefulSet" => Object::StatefulSet(Box::new(piece.typed()?)),
        "Deployment" => Object::Deployment(Box::new(piece.typed()?)),
        "DaemonSet" => Object::DaemonSet(Box::new(piece.typed()?)),
        "Job" => Object::Job(Box::new(piece.typed()?)),
        "CronJob" => Object::CronJob(Box::new(piece.typed()?)),
        "PriorityClass" => Object::PriorityClass(Box::new(piece.typed()?)),
        "PodDisruptionBudget" => Object::PodDisruptionBudget(Box::new(piece.typed()?)),
        "Namespace" => Object::Namespace(Box::new(piece.typed()?)),
        "PersistentVolumeClaim" => Object::PersistentVolumeClaim(Box::new(piece.typed()?)),
        "PersistentVolume" => Object::PersistentVolume(Box::new(piece.typed()?)),
        "StorageClass" => Object::StorageClass(Box::new(piece.typed()?)),
        "CSINode" => Object::CsiNode(Box::new(piece.typed()?)),
        "LimitRange" => Object::LimitRange(Box::new(piece.typed()?)),
        "RuntimeClass" => Object::RuntimeClass(Box::new(piece.typed()?)),
        "ResourceQuota" => Object::ResourceQuota(Box::new(piece.typed()?)),
        _ => return None,
    })
}

/// Text that types into any k8s-openapi type: `None` on any error or unknown field.
trait Typer {
    fn typed<T: DeserializeOwned>(&self) -> Option<T>;
}

impl Typer for Piece {
    /// JSON through serde_json. YAML through serde_json too when [`yaml_json`] converts
    /// it (several times faster, and the same object), else through serde-saphyr.
    fn typed<T: DeserializeOwned>(&self) -> Option<T> {
        if !self.yaml {
            return typed_json(serde_json::Deserializer::from_slice(&self.text));
        }
        let text = std::str::from_utf8(&self.text).ok()?;
        yaml_json::to_json(text)
            .and_then(|json| typed_json(serde_json::Deserializer::from_str(&json)))
            .or_else(|| typed_yaml(text))
    }
}

/// Types `T` from JSON text; `None` on any error or unknown field.
fn typed_json<'de, T: DeserializeOwned, R: serde_json::de::Read<'de>>(
    mut de: serde_json::Deserializer<R>,
) -> Option<T> {
    let mut unknown = false;
    let value = serde_ignored::deserialize(&mut de, |_| unknown = true).ok()?;
    de.end().ok()?;
    (!unknown).then_some(value)
}

/// Types `T` from YAML text with serde-saphyr; `None` on any error or unknown field.
fn typed_yaml<T: DeserializeOwned>(text: &str) -> Option<T> {
    let mut unknown = false;
    let note = |_: serde_ignored::Path<'_>| unknown = true;
    let value =
        serde_saphyr::with_deserializer_from_str_with_options(text, super::yaml_options(), |de| {
            serde_ignored::deserialize(de, note)
        })
        .ok()?;
    (!unknown).then_some(value)
}

/// A kind typed from YAML text both ways, for the tests that compare them: through
/// serde-saphyr, and through JSON when [`yaml_json`] converts the text.
#[cfg(test)]
pub(super) fn typed_both(text: &str, kind: &str) -> (Option<Object>, Option<Option<Object>>) {
    struct Yaml<'a>(&'a str);
    impl Typer for Yaml<'_> {
        fn typed<T: DeserializeOwned>(&self) -> Option<T> {
            typed_yaml(self.0)
        }
    }
    struct Json(String);
    impl Typer for Json {
        fn typed<T: DeserializeOwned>(&self) -> Option<T> {
            typed_json(serde_json::Deserializer::from_str(&self.0))
        }
    }
    let json = yaml_json::to_json(text).map(|j| fast(&Json(j), kind));
    (fast(&Yaml(text), kind), json)
}

/// The piece as a value tree, syntax errors placed in the file.
fn tree(piece: &Piece, source: &Source) -> Result<Value, LoadError> {
    let text = std::str::from_utf8(&piece.text).map_err(|_| LoadError::Read {
        file: source.file.clone(),
        message: format!(
            "not UTF-8 text (in the object starting at line {})",
            piece.line
        ),
    })?;
    let docs = if piece.yaml {
        super::parse_yaml_documents(text, &source.file)
    } else {
        json::documents(text, &source.file)
    }
    .map_err(|e| shift(e, piece.line, piece.column))?;
    let mut docs = docs.into_iter();
    match (docs.next(), docs.next()) {
        (Some(v), None) => Ok(v),
        (None, _) => Ok(Value::Null),
        (Some(_), Some(_)) => Err(LoadError::Json {
            file: source.file.clone(),
            message: format!(
                "trailing characters after the object at line {}",
                piece.line
            ),
        }),
    }
}

/// Reads a piece the thorough way: the tree reader, with its errors and leniency.
fn thorough(
    piece: &Piece,
    source: &Source,
    list: Option<(&str, &str)>,
    depth: usize,
    out: &mut Manifests,
) -> Result<(), LoadError> {
    let value = tree(piece, source)?;
    if value.is_null() {
        return Ok(());
    }
    super::parse_document(&value, source, list, depth, out)
}

/// A syntax error's `line L column C`, relative to a piece, made relative to the file.
fn shift(e: LoadError, line: usize, column: usize) -> LoadError {
    let fix = |message: String| -> String {
        // `line L` at the start (YAML) or after a space (JSON).
        let Some(at) = message
            .match_indices("line ")
            .map(|(i, _)| i)
            .find(|&i| i == 0 || message.as_bytes()[i - 1] == b' ')
        else {
            return message;
        };
        let tail = &message[at + 5..];
        let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
        let Ok(l) = digits.parse::<usize>() else {
            return message;
        };
        let after = &tail[digits.len()..];
        let (col, after_col) = match after.strip_prefix(" column ") {
            Some(c) => {
                let d: String = c.chars().take_while(char::is_ascii_digit).collect();
                let rest = &c[d.len()..];
                (d.parse::<usize>().ok(), rest)
            }
            None => (None, after),
        };
        let new_line = line + l - 1;
        match col {
            Some(c) => {
                let new_col = if l == 1 { column + c - 1 } else { c };
                format!(
                    "{}line {new_line} column {new_col}{after_col}",
                    &message[..at]
                )
            }
            None => format!("{}line {new_line}{after}", &message[..at]),
        }
    };
    match e {
        LoadError::Json { file, message } => LoadError::Json {
            file,
            message: fix(message),
        },
        LoadError::Yaml { file, message } => LoadError::Yaml {
            file,
            message: fix(message),
        },
        other => other,
    }
}

/// A YAML stream, line by line: documents split at `---`; a document's top-level
/// `items:` block sequence is cut into its entries, each read on its own.
fn yaml_stream<R: BufRead>(
    src: &mut Src<'_, R>,
    docs: &mut Documents<'_>,
) -> Result<(), LoadError> {
    let mut line = Vec::new();
    let mut doc = YamlDoc::new(src.line);
    loop {
        let line_no = src.line;
        if !src.read_line(&mut line)? {
            break;
        }
        let marker =
            |m: &[u8]| line.starts_with(m) && line.get(3).is_none_or(|b| b.is_ascii_whitespace());
        if marker(b"---") || marker(b"...") {
            doc.finish(docs)?;
            doc = YamlDoc::new(line_no + 1);
            if marker(b"---") {
                // Content after the marker (`--- {a: b}`) belongs to the next document.
                let mut rest = line.clone();
                rest[..3].copy_from_slice(b"   ");
                if rest.iter().any(|b| !b.is_ascii_whitespace()) {
                    doc = YamlDoc::new(line_no);
                    doc.line(&rest, line_no, docs)?;
                }
            }
            continue;
        }
        doc.line(&line, line_no, docs)?;
    }
    doc.finish(docs)
}

/// Where a YAML document's reading is.
enum ItemsMode {
    /// Outside `items:`.
    None,
    /// Just after a top-level `items:` line: the lines seen since (blank or comments),
    /// until one shows whether a block sequence follows.
    Pending(Vec<u8>),
    /// Inside the `items:` sequence, its dashes at this column.
    In(usize),
}

/// One YAML document being read.
struct YamlDoc {
    /// The document without its items (`items: []` in their place).
    rest: Vec<u8>,
    start_line: usize,
    mode: ItemsMode,
    item: Option<(Vec<u8>, usize)>,
    source: Option<Source>,
    list: Option<ListState>,
    index: usize,
    content: bool,
}

impl YamlDoc {
    fn new(start_line: usize) -> Self {
        YamlDoc {
            rest: Vec::new(),
            start_line,
            mode: ItemsMode::None,
            item: None,
            source: None,
            list: None,
            index: 0,
            content: false,
        }
    }

    fn line(
        &mut self,
        line: &[u8],
        line_no: usize,
        docs: &mut Documents<'_>,
    ) -> Result<(), LoadError> {
        let indent = line.iter().take_while(|&&b| b == b' ').count();
        let body = &line[indent..];
        let blank = body.iter().all(u8::is_ascii_whitespace) || body.starts_with(b"#");
        if !blank {
            self.content = true;
        }
        match std::mem::replace(&mut self.mode, ItemsMode::None) {
            ItemsMode::None => {
                if indent == 0 && is_items_key(line) {
                    self.mode = ItemsMode::Pending(line.to_vec());
                } else {
                    self.rest.extend_from_slice(line);
                }
                Ok(())
            }
            ItemsMode::Pending(mut held) => {
                if blank {
                    held.extend_from_slice(line);
                    self.mode = ItemsMode::Pending(held);
                    return Ok(());
                }
                if indent <= 2 && is_entry(body) {
                    // A block sequence: stream it. The held lines become `items: []`.
                    self.rest.extend_from_slice(b"items: []\n");
                    let blank_lines = held
                        .iter()
                        .filter(|&&b| b == b'\n')
                        .count()
                        .saturating_sub(1);
                    for _ in 0..blank_lines {
                        self.rest.push(b'\n');
                    }
                    self.mode = ItemsMode::In(indent);
                    self.start_item(line, line_no, indent, docs)
                } else {
                    self.rest.extend_from_slice(&held);
                    self.rest.extend_from_slice(line);
                    Ok(())
                }
            }
            ItemsMode::In(column) => {
                if blank || indent > column {
                    if let Some((text, _)) = self.item.as_mut() {
                        text.extend_from_slice(line);
                    }
                    self.mode = ItemsMode::In(column);
                    return Ok(());
                }
                if indent == column && is_entry(body) {
                    self.mode = ItemsMode::In(column);
                    return self.start_item(line, line_no, column, docs);
                }
                // The sequence has ended: this line is the document's again.
                self.end_item(docs)?;
                self.rest.extend_from_slice(line);
                Ok(())
            }
        }
    }

    fn start_item(
        &mut self,
        line: &[u8],
        line_no: usize,
        column: usize,
        docs: &mut Documents<'_>,
    ) -> Result<(), LoadError> {
        self.end_item(docs)?;
        if self.source.is_none() {
            self.source = Some(docs.next_source());
            self.list = Some(ListState::new(docs.out));
        }
        // The dash becomes a space: the entry is then a mapping at its own indentation,
        // on the same lines and columns.
        let mut text = line.to_vec();
        text[column] = b' ';
        self.item = Some((text, line_no));
        Ok(())
    }

    fn end_item(&mut self, docs: &mut Documents<'_>) -> Result<(), LoadError> {
        let Some((text, line)) = self.item.take() else {
            return Ok(());
        };
        let (Some(source), Some(list)) = (self.source.as_ref(), self.list.as_mut()) else {
            return Ok(());
        };
        let piece = Piece {
            text,
            line,
            column: 1,
            yaml: true,
        };
        let item_source = Source {
            item: Some(self.index),
            ..source.clone()
        };
        self.index += 1;
        list.item(piece, item_source, docs.out)
    }

    fn finish(mut self, docs: &mut Documents<'_>) -> Result<(), LoadError> {
        if let ItemsMode::Pending(held) = std::mem::replace(&mut self.mode, ItemsMode::None) {
            self.rest.extend_from_slice(&held);
        }
        self.end_item(docs)?;
        let piece = Piece {
            text: std::mem::take(&mut self.rest),
            line: self.start_line,
            column: 1,
            yaml: true,
        };
        match (self.source, self.list) {
            (Some(source), Some(list)) => list.finish(&piece, &source, docs.out),
            _ => {
                if !self.content {
                    return Ok(());
                }
                // A document that is null (`~`) is not counted, as the tree reader does.
                let h = head(&piece).unwrap_or_default();
                if h.kind.is_none() {
                    let text = std::str::from_utf8(&piece.text).unwrap_or("");
                    let probe = Source {
                        file: docs.file.to_string(),
                        document: docs.count + 1,
                        item: None,
                    };
                    if tree(&piece, &probe).is_ok_and(|v| v.is_null()) && !text.is_empty() {
                        return Ok(());
                    }
                }
                let source = docs.next_source();
                read_piece(&piece, &source, None, h, 0, docs.out)
            }
        }
    }
}

/// `items:` (nothing after it but a comment): a top-level key whose value is on the
/// next lines.
fn is_items_key(line: &[u8]) -> bool {
    let Some(rest) = line.strip_prefix(b"items:") else {
        return false;
    };
    let rest = rest.trim_ascii();
    rest.is_empty() || rest.starts_with(b"#")
}

/// A block sequence entry: `-` then a space or the line's end.
fn is_entry(body: &[u8]) -> bool {
    body.first() == Some(&b'-') && body.get(1).is_none_or(|b| b.is_ascii_whitespace())
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::{parse_manifests, parse_manifests_tree};
    use std::path::Path;

    /// Both readers agree: the same objects and notes, or the same error.
    fn same(text: &str, file: &str) {
        let streamed = parse_manifests(text, file);
        let tree = parse_manifests_tree(text, file);
        match (&streamed, &tree) {
            (Ok(s), Ok(t)) => {
                assert_eq!(s.objects.len(), t.objects.len(), "{file}");
                for (a, b) in s.objects.iter().zip(&t.objects) {
                    assert_eq!(format!("{a:?}"), format!("{b:?}"), "{file}");
                }
                let notes = |m: &super::Manifests| -> Vec<String> {
                    m.skipped.iter().map(ToString::to_string).collect()
                };
                assert_eq!(notes(s), notes(t), "{file}");
            }
            (Err(s), Err(t)) => assert_eq!(s.to_string(), t.to_string(), "{file}"),
            _ => panic!("{file}: streamed {streamed:?}, tree {tree:?}"),
        }
    }

    fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, files);
            } else if p
                .extension()
                .is_some_and(|x| x == "yaml" || x == "json" || x == "yml")
            {
                files.push(p);
            }
        }
    }

    #[test]
    fn every_fixture_reads_as_the_tree_reader_reads_it() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files = Vec::new();
        for dir in [
            "crates/cli/tests/fixtures",
            "crates/jobs/examples",
            "deploy",
            "crates/k8s/tests/fixtures",
        ] {
            walk(&root.join(dir), &mut files);
        }
        assert!(files.len() > 30, "fixtures found: {}", files.len());
        for f in files {
            let text = std::fs::read_to_string(&f).expect("fixture reads");
            same(&text, &f.display().to_string());
        }
    }

    /// Texts shaped as dumps are (kubectl's lists, typed lists, cluster-info dumps,
    /// YAML lists), with the odd cases and errors around them.
    pub(in crate::load) fn dump_shapes() -> Vec<String> {
        let node = |n: &str| {
            format!(
                "{{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {{\"name\": \"{n}\", \"managedFields\": [{{\"manager\": \"k\", \"fieldsV1\": {{\"f:a\": {{}}}}}}]}}, \"status\": {{\"allocatable\": {{\"cpu\": \"4\"}}}}}}"
            )
        };
        let cases = [
            // kubectl get -o json: items before kind.
            format!(
                "{{\"apiVersion\": \"v1\", \"items\": [{}, {}], \"kind\": \"List\", \"metadata\": {{\"resourceVersion\": \"\"}}}}",
                node("a"),
                node("b")
            ),
            // The API's typed lists: items without kind, before and after the list's kind.
            "{\"kind\": \"PodList\", \"apiVersion\": \"v1\", \"items\": [{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"containers\": []}}]}".into(),
            "{\"items\": [{\"metadata\": {\"name\": \"p\"}}], \"kind\": \"PodList\", \"apiVersion\": \"v1\"}".into(),
            // cluster-info dump: concatenated lists with logs between.
            format!(
                "{{\"kind\": \"NodeList\", \"apiVersion\": \"v1\", \"items\": [{}]}}\n==== START logs for container c of pod a/b ====\nlog {{ [ line\n==== END logs for container c of pod a/b ====\n[{}]",
                node("x"),
                node("y")
            ),
            // Not a list, with an items field; an items field that is not a list.
            "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"p\"}, \"items\": [{\"kind\": \"Node\", \"metadata\": {\"name\": \"n\"}}]}".into(),
            "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": {\"a\": 1}}".into(),
            "{\"apiVersion\": \"v1\", \"kind\": \"Foo\", \"metadata\": {\"name\": \"f\"}, \"items\": [{\"kind\": \"Pod\"}]}".into(),
            // Numbers where strings are wanted; null strings.
            "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n\", \"labels\": {\"a\": 1}}, \"status\": {\"allocatable\": {\"cpu\": 4}}}".into(),
            // Syntax errors, placed in the file.
            "{\"kind\": \"Node\", \"metadata\": {\"name\": \"a\"}}\n\n{\"b\": ]}".into(),
            "{\"apiVersion\": \"v1\", \"items\": [\n  {\"kind\": \"Node\", \"metadata\": {\"name\": \"n\"}},\n  {\"kind\": \"Node\", \"metadata\": {\"name\": }}\n], \"kind\": \"List\"}".into(),
            "{\"apiVersion\": \"v1\", \"items\": [{\"kind\": \"Node\"}".into(),
            "[{\"kind\": \"Node\", \"metadata\": {\"name\": \"n\"}}, 3]".into(),
            "{\"kind\": \"Node\"} x".into(),
            // YAML: kubectl get -o yaml, with entries at column 0 and at column 2.
            "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: a\n    managedFields:\n    - manager: k\n      fieldsV1: {f:a: {}}\n  status:\n    allocatable: {cpu: 4, pods: \"110\"}\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p, namespace: d}\n  spec:\n    containers:\n    - name: c\n      command: |\n        echo\n\n        - not an entry\n    nodeName: a\nkind: List\nmetadata:\n  resourceVersion: \"\"\n".into(),
            "kind: List\napiVersion: v1\nitems:\n  # nodes\n  - kind: Node\n    metadata: {name: a}\n\n  - metadata: {name: b}\n    kind: \"Node\"\n---\n---\nkind: PodList\napiVersion: v1\nitems:\n- metadata: {name: q}\n".into(),
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  items:\n  - a\n---\nkind: Foo\nitems:\n  a: b\n".into(),
            "kind: List\nitems:\n- kind: Node\n  metadata: {name: [}\n".into(),
            "kind: List\nitems:\n- kind: Node\n  metadata: {name: n}\n  spec: {taints: [{key: k, effect: NoSchedule, valu: x}]}\n".into(),
            "~\n---\nkind: Node\nmetadata: {name: a}\n...\n---\n# only a comment\n".into(),
            "--- {kind: Node, metadata: {name: a}}\n--- \nkind: Node\nmetadata: {name: b}\n".into(),
        ];
        cases.into()
    }

    #[test]
    fn dump_shapes_read_as_the_tree_reader_reads_them() {
        for (i, text) in dump_shapes().iter().enumerate() {
            same(text, &format!("case{i}"));
        }
    }

    #[test]
    fn json_documents_separated_as_yaml_separates_them() {
        let text = "{\"kind\": \"Node\", \"metadata\": {\"name\": \"a\"}}\n---\n{\"kind\": \"Node\", \"metadata\": {\"name\": \"b\"}}\n...\n";
        let m = super::super::parse_manifests(text, "s.yaml").expect("reads");
        let names: Vec<_> = m
            .objects
            .iter()
            .filter_map(|l| l.object.metadata()?.name.clone())
            .collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(m.objects[1].source.document, 2);
    }

    #[test]
    fn the_reader_error_names_the_file() {
        struct Failing;
        impl std::io::Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("input larger than 1 MiB"))
            }
        }
        let e = super::parse_manifests_reader(std::io::BufReader::new(Failing), "big.json")
            .expect_err("fails");
        assert_eq!(e.to_string(), "big.json: input larger than 1 MiB");
    }

    mod generated {
        use super::same;
        use proptest::prelude::*;
        use serde_json::{Value, json};

        fn object() -> impl Strategy<Value = Value> {
            let name = "[a-z][a-z0-9-]{0,8}";
            prop_oneof![
                (name, 0u32..64, proptest::bool::ANY).prop_map(|(n, cpu, as_number)| {
                    let cpu = if as_number { json!(cpu) } else { json!(cpu.to_string()) };
                    json!({"apiVersion": "v1", "kind": "Node",
                        "metadata": {"name": n, "labels": {"zone": "z", "note": "a \"quoted\" [x] {y}"}},
                        "status": {"allocatable": {"cpu": cpu}}})
                }),
                (name, proptest::option::of(name)).prop_map(|(n, node)| {
                    json!({"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": n, "namespace": "d", "annotations": {"cmd": "line1\nline2\n- not: an item"}},
                        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]}})
                }),
                name.prop_map(|n| json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": n}, "data": {"items": "- a\n- b"}})),
                name.prop_map(|n| json!({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": n}, "spec": {"nodeNme": "typo"}})),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]
            #[test]
            fn generated_lists_read_as_the_tree_reader_reads_them(
                items in proptest::collection::vec(object(), 0..6),
                typed in proptest::bool::ANY,
                pretty in proptest::bool::ANY,
                yaml in proptest::bool::ANY,
            ) {
                let items: Vec<Value> = if typed {
                    // A typed list's items leave their kind to the list.
                    items
                        .into_iter()
                        .filter(|i| i["kind"] == "Pod")
                        .map(|mut i| {
                            if let Some(m) = i.as_object_mut() {
                                m.remove("kind");
                                m.remove("apiVersion");
                            }
                            i
                        })
                        .collect()
                } else {
                    items
                };
                let kind = if typed { "PodList" } else { "List" };
                let list = json!({"apiVersion": "v1", "kind": kind, "items": items, "metadata": {}});
                let text = if yaml {
                    serde_saphyr::to_string(&list).expect("serializes")
                } else if pretty {
                    serde_json::to_string_pretty(&list).expect("serializes")
                } else {
                    serde_json::to_string(&list).expect("serializes")
                };
                same(&text, "generated");
            }
        }
    }
}
