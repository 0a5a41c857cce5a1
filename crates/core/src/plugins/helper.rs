//! Helpers the plugins share (upstream's `plugins/helper`).

use crate::framework::{MAX_NODE_SCORE, NodeScore};

/// Scales scores to `0..=MAX_NODE_SCORE` by the highest one; `reverse` flips them so the
/// lowest raw score gets the most (`DefaultNormalizeScore`). All zero: stay 0, or all get
/// the maximum when reversed.
pub(crate) fn default_normalize_score(reverse: bool, scores: &mut [NodeScore]) {
    let max = scores.iter().map(|s| s.score).max().unwrap_or(0).max(0);
    if max == 0 {
        if reverse {
            for s in scores {
                s.score = MAX_NODE_SCORE;
            }
        }
        return;
    }
    for s in scores {
        let scaled = MAX_NODE_SCORE * s.score / max;
        s.score = if reverse {
            MAX_NODE_SCORE - scaled
        } else {
            scaled
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::NodeId;

    fn scores(v: &[i64]) -> Vec<NodeScore> {
        v.iter()
            .enumerate()
            .map(|(i, &score)| NodeScore {
                node: NodeId(u32::try_from(i).unwrap_or(0)),
                score,
            })
            .collect()
    }

    // Upstream's normalize_score_test.go table.
    #[test]
    fn upstream_table() {
        let cases: &[(&[i64], bool, &[i64])] = &[
            (&[1, 2, 3, 4], false, &[25, 50, 75, 100]),
            (&[1, 2, 3, 4], true, &[75, 50, 25, 0]),
            (&[1000, 10, 20, 30], false, &[100, 1, 2, 3]),
            (&[1000, 10, 20, 30], true, &[0, 99, 98, 97]),
            (&[1, 1, 1, 1], false, &[100, 100, 100, 100]),
            (&[1, 1, 1, 1], true, &[0, 0, 0, 0]),
            (&[0, 0, 0, 0], false, &[0, 0, 0, 0]),
            (&[0, 0, 0, 0], true, &[100, 100, 100, 100]),
        ];
        for (input, reverse, want) in cases {
            let mut s = scores(input);
            default_normalize_score(*reverse, &mut s);
            let got: Vec<i64> = s.iter().map(|s| s.score).collect();
            assert_eq!(&got, want, "input {input:?} reverse {reverse}");
        }
    }
}
