//! Domain counts summarised for clusters of any size: how many domains, the minimum,
//! maximum and skew, a histogram of the counts, and the most and least loaded domains.
//! A line listing every domain is readable for a few zones, not for 5,000 hostnames.

use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;

/// How many of the most and least loaded domains a summary names.
pub const EXTREMES: usize = 3;

/// The shape of one key's counts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CountSummary {
    /// How many domains.
    pub domains: usize,
    /// The smallest count (0 with no domain).
    pub min: u32,
    /// The largest count (0 with no domain).
    pub max: u32,
    /// `max - min`.
    pub skew: u32,
    /// The matching pods over all domains.
    pub total: u64,
    /// `(count, domains with that count)`, by count; counts are bucketed into ranges
    /// (`low..=high`) when there are more distinct values than [`HISTOGRAM_BUCKETS`].
    pub histogram: Vec<Bucket>,
    /// The most loaded domains, largest count first (ties by name).
    pub most_loaded: Vec<(String, u32)>,
    /// The least loaded domains, smallest count first (ties by name).
    pub least_loaded: Vec<(String, u32)>,
}

/// One bar of a histogram: the domains whose count is in `low..=high`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Bucket {
    /// The smallest count in the bucket.
    pub low: u32,
    /// The largest count in the bucket.
    pub high: u32,
    /// How many domains.
    pub domains: usize,
}

/// At most this many histogram bars.
pub const HISTOGRAM_BUCKETS: usize = 8;

/// Summarises `counts` (domain, matching pods).
pub fn summarize(counts: &[(String, u32)]) -> CountSummary {
    let min = counts.iter().map(|c| c.1).min().unwrap_or(0);
    let max = counts.iter().map(|c| c.1).max().unwrap_or(0);
    let mut by_value: BTreeMap<u32, usize> = BTreeMap::new();
    for (_, n) in counts {
        *by_value.entry(*n).or_default() += 1;
    }
    let histogram = if by_value.len() <= HISTOGRAM_BUCKETS {
        by_value
            .into_iter()
            .map(|(v, domains)| Bucket {
                low: v,
                high: v,
                domains,
            })
            .collect()
    } else {
        // Equal-width ranges over min..=max; empty ranges are left out.
        let span = u64::from(max - min) + 1;
        let width = span.div_ceil(HISTOGRAM_BUCKETS as u64);
        let mut buckets: Vec<Bucket> = Vec::new();
        for (v, domains) in by_value {
            let i = u64::from(v - min) / width;
            let low = u32::try_from(u64::from(min) + i * width).unwrap_or(u32::MAX);
            let high = u32::try_from(u64::from(low) + width - 1)
                .unwrap_or(u32::MAX)
                .min(max);
            match buckets.last_mut() {
                Some(b) if b.low == low => b.domains += domains,
                _ => buckets.push(Bucket { low, high, domains }),
            }
        }
        buckets
    };
    let mut sorted: Vec<&(String, u32)> = counts.iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let most_loaded = sorted.iter().take(EXTREMES).map(|c| (*c).clone()).collect();
    sorted.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    let least_loaded = sorted.iter().take(EXTREMES).map(|c| (*c).clone()).collect();
    CountSummary {
        domains: counts.len(),
        min,
        max,
        skew: max - min,
        total: counts.iter().map(|c| u64::from(c.1)).sum(),
        histogram,
        most_loaded,
        least_loaded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(v: &[u32]) -> Vec<(String, u32)> {
        v.iter()
            .enumerate()
            .map(|(i, n)| (format!("d{i:02}"), *n))
            .collect()
    }

    #[test]
    fn few_values_get_a_bar_each() {
        let s = summarize(&counts(&[0, 1, 1, 0, 0, 2]));
        assert_eq!((s.domains, s.min, s.max, s.skew, s.total), (6, 0, 2, 2, 4));
        let bars: Vec<(u32, u32, usize)> = s
            .histogram
            .iter()
            .map(|b| (b.low, b.high, b.domains))
            .collect();
        assert_eq!(bars, [(0, 0, 3), (1, 1, 2), (2, 2, 1)]);
        assert_eq!(
            s.most_loaded,
            vec![("d05".into(), 2), ("d01".into(), 1), ("d02".into(), 1)]
        );
        assert_eq!(
            s.least_loaded,
            vec![("d00".into(), 0), ("d03".into(), 0), ("d04".into(), 0)]
        );
    }

    #[test]
    fn many_values_are_bucketed_into_ranges() {
        let v: Vec<u32> = (0..100).collect();
        let s = summarize(&counts(&v));
        assert_eq!(s.histogram.len(), HISTOGRAM_BUCKETS);
        assert_eq!(s.histogram.iter().map(|b| b.domains).sum::<usize>(), 100);
        let last = s.histogram.last().map(|b| (b.low, b.high, b.domains));
        assert_eq!(last, Some((91, 99, 9)));
    }
}
