//! Scalars for the YAML-to-JSON converter: how a plain scalar resolves (as serde-saphyr
//! resolves it, or not at all when in doubt), double-quoted escapes, and JSON escaping.

use super::{Bail, Res};

/// What a plain scalar resolves to.
pub(super) enum Plain {
    /// `null`: JSON null.
    Null,
    /// `true` or `false`: the same JSON literal.
    Bool,
    /// A decimal integer that fits in an `i64`: the same JSON number.
    Int,
    /// Anything else that is surely a string: a JSON string.
    Str,
}

/// What a one-line plain scalar resolves to under YAML 1.2's core schema with strict
/// booleans, as serde-saphyr resolves it; bails on anything doubtful (other spellings of
/// null and booleans, floats, octal, hexadecimal, leading zeros, underscores, a leading
/// indicator) and on what would not be one plain scalar (`: `, ` #`, a trailing colon or
/// space).
pub(super) fn classify(s: &str) -> Res<Plain> {
    let b = s.as_bytes();
    let (&first, &last) = (b.first().ok_or(Bail)?, b.last().ok_or(Bail)?);
    let breaks = b
        .windows(2)
        .any(|w| (w[0] == b':' && w[1] == b' ') || (w[0] == b' ' && w[1] == b'#'));
    if last == b' ' || last == b':' || breaks {
        return Err(Bail);
    }
    match first {
        b'a'..=b'z' | b'A'..=b'Z' => match s {
            "null" => Ok(Plain::Null),
            "true" | "false" => Ok(Plain::Bool),
            _ if reserved(s) => Err(Bail),
            // Rust's float syntax takes `inf`, `infinity` and `nan`: keep away from them.
            _ if matches!(first, b'i' | b'I' | b'n' | b'N') && s.parse::<f64>().is_ok() => {
                Err(Bail)
            }
            _ => Ok(Plain::Str),
        },
        b'/' => Ok(Plain::Str),
        // `.` alone or `.name`, not `.5`, `.inf` or `.nan`.
        b'.' => {
            let special = [".inf", ".nan"].iter().any(|x| s.eq_ignore_ascii_case(x));
            if special || s.parse::<f64>().is_ok() {
                return Err(Bail);
            }
            Ok(Plain::Str)
        }
        b'0'..=b'9' => {
            if canonical_int(s) {
                return Ok(Plain::Int);
            }
            let radix = b.len() > 1 && first == b'0' && b[1].is_ascii_alphabetic();
            let digits = b.iter().all(|&c| c.is_ascii_digit() || c == b'_');
            if radix || digits || s.parse::<f64>().is_ok() {
                return Err(Bail);
            }
            Ok(Plain::Str)
        }
        b'-' if canonical_int(&s[1..]) && s != "-0" => Ok(Plain::Int),
        // Flags (`-v`, `--port=80`): neither numbers (`-1.5`, `-.5`) nor `-inf`, `---`.
        b'-' if matches!(b.get(1), Some(b'a'..=b'z' | b'A'..=b'Z' | b'-'))
            && !s.starts_with("---")
            && s.parse::<f64>().is_err() =>
        {
            Ok(Plain::Str)
        }
        _ => Err(Bail),
    }
}

/// `0` or a decimal integer without a leading zero that fits in an `i64`.
fn canonical_int(s: &str) -> bool {
    let b = s.as_bytes();
    match b.first() {
        Some(b'0') => b.len() == 1,
        Some(b'1'..=b'9') => b.iter().all(u8::is_ascii_digit) && s.parse::<i64>().is_ok(),
        _ => false,
    }
}

/// Spellings some YAML reads as null or booleans (YAML 1.1's included): left to the parser.
fn reserved(s: &str) -> bool {
    s.len() <= 5
        && ["null", "true", "false", "yes", "no", "on", "off", "y", "n"]
            .iter()
            .any(|r| s.eq_ignore_ascii_case(r))
}

/// A double-quoted scalar's escape (the text after the backslash): the character and how
/// many bytes the escape takes. YAML's escapes, except line continuations.
pub(super) fn unescape(s: &str) -> Option<(char, usize)> {
    let hex = |n: usize| -> Option<(char, usize)> {
        let digits = s.get(1..=n)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let c = char::from_u32(u32::from_str_radix(digits, 16).ok()?)?;
        Some((c, n + 1))
    };
    let c = match *s.as_bytes().first()? {
        b'0' => '\0',
        b'a' => '\u{7}',
        b'b' => '\u{8}',
        b't' => '\t',
        b'n' => '\n',
        b'v' => '\u{b}',
        b'f' => '\u{c}',
        b'r' => '\r',
        b'e' => '\u{1b}',
        b' ' => ' ',
        b'"' => '"',
        b'/' => '/',
        b'\\' => '\\',
        b'N' => '\u{85}',
        b'_' => '\u{a0}',
        b'L' => '\u{2028}',
        b'P' => '\u{2029}',
        b'x' => return hex(2),
        b'u' => return hex(4),
        b'U' => return hex(8),
        _ => return None,
    };
    Some((c, 1))
}

/// Appends `s` as JSON string content: quotes, backslashes and control characters escaped.
pub(super) fn escape(out: &mut String, s: &str) {
    let b = s.as_bytes();
    let mut start = 0;
    for (i, &c) in b.iter().enumerate() {
        if c == b'"' || c == b'\\' || c < 0x20 {
            out.push_str(&s[start..i]);
            escape_byte(out, c);
            start = i + 1;
        }
    }
    out.push_str(&s[start..]);
}

/// Appends one character as JSON string content, escaped as [`escape`] escapes it (so a
/// key's text is the same whichever way it was written).
pub(super) fn push_char(out: &mut String, c: char) {
    match u8::try_from(c) {
        Ok(b) if b == b'"' || b == b'\\' || b < 0x20 => escape_byte(out, b),
        _ => out.push(c),
    }
}

/// The JSON escape of a quote, a backslash or a control character.
fn escape_byte(out: &mut String, b: u8) {
    match b {
        b'"' => out.push_str("\\\""),
        b'\\' => out.push_str("\\\\"),
        b'\n' => out.push_str("\\n"),
        b'\t' => out.push_str("\\t"),
        b'\r' => out.push_str("\\r"),
        _ => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        }
    }
}
