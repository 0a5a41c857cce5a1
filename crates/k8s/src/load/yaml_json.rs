//! A strict converter from the block YAML that `kubectl get -o yaml` (Go's `yaml.Marshal`)
//! prints to JSON text, so that a YAML dump's items are typed by serde_json, several times
//! faster than by a YAML parser.
//!
//! It reads only a subset whose meaning it knows exactly: block mappings and sequences
//! indented with spaces (`- key: value` entries included), one-line plain, single- and
//! double-quoted scalars, the empty `{}` and `[]`, literal block scalars (`|`, `|-`, `|+`)
//! and whole-line comments. Anything else (flow collections with content, anchors,
//! aliases, tags, folded or multi-line scalars, tabs, duplicate keys, a plain scalar whose
//! type YAML 1.2 resolves doubtfully) makes it answer `None`, and the caller reads the text
//! with serde-saphyr instead: whenever it answers, the JSON means what serde-saphyr (with
//! the loader's options: YAML 1.2 core schema, strict booleans) reads from the YAML.

use memchr::{memchr, memchr2};
use scalar::{Plain, classify, escape, push_char, unescape};

mod scalar;

/// Conversion stopped: the text is outside the subset (or not YAML).
struct Bail;

/// A step of the conversion.
type Res<T> = Result<T, Bail>;

/// The deepest nesting converted (serde-saphyr's own budget stops at 64, serde_json at 128).
const MAX_DEPTH: usize = 40;

/// The longest key converted, in bytes (YAML ends an implicit key at 1024 characters).
const MAX_KEY: usize = 512;

/// The JSON text of a YAML document that is one block mapping (a list item's text, its
/// dash blanked out), or `None` when the text uses anything outside the subset.
pub(super) fn to_json(text: &str) -> Option<String> {
    if !clean(text) {
        return None;
    }
    let mut c = Conv {
        text,
        pos: 0,
        out: String::with_capacity(text.len() + text.len() / 4),
        keys: Vec::new(),
        depth: 0,
    };
    c.document().ok()?;
    Some(c.out)
}

/// No tab, carriage return, other control character, byte-order mark or line separator:
/// characters YAML treats specially, or whose handling the subset does not follow.
fn clean(text: &str) -> bool {
    let special = |c: char| {
        matches!(
            c,
            '\u{80}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
        )
    };
    text.bytes().all(|b| (b >= 0x20 && b != 0x7f) || b == b'\n')
        && (text.is_ascii() || !text.chars().any(special))
}

/// One line that has content: its indentation, its text after that (without the line
/// break), and where the next line starts.
#[derive(Clone, Copy)]
struct Line<'a> {
    indent: usize,
    body: &'a str,
    next: usize,
}

/// How a literal block scalar ends (its chomping indicator).
#[derive(Clone, Copy)]
enum Chomp {
    /// `|`: one final line break.
    Clip,
    /// `|-`: no final line break.
    Strip,
    /// `|+`: the final line break and the empty lines after it.
    Keep,
}

/// The conversion's state.
struct Conv<'a> {
    text: &'a str,
    /// Where the next unread line starts.
    pos: usize,
    out: String,
    /// The keys of the open mappings, as ranges of `out` (their escaped text): a key is
    /// compared with those of its mapping, so a duplicate bails.
    keys: Vec<(usize, usize)>,
    depth: usize,
}

impl<'a> Conv<'a> {
    /// The whole text: one block mapping, nothing after it.
    fn document(&mut self) -> Res<()> {
        let first = self.peek()?.ok_or(Bail)?;
        if is_entry(first.body) {
            return Err(Bail);
        }
        self.pos = first.next;
        self.mapping(first.indent, first.body)?;
        match self.peek()? {
            None => Ok(()),
            Some(_) => Err(Bail),
        }
    }

    /// The next line with content, passing over blank and comment lines (but not
    /// consuming it); a document marker bails.
    fn peek(&mut self) -> Res<Option<Line<'a>>> {
        let text = self.text;
        loop {
            if self.pos >= text.len() {
                return Ok(None);
            }
            let rest = &text[self.pos..];
            let end = memchr(b'\n', rest.as_bytes()).unwrap_or(rest.len());
            let next = self.pos + (end + 1).min(rest.len());
            let line = &rest[..end];
            let body = line.trim_start_matches(' ');
            if body.is_empty() || body.starts_with('#') {
                self.pos = next;
                continue;
            }
            let indent = line.len() - body.len();
            if indent == 0 && is_marker(body) {
                return Err(Bail);
            }
            return Ok(Some(Line { indent, body, next }));
        }
    }

    /// One more level of nesting.
    fn enter(&mut self) -> Res<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Bail);
        }
        Ok(())
    }

    /// A block mapping whose keys stand at `indent`; `body` is its first entry's text.
    fn mapping(&mut self, indent: usize, mut body: &'a str) -> Res<()> {
        self.enter()?;
        self.out.push('{');
        let mark = self.keys.len();
        loop {
            let rest = self.key(body, mark)?;
            self.map_value(indent, rest)?;
            match self.peek()? {
                Some(l) if l.indent == indent && !is_entry(l.body) => {
                    self.pos = l.next;
                    self.out.push(',');
                    body = l.body;
                }
                // More indented: a scalar's continuation, or bad indentation.
                Some(l) if l.indent >= indent => return Err(Bail),
                _ => break,
            }
        }
        self.keys.truncate(mark);
        self.out.push('}');
        self.depth -= 1;
        Ok(())
    }

    /// Writes the key that starts `body` (and the colon), checks it against the
    /// mapping's other keys (from `mark`), and returns what follows the colon.
    fn key(&mut self, body: &'a str, mark: usize) -> Res<&'a str> {
        let start = self.out.len();
        let rest = match body.as_bytes()[0] {
            b'"' => &body[self.double(body)?..],
            b'\'' => &body[self.single(body)?..],
            _ => {
                let end = key_end(body).ok_or(Bail)?;
                let key = &body[..end];
                if !matches!(classify(key)?, Plain::Str) {
                    // Keys are strings: a null, boolean or number key is left to the parser.
                    return Err(Bail);
                }
                self.out.push('"');
                escape(&mut self.out, key);
                self.out.push('"');
                &body[end..]
            }
        };
        if body.len() - rest.len() > MAX_KEY {
            return Err(Bail);
        }
        let rest = rest.strip_prefix(':').ok_or(Bail)?;
        if !(rest.is_empty() || rest.starts_with(' ')) {
            return Err(Bail);
        }
        let key = &self.out[start..];
        if self.keys[mark..]
            .iter()
            .any(|&(s, e)| &self.out[s..e] == key)
        {
            return Err(Bail);
        }
        self.keys.push((start, self.out.len()));
        self.out.push(':');
        Ok(rest)
    }

    /// A mapping value: `rest` is what follows the colon of a key at `indent`.
    fn map_value(&mut self, indent: usize, rest: &'a str) -> Res<()> {
        if let Some(value) = rest.strip_prefix(' ') {
            return self.inline(value, indent);
        }
        // Nothing on the key's line: a nested block, a sequence at the key's own
        // indentation (kubectl's layout), or null.
        match self.peek()? {
            Some(l) if l.indent > indent => {
                self.pos = l.next;
                if is_entry(l.body) {
                    self.sequence(l.indent, l.body)
                } else {
                    self.mapping(l.indent, l.body)
                }
            }
            Some(l) if l.indent == indent && is_entry(l.body) => {
                self.pos = l.next;
                self.sequence(l.indent, l.body)
            }
            _ => {
                self.out.push_str("null");
                Ok(())
            }
        }
    }

    /// A block sequence whose dashes stand at `indent`; `body` is its first entry's line.
    fn sequence(&mut self, indent: usize, mut body: &'a str) -> Res<()> {
        self.enter()?;
        self.out.push('[');
        loop {
            // `- ` and the entry; `-` alone (content on the next lines) or more spaces bail.
            let content = body.strip_prefix("- ").ok_or(Bail)?;
            if content.is_empty() || content.starts_with(' ') {
                return Err(Bail);
            }
            self.entry(indent, content)?;
            match self.peek()? {
                Some(l) if l.indent == indent && is_entry(l.body) => {
                    self.pos = l.next;
                    self.out.push(',');
                    body = l.body;
                }
                Some(l) if l.indent > indent => return Err(Bail),
                _ => break,
            }
        }
        self.out.push(']');
        self.depth -= 1;
        Ok(())
    }

    /// One sequence entry's content (after `- `, its dash at `indent`): a compact mapping
    /// (`- key: value`, its keys two columns right of the dash) or a scalar.
    fn entry(&mut self, indent: usize, content: &'a str) -> Res<()> {
        let is_key = match content.as_bytes()[0] {
            b'"' | b'\'' => {
                let end = quoted_len(content).ok_or(Bail)?;
                content[end..].starts_with(':')
            }
            _ => key_end(content).is_some(),
        };
        if is_key {
            self.mapping(indent + 2, content)
        } else {
            self.inline(content, indent)
        }
    }

    /// A value on its key's or dash's line; a block scalar's lines must be indented more
    /// than `parent`.
    fn inline(&mut self, value: &'a str, parent: usize) -> Res<()> {
        match value.as_bytes().first() {
            None | Some(b' ') => Err(Bail),
            Some(b'"') if self.double(value)? == value.len() => Ok(()),
            Some(b'\'') if self.single(value)? == value.len() => Ok(()),
            Some(b'"' | b'\'') => Err(Bail),
            Some(b'|') => {
                let chomp = match value {
                    "|" => Chomp::Clip,
                    "|-" => Chomp::Strip,
                    "|+" => Chomp::Keep,
                    _ => return Err(Bail),
                };
                self.literal(parent, chomp)
            }
            Some(b'{' | b'[') => match value {
                "{}" | "[]" => {
                    self.out.push_str(value);
                    Ok(())
                }
                _ => Err(Bail),
            },
            Some(_) => {
                match classify(value)? {
                    Plain::Null | Plain::Bool | Plain::Int => self.out.push_str(value),
                    Plain::Str => {
                        self.out.push('"');
                        escape(&mut self.out, value);
                        self.out.push('"');
                    }
                }
                Ok(())
            }
        }
    }

    /// A double-quoted scalar at the start of `s`, on one line, written as a JSON string;
    /// returns its length (closing quote included).
    fn double(&mut self, s: &str) -> Res<usize> {
        self.out.push('"');
        let b = s.as_bytes();
        let mut i = 1;
        loop {
            let at = i + memchr2(b'"', b'\\', &b[i..]).ok_or(Bail)?;
            escape(&mut self.out, &s[i..at]);
            if b[at] == b'"' {
                self.out.push('"');
                return Ok(at + 1);
            }
            let (c, len) = unescape(&s[at + 1..]).ok_or(Bail)?;
            push_char(&mut self.out, c);
            i = at + 1 + len;
        }
    }

    /// A single-quoted scalar at the start of `s`, on one line, written as a JSON string;
    /// returns its length (closing quote included).
    fn single(&mut self, s: &str) -> Res<usize> {
        self.out.push('"');
        let b = s.as_bytes();
        let mut i = 1;
        loop {
            let at = i + memchr(b'\'', &b[i..]).ok_or(Bail)?;
            escape(&mut self.out, &s[i..at]);
            if b.get(at + 1) == Some(&b'\'') {
                self.out.push('\'');
                i = at + 2;
            } else {
                self.out.push('"');
                return Ok(at + 1);
            }
        }
    }

    /// A literal block scalar's lines (after its `|` header line), indented more than
    /// `parent`, written as a JSON string.
    fn literal(&mut self, parent: usize, chomp: Chomp) -> Res<()> {
        let text = self.text;
        self.out.push('"');
        let mut indent: Option<usize> = None;
        // The most spaces on an empty line before the first content line.
        let mut leading = 0;
        let mut content = false;
        // Empty lines since the last content line (or the start).
        let mut breaks = 0;
        while self.pos < text.len() {
            let rest = &text[self.pos..];
            let newline = memchr(b'\n', rest.as_bytes());
            let line = &rest[..newline.unwrap_or(rest.len())];
            let spaces = line.len() - line.trim_start_matches(' ').len();
            let blank = spaces == line.len();
            let within = match indent {
                Some(d) => spaces >= d && !(blank && spaces == d),
                None if blank => false,
                None => {
                    if spaces <= parent {
                        break;
                    }
                    if spaces < leading {
                        return Err(Bail);
                    }
                    indent = Some(spaces);
                    true
                }
            };
            if blank && !within {
                let Some(n) = newline else {
                    // Spaces at the end of the input: no line break to keep.
                    self.pos = text.len();
                    break;
                };
                leading = leading.max(spaces);
                breaks += 1;
                self.pos += n + 1;
                continue;
            }
            if !within {
                break;
            }
            // A content line: it must end with a line break (clipping at the end of the
            // input is left to the parser).
            let n = newline.ok_or(Bail)?;
            if content {
                self.out.push_str("\\n");
            }
            for _ in 0..breaks {
                self.out.push_str("\\n");
            }
            breaks = 0;
            escape(&mut self.out, &line[indent.unwrap_or(0)..]);
            content = true;
            self.pos += n + 1;
        }
        if !content {
            return Err(Bail);
        }
        match chomp {
            Chomp::Clip => self.out.push_str("\\n"),
            Chomp::Strip => {}
            Chomp::Keep => {
                for _ in 0..=breaks {
                    self.out.push_str("\\n");
                }
            }
        }
        self.out.push('"');
        Ok(())
    }
}

/// A block sequence entry: `-` then a space or the line's end.
fn is_entry(body: &str) -> bool {
    body == "-" || body.starts_with("- ")
}

/// `---` or `...` (then a space or the line's end): a document marker at column 0.
fn is_marker(body: &str) -> bool {
    (body.starts_with("---") || body.starts_with("..."))
        && body.as_bytes().get(3).is_none_or(|&b| b == b' ')
}

/// Where a plain key ends: its first `:` followed by a space or the line's end.
fn key_end(body: &str) -> Option<usize> {
    let b = body.as_bytes();
    let mut from = 0;
    while let Some(i) = memchr(b':', &b[from..]) {
        let at = from + i;
        if b.get(at + 1).is_none_or(|&c| c == b' ') {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// The length of the quoted scalar at the start of `s` (closing quote included), when it
/// closes on this line.
fn quoted_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 1;
    if b[0] == b'"' {
        loop {
            let at = i + memchr2(b'"', b'\\', b.get(i..)?)?;
            if b[at] == b'"' {
                return Some(at + 1);
            }
            i = at + 2;
        }
    }
    loop {
        let at = i + memchr(b'\'', &b[i..])?;
        if b.get(at + 1) != Some(&b'\'') {
            return Some(at + 1);
        }
        i = at + 2;
    }
}

#[cfg(test)]
mod differential;
#[cfg(test)]
mod tests;
