//! Where a parser's complaint stands in the file. The streaming loader hands parsers
//! pieces of a file (a list item, a document without its items); a parser reports line
//! and column in its piece, and the splitter, which knows where each of the piece's lines
//! came from, maps them to the file. Positions are taken from the parsers' structured
//! locations (serde_json's `line()`/`column()`, serde-saphyr's `Location`), never read
//! back out of their message text.

use serde_saphyr::{Localizer, Location};
use std::borrow::Cow;

/// Where a piece's lines are in the file: runs of consecutive file lines, and the column
/// of the piece's first byte.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Origin {
    /// Column in the file of the piece's first byte (1-based).
    column: usize,
    /// `(piece line, file line)` where each run of consecutive lines starts, in order.
    runs: Vec<(usize, usize)>,
    /// How many lines the piece has been given (see [`Origin::push_lines`]).
    lines: usize,
}

impl Origin {
    /// A piece that is the file itself.
    pub(crate) fn file() -> Self {
        Origin::at(1, 1)
    }

    /// A piece of consecutive file lines starting at `line`, `column` (1-based).
    pub(crate) fn at(line: usize, column: usize) -> Self {
        Origin {
            column,
            runs: vec![(1, line)],
            lines: 0,
        }
    }

    /// Records that the piece's next `n` lines are file lines `line`, `line + 1`, ...: a
    /// piece assembled from lines that are not all consecutive (a document whose items
    /// were cut out) maps each run back to where it was.
    pub(crate) fn push_lines(&mut self, line: usize, n: usize) {
        let next = self.lines + 1;
        if self.lines == 0 {
            self.runs = vec![(1, line)];
        } else if self.file_line(next) != line {
            self.runs.push((next, line));
        }
        self.lines += n;
    }

    /// The file line of the piece's first line.
    pub(crate) fn first_line(&self) -> usize {
        self.runs.first().map_or(1, |&(_, line)| line)
    }

    /// The file line of the piece's line `line` (1-based).
    pub(crate) fn file_line(&self, line: usize) -> usize {
        let (from, to) = self
            .runs
            .iter()
            .rev()
            .find(|(from, _)| *from <= line)
            .copied()
            .unwrap_or((1, 1));
        to + line.saturating_sub(from)
    }

    /// The file position of the piece's `line`, `column` (1-based): only the first line
    /// is shifted right, by where the piece starts on it.
    pub(crate) fn place(&self, line: usize, column: usize) -> (usize, usize) {
        let column = if line == 1 {
            self.column + column.saturating_sub(1)
        } else {
            column
        };
        (self.file_line(line), column)
    }
}

/// serde-saphyr's English wording with every location mapped through an [`Origin`]: the
/// renderer asks the localizer to write each location, so the message names file lines.
pub(crate) struct PlacedLocalizer<'a> {
    /// Where the parsed piece's lines are.
    pub(crate) origin: &'a Origin,
}

impl PlacedLocalizer<'_> {
    /// `(line, column)` in the file, `None` for an unknown location.
    fn place(&self, loc: Location) -> Option<(usize, usize)> {
        if loc.line() == 0 {
            return None;
        }
        let line = usize::try_from(loc.line()).unwrap_or(usize::MAX);
        let column = usize::try_from(loc.column()).unwrap_or(usize::MAX);
        Some(self.origin.place(line, column))
    }
}

impl Localizer for PlacedLocalizer<'_> {
    fn attach_location<'a>(&self, base: Cow<'a, str>, loc: Location) -> Cow<'a, str> {
        match self.place(loc) {
            Some((line, column)) => Cow::Owned(format!("{base} at line {line}, column {column}")),
            None => base,
        }
    }

    fn alias_defined_at(&self, defined: Location) -> String {
        let (line, column) = self.place(defined).unwrap_or((0, 0));
        format!(" (defined at line {line}, column {column})")
    }

    fn alias_used_at(&self, used: Location) -> String {
        match self.place(used) {
            Some((line, column)) => format!(" (used at line {line}, column {column})"),
            None => String::new(),
        }
    }

    fn value_comes_from_the_anchor(&self, def: Location) -> String {
        let (line, column) = self.place(def).unwrap_or((0, 0));
        format!("  | This value comes indirectly from the anchor at line {line} column {column}:")
    }

    fn snippet_location_prefix(&self, loc: Location) -> String {
        match self.place(loc) {
            Some((line, column)) => format!("line {line} column {column}"),
            None => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Origin;

    #[test]
    fn runs_of_lines_map_back_to_the_file() {
        let mut o = Origin::at(1, 1);
        o.push_lines(4, 2);
        o.push_lines(6, 1);
        o.push_lines(20, 3);
        assert_eq!(o.first_line(), 4);
        assert_eq!(o.place(1, 3), (4, 3));
        assert_eq!(o.place(3, 1), (6, 1));
        assert_eq!(o.place(4, 2), (20, 2));
        assert_eq!(o.place(6, 7), (22, 7));
    }

    #[test]
    fn only_the_first_line_is_shifted_right() {
        let o = Origin::at(3, 10);
        assert_eq!(o.place(1, 5), (3, 14));
        assert_eq!(o.place(2, 5), (4, 5));
    }
}
