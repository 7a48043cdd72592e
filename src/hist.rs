// SPDX-License-Identifier: GPL-2.0-only
//
// Reading figures off bucket counts: percentiles, tail fractions, interval
// differences. Bucket bounds come from policy.h (see policy.rs), never from
// a second definition here.
//
// Convention: a percentile is reported as the LOWER bound of the bucket
// holding it. That keeps p50 <= p99 <= p99.9 <= max true (max is exact and
// at least the lower bound of its own bucket), and a 2^20 ns edge reads as
// exactly 1.05 ms.

use crate::policy;

/// Difference of two monotone counter arrays, tolerant of a counter that
/// wrapped around between the two readings.
pub fn diff(cur: &[u64], prev: &[u64]) -> Vec<u64> {
    cur.iter()
        .zip(prev.iter().chain(std::iter::repeat(&0)))
        .map(|(c, p)| c.wrapping_sub(*p))
        .collect()
}

/// Index of the bucket holding quantile `q` (0 < q <= 1) of `counts`: the
/// first bucket whose cumulative count reaches ceil(q * total). None when
/// the histogram is empty.
pub fn quantile_bucket(counts: &[u64], q: f64) -> Option<usize> {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
    let mut seen = 0u64;
    for (i, c) in counts.iter().enumerate() {
        seen += c;
        if seen >= rank {
            return Some(i);
        }
    }
    Some(counts.len() - 1)
}

/// Largest non-empty bucket.
pub fn max_bucket(counts: &[u64]) -> Option<usize> {
    counts.iter().rposition(|&c| c > 0)
}

/// Mean of a histogram whose bucket index is the value itself; None when
/// the histogram is empty.
pub fn index_mean(counts: &[u64]) -> Option<f64> {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    let sum: f64 = counts
        .iter()
        .enumerate()
        .map(|(i, &c)| i as f64 * c as f64)
        .sum();
    Some(sum / total as f64)
}

/// Latency percentile in ns (lower bound of its bucket).
pub fn lat_quantile_ns(counts: &[u64], q: f64) -> Option<u64> {
    quantile_bucket(counts, q).map(policy::lat_bucket_lower)
}

/// Percentage of waits at or above `ns`, which must be a bucket edge; None
/// when the histogram is empty (no share of nothing).
pub fn lat_pct_at_or_above(counts: &[u64], ns: u64) -> Option<f64> {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    let first = policy::lat_bucket(ns);
    debug_assert_eq!(
        policy::lat_bucket_lower(first),
        ns,
        "{ns} is not a bucket edge"
    );
    let above: u64 = counts[first.min(counts.len())..].iter().sum();
    Some(100.0 * above as f64 / total as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf_intf::soryu_consts_SORYU_NR_LAT_BUCKETS as NR;

    fn hist_with(samples: &[(u64, u64)]) -> Vec<u64> {
        let mut h = vec![0u64; NR as usize];
        for &(ns, n) in samples {
            h[policy::lat_bucket(ns)] += n;
        }
        h
    }

    #[test]
    fn empty_interval_has_no_percentiles() {
        let h = vec![0u64; NR as usize];
        assert_eq!(lat_quantile_ns(&h, 0.5), None);
        assert_eq!(max_bucket(&h), None);
        assert_eq!(lat_pct_at_or_above(&h, 1 << 20), None);
        assert_eq!(index_mean(&[0, 0, 0]), None);
    }

    #[test]
    fn one_sample_is_every_percentile() {
        let h = hist_with(&[(600_000, 1)]);
        let lo = policy::lat_bucket_lower(policy::lat_bucket(600_000));
        assert_eq!(lo, 524_288);
        for q in [0.5, 0.99, 0.999] {
            assert_eq!(lat_quantile_ns(&h, q), Some(lo));
        }
        assert_eq!(lat_pct_at_or_above(&h, 1 << 20), Some(0.0));
    }

    #[test]
    fn percentiles_at_bucket_edges() {
        // 990 waits of 2^14 ns, 9 of exactly 2^20, 1 of exactly 2^24
        let h = hist_with(&[(1 << 14, 990), (1 << 20, 9), (1 << 24, 1)]);
        assert_eq!(lat_quantile_ns(&h, 0.5), Some(1 << 14));
        assert_eq!(lat_quantile_ns(&h, 0.99), Some(1 << 14)); // rank 990
        assert_eq!(lat_quantile_ns(&h, 0.991), Some(1 << 20)); // rank 991
        assert_eq!(lat_quantile_ns(&h, 0.999), Some(1 << 20)); // rank 999
        assert_eq!(lat_quantile_ns(&h, 1.0), Some(1 << 24));
        let pct = |edge| lat_pct_at_or_above(&h, edge).unwrap();
        assert!((pct(1 << 20) - 1.0).abs() < 1e-9);
        assert!((pct(1 << 22) - 0.1).abs() < 1e-9);
        assert!((pct(1 << 24) - 0.1).abs() < 1e-9);
        // one ns below an edge is the bucket below
        let h = hist_with(&[((1 << 20) - 1, 1)]);
        assert_eq!(lat_pct_at_or_above(&h, 1 << 20), Some(0.0));
    }

    #[test]
    fn counter_wrap_between_intervals() {
        let prev = [u64::MAX - 1, 5, 7];
        let cur = [3, 5, 10];
        assert_eq!(diff(&cur, &prev), vec![5, 0, 3]);
    }

    #[test]
    fn index_histogram_mean_and_quantiles() {
        // probes per dispatch: 10 calls with 1 probe, 5 with 3, 1 with 40
        let mut h = vec![0u64; 67];
        h[1] = 10;
        h[3] = 5;
        h[40] = 1;
        assert!((index_mean(&h).unwrap() - 65.0 / 16.0).abs() < 1e-12);
        assert_eq!(quantile_bucket(&h, 0.5), Some(1));
        assert_eq!(quantile_bucket(&h, 0.99), Some(40));
        assert_eq!(max_bucket(&h), Some(40));
    }
}
