//! Domain count summaries ([`CountSummary`], made by `topospread-jobs`) as text: the
//! headline, the histogram and the extremes, and every domain on one line.

use std::fmt::Write as _;
use topospread_jobs::report::summary::CountSummary;

/// Every domain on one line: `zoneA=2 zoneB=1`.
pub fn every_domain(counts: &[(String, u32)]) -> String {
    counts
        .iter()
        .map(|(d, n)| format!("{d}={n}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A [`CountSummary`] as text.
pub trait SummaryText {
    /// `5000 domains, 300 pods, min 0, max 1, skew 1`.
    fn headline(&self) -> String;

    /// `0: 4700, 1: 300` (count or range: domains).
    fn histogram_line(&self) -> String;

    /// The headline, the histogram and the extremes, one per line, each indented by
    /// `indent`.
    fn lines(&self, indent: &str) -> String;
}

impl SummaryText for CountSummary {
    fn headline(&self) -> String {
        format!(
            "{}, {}, min {}, max {}, skew {}",
            plural(self.domains, "domain", "domains"),
            plural(
                usize::try_from(self.total).unwrap_or(usize::MAX),
                "pod",
                "pods"
            ),
            self.min,
            self.max,
            self.skew
        )
    }

    fn histogram_line(&self) -> String {
        self.histogram
            .iter()
            .map(|b| {
                if b.low == b.high {
                    format!("{}: {}", b.low, b.domains)
                } else {
                    format!("{}-{}: {}", b.low, b.high, b.domains)
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn lines(&self, indent: &str) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{indent}{}", self.headline());
        if self.domains == 0 {
            return out;
        }
        let _ = writeln!(
            out,
            "{indent}domains per pod count: {}",
            self.histogram_line()
        );
        let _ = writeln!(
            out,
            "{indent}most loaded: {}",
            every_domain(&self.most_loaded)
        );
        let _ = writeln!(
            out,
            "{indent}least loaded: {}",
            every_domain(&self.least_loaded)
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use topospread_jobs::report::summary::summarize;

    fn counts(v: &[u32]) -> Vec<(String, u32)> {
        v.iter()
            .enumerate()
            .map(|(i, n)| (format!("d{i:02}"), *n))
            .collect()
    }

    /// The histogram as text: one bar per value when few, ranges when many (the
    /// numbers themselves are jobs' summary's, tested there).
    #[test]
    fn the_histogram_line_names_values_or_ranges() {
        let s = summarize(&counts(&[0, 1, 1, 0, 0, 2]));
        assert_eq!(s.histogram_line(), "0: 3, 1: 2, 2: 1");
        let v: Vec<u32> = (0..100).collect();
        assert_eq!(
            summarize(&counts(&v)).histogram_line(),
            "0-12: 13, 13-25: 13, 26-38: 13, 39-51: 13, 52-64: 13, 65-77: 13, 78-90: 13, 91-99: 9"
        );
    }

    #[test]
    fn no_domain_is_a_headline_alone() {
        let s = summarize(&[]);
        assert_eq!(s.lines("  "), "  0 domains, 0 pods, min 0, max 0, skew 0\n");
    }
}
