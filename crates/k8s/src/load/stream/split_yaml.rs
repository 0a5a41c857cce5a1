//! The YAML splitter, line by line: documents split at `---`; a document's top-level
//! `items:` block sequence cut into its entries, each read on its own, unless the
//! document defines anchors its items may share: then the rest of it is read whole, as
//! serde-saphyr reads it (anchors are the document's, never carried across `---`).

use super::list::ListState;
use super::piece::{Piece, read_piece, tree};
use super::source::Src;
use super::typing::head;
use super::{Documents, LoadError, Source};
use crate::load::position::Origin;
use std::io::BufRead;

/// A YAML stream, line by line: documents split at `---`; a document's top-level
/// `items:` block sequence is cut into its entries, each read on its own.
pub(super) fn yaml_stream<R: BufRead>(
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
    /// Just after a top-level `items:` line (its line number): the lines seen since
    /// (blank or comments), until one shows whether a block sequence follows.
    Pending(Vec<u8>, usize),
    /// Inside the `items:` sequence, its dashes at this column.
    In(usize),
}

/// Where [`YamlDoc::route`] put a line.
enum Placed {
    /// Into the document's own text.
    Rest,
    /// Into the list item being cut out.
    Item,
}

/// The list item being cut out: its text (the dash blanked), first line and dash column.
struct Item {
    text: Vec<u8>,
    line: usize,
    dash: usize,
}

/// The placeholder that stands for the cut-out items in the document's text.
const PLACEHOLDER: &[u8] = b"items: []";

/// One YAML document being read.
struct YamlDoc {
    /// The document without its items (`items: []` in their place), or, once it is read
    /// whole, with the items from [`YamlDoc::tail`] on.
    rest: Vec<u8>,
    /// Where the lines of `rest` are in the file.
    origin: Origin,
    mode: ItemsMode,
    item: Option<Item>,
    source: Option<Source>,
    list: Option<ListState>,
    index: usize,
    content: bool,
    /// Where `items: []` stands in `rest`.
    placeholder: Option<usize>,
    /// The rest of the document is kept as it is, not cut: it defines anchors.
    whole: bool,
    /// The first item kept in `rest` (items before it were cut out and read).
    tail: Option<usize>,
}

impl YamlDoc {
    fn new(start_line: usize) -> Self {
        YamlDoc {
            rest: Vec::new(),
            origin: Origin::at(start_line, 1),
            mode: ItemsMode::None,
            item: None,
            source: None,
            list: None,
            index: 0,
            content: false,
            placeholder: None,
            whole: false,
            tail: None,
        }
    }

    /// Adds `text` (whole lines, the first of them file line `line_no`) to the document's
    /// own text.
    fn push_rest(&mut self, text: &[u8], line_no: usize) {
        let lines = memchr::memchr_iter(b'\n', text).count()
            + usize::from(text.last().is_some_and(|&b| b != b'\n'));
        self.origin.push_lines(line_no, lines);
        self.rest.extend_from_slice(text);
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
        if self.whole {
            self.push_rest(line, line_no);
            return Ok(());
        }
        let placed = self.route(line, line_no, indent, blank, docs)?;
        if !blank && may_define_anchor(body) {
            match placed {
                // Later items may name it: from this item on, the document is read whole.
                Placed::Item => self.keep_whole(),
                // Before any item: nothing is cut from this document.
                Placed::Rest if self.source.is_none() => self.whole = true,
                // After the items: the document's own text is read whole anyway.
                Placed::Rest => {}
            }
        }
        Ok(())
    }

    /// Puts a line where it belongs: the document's text, or the item being cut out.
    fn route(
        &mut self,
        line: &[u8],
        line_no: usize,
        indent: usize,
        blank: bool,
        docs: &mut Documents<'_>,
    ) -> Result<Placed, LoadError> {
        let body = &line[indent..];
        match std::mem::replace(&mut self.mode, ItemsMode::None) {
            ItemsMode::None => {
                if indent == 0 && is_items_key(line) {
                    self.mode = ItemsMode::Pending(line.to_vec(), line_no);
                } else {
                    self.push_rest(line, line_no);
                }
                Ok(Placed::Rest)
            }
            ItemsMode::Pending(mut held, held_line) => {
                if blank {
                    held.extend_from_slice(line);
                    self.mode = ItemsMode::Pending(held, held_line);
                    return Ok(Placed::Rest);
                }
                if indent <= 2 && is_entry(body) {
                    // A block sequence: stream it. The held lines become `items: []`
                    // and as many empty lines.
                    let mut text = PLACEHOLDER.to_vec();
                    text.push(b'\n');
                    let blank_lines = memchr::memchr_iter(b'\n', &held).count().saturating_sub(1);
                    text.resize(text.len() + blank_lines, b'\n');
                    self.placeholder = Some(self.rest.len());
                    self.push_rest(&text, held_line);
                    self.mode = ItemsMode::In(indent);
                    self.start_item(line, line_no, indent, docs)?;
                    Ok(Placed::Item)
                } else {
                    self.push_rest(&held, held_line);
                    self.push_rest(line, line_no);
                    Ok(Placed::Rest)
                }
            }
            ItemsMode::In(column) => {
                if blank || indent > column {
                    if let Some(item) = self.item.as_mut() {
                        item.text.extend_from_slice(line);
                    }
                    self.mode = ItemsMode::In(column);
                    return Ok(Placed::Item);
                }
                if indent == column && is_entry(body) {
                    self.mode = ItemsMode::In(column);
                    self.start_item(line, line_no, column, docs)?;
                    return Ok(Placed::Item);
                }
                // The sequence has ended: this line is the document's again.
                self.end_item(docs)?;
                self.push_rest(line, line_no);
                Ok(Placed::Rest)
            }
        }
    }

    /// Stops cutting: the item being read goes back into the document's text, dash and
    /// all, in place of `items: []`, and every line after it follows as it is.
    fn keep_whole(&mut self) {
        let Some(Item {
            mut text,
            line,
            dash,
        }) = self.item.take()
        else {
            return;
        };
        if let Some(b) = text.get_mut(dash) {
            *b = b'-';
        }
        if let Some(at) = self.placeholder
            && let Some(slot) = self.rest.get_mut(at..at + PLACEHOLDER.len())
        {
            // `items:` and spaces: the sequence on the next lines is its value.
            slot.copy_from_slice(b"items:   ");
        }
        self.push_rest(&text, line);
        self.tail = Some(self.index);
        self.whole = true;
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
        self.item = Some(Item {
            text,
            line: line_no,
            dash: column,
        });
        Ok(())
    }

    fn end_item(&mut self, docs: &mut Documents<'_>) -> Result<(), LoadError> {
        let Some(item) = self.item.take() else {
            return Ok(());
        };
        let (Some(source), Some(list)) = (self.source.as_ref(), self.list.as_mut()) else {
            return Ok(());
        };
        let piece = Piece {
            text: item.text,
            origin: Origin::at(item.line, 1),
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
        if let ItemsMode::Pending(held, held_line) =
            std::mem::replace(&mut self.mode, ItemsMode::None)
        {
            self.push_rest(&held, held_line);
        }
        self.end_item(docs)?;
        let piece = Piece {
            text: std::mem::take(&mut self.rest),
            origin: self.origin,
            yaml: true,
        };
        match (self.source, self.list) {
            (Some(source), Some(list)) => list.finish(&piece, &source, self.tail, docs.out),
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

/// Whether a line may define a YAML anchor (`&name`). Anchors stand where a node
/// starts: after the indentation, `- ` and `? ` (and a tag); after a key's `: `; inside a
/// flow collection, after `[`, `{`, `,` or `:`. A `&` inside a scalar (`a && b` in a
/// container's command) is not an anchor and leaves the items cut. Text in a block
/// scalar or a quoted scalar may still match, which only costs the cutting.
fn may_define_anchor(body: &[u8]) -> bool {
    if memchr::memchr(b'&', body).is_none() {
        return false;
    }
    let mut rest = body;
    // Entries and complex keys (`- `, `? `, nested `- - `).
    loop {
        rest = rest.trim_ascii_start();
        match rest {
            [b'-' | b'?', next, ..] if next.is_ascii_whitespace() => rest = &rest[2..],
            _ => break,
        }
    }
    if node_has_anchor(rest) || after_flow_indicator(rest) {
        return true;
    }
    value_after_key(rest).is_some_and(node_has_anchor)
}

/// Whether the node starting at `text` has an anchor: `&name` (after a tag, if any), or
/// an anchor anywhere in a flow collection.
fn node_has_anchor(text: &[u8]) -> bool {
    let mut text = text.trim_ascii_start();
    if text.first() == Some(&b'!') {
        let tag = text
            .iter()
            .position(u8::is_ascii_whitespace)
            .unwrap_or(text.len());
        text = text[tag..].trim_ascii_start();
    }
    match text.first() {
        Some(b'&') => text.get(1).is_some_and(|&b| anchor_char(b)),
        Some(b'[' | b'{') => flow_has_anchor(text),
        _ => false,
    }
}

/// An anchor in a flow collection's text: an `&name` after an indicator or a space.
fn flow_has_anchor(text: &[u8]) -> bool {
    memchr::memchr_iter(b'&', text).any(|i| {
        let before = text[..i].last();
        before.is_some_and(|&b| matches!(b, b'[' | b'{' | b',' | b':') || b.is_ascii_whitespace())
            && text.get(i + 1).is_some_and(|&b| anchor_char(b))
    })
}

/// An `&name` after a flow indicator (`[`, `{`, `,`) and spaces: a flow collection that
/// began on an earlier line.
fn after_flow_indicator(text: &[u8]) -> bool {
    memchr::memchr_iter(b'&', text).any(|i| {
        let before = text[..i].trim_ascii_end().last();
        matches!(before, Some(b'[' | b'{' | b','))
            && text.get(i + 1).is_some_and(|&b| anchor_char(b))
    })
}

/// A character an anchor's name may hold: anything but spaces and flow indicators.
fn anchor_char(b: u8) -> bool {
    !b.is_ascii_whitespace() && !matches!(b, b',' | b'[' | b']' | b'{' | b'}')
}

/// The text after a mapping key's `:` (a `:` followed by a space or the line's end,
/// past a quoted key), or `None` when the line holds no key.
fn value_after_key(text: &[u8]) -> Option<&[u8]> {
    let start = match text.first() {
        Some(&quote @ (b'"' | b'\'')) => closing_quote(text, quote)? + 1,
        _ => 0,
    };
    let tail = &text[start..];
    memchr::memchr_iter(b':', tail)
        .find(|&i| tail.get(i + 1).is_none_or(u8::is_ascii_whitespace))
        .map(|i| &tail[i + 1..])
}

/// Where the quoted scalar opening `text` closes (`\"` escapes in double quotes, `''`
/// in single ones).
fn closing_quote(text: &[u8], quote: u8) -> Option<usize> {
    let mut i = 1;
    while i < text.len() {
        match text[i] {
            b'\\' if quote == b'"' => i += 1,
            b if b == quote => {
                if quote == b'\'' && text.get(i + 1) == Some(&b'\'') {
                    i += 1;
                } else {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::may_define_anchor;

    #[test]
    fn anchors_are_found_where_nodes_start_and_nowhere_else() {
        for line in [
            "&a",
            "labels: &id001",
            "- &x {a: b}",
            "- - name: &n c",
            "? &k key",
            "key: !!map &m",
            "key: {a: &v 1}",
            "key: [1, &v 2]",
            "  b, &v 2]",
            "\"a: b\": &q v",
            "'it''s': &q v",
        ] {
            assert!(may_define_anchor(line.as_bytes()), "{line}");
        }
        for line in [
            "command: cd /x && run",
            "- sh -c 'a && b'",
            "url: http://h/?a=1&b=2",
            "k:{\"type\":\"Ready\"}:",
            "note: fish & chips",
            "\"a: &x\": v",
        ] {
            assert!(!may_define_anchor(line.as_bytes()), "{line}");
        }
    }
}
