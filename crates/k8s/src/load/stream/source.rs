//! The byte source the splitters read: a `BufRead` that keeps the line and column of the
//! next byte, and copies JSON values verbatim by following only brackets and quotes.

use super::LoadError;
use std::io::{BufRead, ErrorKind};

/// The byte source: a `BufRead` with the line and column of the next byte.
pub(super) struct Src<'f, R> {
    r: R,
    pub(super) file: &'f str,
    pub(super) line: usize,
    /// Bytes read since the last newline.
    column: usize,
}

impl<'f, R: BufRead> Src<'f, R> {
    pub(super) fn new(r: R, file: &'f str) -> Self {
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

    pub(super) fn peek(&mut self) -> Result<Option<u8>, LoadError> {
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

    pub(super) fn consume_counted(&mut self, n: usize) -> Result<(), LoadError> {
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
    pub(super) fn position(&self) -> (usize, usize) {
        (self.line, self.column + 1)
    }

    pub(super) fn skip_bom(&mut self) -> Result<(), LoadError> {
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
    pub(super) fn skip_ws(&mut self, copy: Option<&mut Vec<u8>>) -> Result<(), LoadError> {
        self.take_while(copy, |b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    }

    /// Reads one line (through its newline) into `line`; false at the end.
    pub(super) fn read_line(&mut self, line: &mut Vec<u8>) -> Result<bool, LoadError> {
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
    pub(super) fn copy_value(&mut self, out: &mut Vec<u8>) -> Result<(), LoadError> {
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
                        // The indentation after it, eight spaces at a time: pretty-printed
                        // dumps are mostly indentation, and byte by byte it was most of
                        // this loop's time.
                        let mut j = i + 1;
                        while buf.get(j..j + 8).is_some_and(|w| w == b"        ") {
                            j += 8;
                        }
                        while buf.get(j) == Some(&b' ') {
                            j += 1;
                        }
                        i = j;
                        continue;
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

    /// Copies the rest of a container `depth` deep (its closing bracket included).
    pub(super) fn copy_rest(&mut self, out: &mut Vec<u8>, depth: usize) -> Result<(), LoadError> {
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
