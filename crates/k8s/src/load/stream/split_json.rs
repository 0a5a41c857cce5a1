//! The JSON splitter: objects, arrays of objects and concatenated lists, each top-level
//! object's `items` cut out one at a time and handed to its [`ListState`].

use super::list::ListState;
use super::piece::{Piece, thorough};
use super::source::Src;
use super::{Documents, LoadError, Manifests, Source};
use crate::load::position::Origin;
use std::io::BufRead;

/// What `kubectl cluster-info dump` prints before a container's log.
const LOG_START: &[u8] = b"==== START logs for";
/// What it prints after one.
const LOG_END: &[u8] = b"==== END logs for";

/// A JSON stream: objects, arrays of objects (each element a document), concatenated,
/// with `kubectl cluster-info dump`'s log sections passed over.
pub(super) fn json_stream<R: BufRead>(
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
                                origin: Origin::at(l, c),
                                yaml: false,
                            };
                            let source = docs.next_source();
                            thorough(&piece, &source, None, 0, docs.out)?;
                        }
                        None => return Err(eof(src)),
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

/// The input ended inside a list: serde_json's words, at the last byte.
fn eof<R: BufRead>(src: &Src<'_, R>) -> LoadError {
    let (line, column) = src.position();
    json_error(src.file, "EOF while parsing a list", line, column - 1)
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
        origin: Origin::at(line, column),
        yaml: false,
    };
    list.finish(&piece, &source, None, docs.out)
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
            None => return Err(eof(src)),
        }
        let (line, column) = src.position();
        let mut text = Vec::new();
        src.copy_value(&mut text)?;
        let piece = Piece {
            text,
            origin: Origin::at(line, column),
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
            None => return Err(eof(src)),
        }
    }
}
