// SPDX-License-Identifier: GPL-2.0-only
//
// The statistics of compare: the exact sign test, the median ratio, Holm's
// adjustment for testing many figures at once, and two checks of the sign
// test's assumption that pairs are independent (a lag-1 autocorrelation of
// the paired differences, and a sign test over blocks of consecutive
// pairs).

/// The significance level compare marks results against.
pub const ALPHA: f64 = 0.05;

/// ln(e^x + e^y) without overflow.
fn ln_add_exp(x: f64, y: f64) -> f64 {
    let (hi, lo) = if x > y { (x, y) } else { (y, x) };
    hi + (lo - hi).exp().ln_1p()
}

/// ln of sum_{i<=k} C(n, i), summed in log space: ln C(n, i) grows by
/// ln((n-i+1)/i) per step.
fn ln_binomial_head(n: u64, k: u64) -> f64 {
    let (mut ln_c, mut acc) = (0.0f64, 0.0f64);
    for i in 1..=k {
        ln_c += ((n - i + 1) as f64).ln() - (i as f64).ln();
        acc = ln_add_exp(acc, ln_c);
    }
    acc
}

/// Exact two-sided sign test of a split of `a` against `b` (ties already
/// dropped): p = min(1, 2 * P(X <= min(a, b))) for X ~ Binomial(a + b, 1/2).
pub fn sign_test_p(a: u64, b: u64) -> f64 {
    let n = a + b;
    if n == 0 {
        return 1.0;
    }
    let ln_p = std::f64::consts::LN_2 * (1.0 - n as f64) + ln_binomial_head(n, a.min(b));
    ln_p.exp().min(1.0)
}

/// Exact one-sided sign test: P(X <= k) for X ~ Binomial(n, 1/2), the
/// chance of `k` or fewer pairs going one way when each goes either way
/// with even odds.
pub fn one_sided_p(k: u64, n: u64) -> f64 {
    if k >= n {
        return 1.0;
    }
    (ln_binomial_head(n, k) - std::f64::consts::LN_2 * n as f64)
        .exp()
        .min(1.0)
}

/// A non-inferiority sign test: is B worse than A by a factor of at most
/// 1 + margin? A pair is within when B beats A made worse by the margin
/// (lower-is-better: b < a (1 + m); higher-is-better: b (1 + m) > a),
/// beyond when it loses to it, a tie when equal. Under the hypothesis to
/// reject, that B is worse by the margin or more (the median of B/A, or of
/// A/B for higher-is-better, at least 1 + m), a pair is within with odds
/// of at most one half, so p = P(X >= within) = P(X <= beyond).
#[derive(Debug, Clone, PartialEq)]
pub struct MarginTest {
    /// The margin as a fraction (0.05 for 5%).
    pub margin: f64,
    pub within: usize,
    pub beyond: usize,
    pub ties: usize,
    pub p: f64,
    /// p adjusted for the figures tested with it (holm()); p until then.
    pub holm_p: f64,
}

pub fn margin_test(pairs: &[(f64, f64)], higher_better: bool, margin: f64) -> MarginTest {
    let worse = 1.0 + margin;
    let (mut within, mut beyond) = (0, 0);
    for &(a, b) in pairs {
        // A made worse by the margin, against B: vote() says which is better
        let (shifted_a, b) = if higher_better {
            (a, b * worse)
        } else {
            (a * worse, b)
        };
        match vote(shifted_a, b, higher_better) {
            -1 => within += 1,
            1 => beyond += 1,
            _ => {}
        }
    }
    let p = one_sided_p(beyond as u64, (within + beyond) as u64);
    MarginTest {
        margin,
        within,
        beyond,
        ties: pairs.len() - within - beyond,
        p,
        holm_p: p,
    }
}

/// Holm's step-down adjustment of `ps`, the p of m tests made together:
/// sorted ascending, the i-th smallest (from 0) is multiplied by m - i,
/// kept at least as large as the one before and at most 1. The chance that
/// any adjusted p of tests whose null hypothesis holds falls below alpha is
/// at most alpha, whatever the dependence between the tests. In the order
/// given.
pub fn holm(ps: &[f64]) -> Vec<f64> {
    let m = ps.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| ps[i].total_cmp(&ps[j]));
    let mut out = vec![0.0; m];
    let mut floor = 0.0f64;
    for (rank, &i) in order.iter().enumerate() {
        floor = floor.max(((m - rank) as f64 * ps[i]).min(1.0));
        out[i] = floor;
    }
    out
}

/// The smallest p any split of `n` untied pairs can give: 2 / 2^n.
pub fn min_p(n: u64) -> f64 {
    sign_test_p(0, n)
}

/// The fewest untied pairs with which p < ALPHA can be reached at all.
pub fn pairs_needed() -> u64 {
    (1..).find(|&n| min_p(n) < ALPHA).unwrap_or(u64::MAX)
}

/// The ratio A / B of one pair: 0/0 = 1, x/0 = +inf, 0/x = 0.
pub fn ratio(a: f64, b: f64) -> f64 {
    match (a == 0.0, b == 0.0) {
        (true, true) => 1.0,
        (false, true) => f64::INFINITY,
        _ => a / b,
    }
}

/// Median of the pairs' ratios A / B, every pair counted. A pair with one
/// side 0 gives 0 or +inf and counts like any other: swapping A and B
/// turns every ratio r into 1/r and the median m into 1/m. With an even
/// count the median is the geometric mean of the two middle ratios; None
/// when those are 0 and +inf (or there are no pairs).
pub fn median_ratio(pairs: &[(f64, f64)]) -> Option<f64> {
    let mut r: Vec<f64> = pairs.iter().map(|&(a, b)| ratio(a, b)).collect();
    if r.is_empty() {
        return None;
    }
    r.sort_by(f64::total_cmp);
    let mid = r.len() / 2;
    if r.len() % 2 == 1 {
        return Some(r[mid]);
    }
    let (lo, hi) = (r[mid - 1], r[mid]);
    match (lo == 0.0, hi.is_infinite()) {
        (true, true) => None,
        (true, false) => Some(0.0),
        (false, true) => Some(f64::INFINITY),
        _ => Some((lo * hi).sqrt()),
    }
}

/// Ranks 1..=n of the values, ties sharing their mean rank.
fn ranks(v: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by(|&i, &j| v[i].total_cmp(&v[j]));
    let mut r = vec![0.0; v.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && v[order[j + 1]] == v[order[i]] {
            j += 1;
        }
        let mean = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            r[k] = mean;
        }
        i = j + 1;
    }
    r
}

/// Lag-1 autocorrelation of the ranks of the differences A - B, taken over
/// consecutive pairs within each round (`rounds`, each in interval order)
/// and pooled. Ranks keep one huge difference from deciding it. Near 0 for
/// independent pairs; clearly positive when neighbouring intervals move
/// together (a drift, a burst spanning intervals), which makes the sign
/// test's p too small. None with fewer than 3 pairs or no spread.
pub fn lag1(rounds: &[Vec<f64>]) -> Option<f64> {
    let all: Vec<f64> = rounds.iter().flatten().copied().collect();
    if all.len() < 3 {
        return None;
    }
    let r = ranks(&all);
    let mean = r.iter().sum::<f64>() / r.len() as f64;
    let var: f64 = r.iter().map(|x| (x - mean) * (x - mean)).sum();
    if var == 0.0 {
        return None;
    }
    let mut cov = 0.0;
    let mut start = 0;
    for round in rounds {
        let rr = &r[start..start + round.len()];
        cov += rr
            .windows(2)
            .map(|w| (w[0] - mean) * (w[1] - mean))
            .sum::<f64>();
        start += round.len();
    }
    Some(cov / var)
}

/// Whether a lag-1 autocorrelation of `n` values is above what independent
/// pairs would show by chance (about 2 standard errors, 2 / sqrt(n)).
pub fn lag1_high(r: Option<f64>, n: usize) -> bool {
    r.is_some_and(|r| n > 0 && r > 2.0 / (n as f64).sqrt())
}

/// A sign test over blocks: each round's pairs (in interval order) are cut
/// into non-overlapping blocks of `k` consecutive pairs, a trailing partial
/// block dropped; a block goes to the side that won more of its pairs (a
/// tie when equal), and the blocks are sign-tested. Blocks further apart
/// than the dependence between intervals reaches are close to independent,
/// so a block p much larger than the pairs' p says the latter was too
/// optimistic.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockTest {
    pub k: usize,
    pub blocks: usize,
    pub a_better: usize,
    pub b_better: usize,
    pub p: f64,
}

/// `votes`: per round, per pair in interval order: +1 A better, -1 B
/// better, 0 tie.
pub fn block_test(votes: &[Vec<i8>], k: usize) -> BlockTest {
    let (mut a, mut b, mut blocks) = (0, 0, 0);
    for round in votes {
        for block in round.chunks_exact(k.max(1)) {
            blocks += 1;
            match block.iter().map(|&v| v as i64).sum::<i64>() {
                s if s > 0 => a += 1,
                s if s < 0 => b += 1,
                _ => {}
            }
        }
    }
    BlockTest {
        k,
        blocks,
        a_better: a,
        b_better: b,
        p: sign_test_p(a as u64, b as u64),
    }
}

/// One row of the result table.
#[derive(Debug, Clone, PartialEq)]
pub struct Tally {
    /// Pairs compared (a_better + b_better + ties).
    pub pairs: usize,
    pub a_better: usize,
    pub b_better: usize,
    pub ties: usize,
    /// Pairs left out: the figure unknown (null) or missing on a side.
    pub skipped: usize,
    pub p: f64,
    /// p adjusted for the figures tested with it (holm()); p until then.
    pub holm_p: f64,
    /// The smallest p this many untied pairs could give.
    pub min_p: f64,
    pub median_ratio: Option<f64>,
    pub lag1: Option<f64>,
    pub block: Option<BlockTest>,
    /// With --margin: whether B is within the margin of A.
    pub margin: Option<MarginTest>,
}

impl Tally {
    /// p < ALPHA is out of reach with this few untied pairs.
    pub fn unreachable(&self) -> bool {
        self.min_p >= ALPHA
    }

    pub fn lag1_high(&self) -> bool {
        lag1_high(self.lag1, self.pairs)
    }
}

/// +1 when A is better, -1 when B is, 0 for a tie.
pub fn vote(a: f64, b: f64, higher_better: bool) -> i8 {
    let better = |x: f64, y: f64| if higher_better { x > y } else { x < y };
    if better(a, b) {
        1
    } else if better(b, a) {
        -1
    } else {
        0
    }
}

/// Tally the pairs of one or more rounds (each in interval order).
pub fn tally(
    rounds: &[Vec<(f64, f64)>],
    higher_better: bool,
    skipped: usize,
    block: Option<usize>,
) -> Tally {
    let votes: Vec<Vec<i8>> = rounds
        .iter()
        .map(|r| r.iter().map(|&(a, b)| vote(a, b, higher_better)).collect())
        .collect();
    let flat: Vec<i8> = votes.iter().flatten().copied().collect();
    let a_better = flat.iter().filter(|&&v| v > 0).count();
    let b_better = flat.iter().filter(|&&v| v < 0).count();
    let pairs: Vec<(f64, f64)> = rounds.iter().flatten().copied().collect();
    let diffs: Vec<Vec<f64>> = rounds
        .iter()
        .map(|r| r.iter().map(|&(a, b)| a - b).collect())
        .collect();
    let p = sign_test_p(a_better as u64, b_better as u64);
    Tally {
        pairs: flat.len(),
        a_better,
        b_better,
        ties: flat.len() - a_better - b_better,
        skipped,
        p,
        holm_p: p,
        min_p: min_p((a_better + b_better) as u64),
        median_ratio: median_ratio(&pairs),
        lag1: lag1(&diffs),
        block: block.map(|k| block_test(&votes, k)),
        margin: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64) -> bool {
        (got - want).abs() <= 1e-9 * want.abs()
    }

    // Expected values are exact binomial sums, 2 * sum_{i<=k} C(n,i) / 2^n,
    // worked out with integer arithmetic (Python's math.comb and Fraction).
    #[test]
    fn sign_test_matches_exact_binomial_sums() {
        // n=10, k=0: 2 / 1024.
        assert_eq!(sign_test_p(0, 10), 0.001953125);
        assert_eq!(sign_test_p(10, 0), 0.001953125);
        // n=5, k=0: 2 / 32.
        assert!(close(sign_test_p(5, 0), 0.0625));
        // n=34 split 31/3: 2 * 6580 / 2^34 (docs: about 7.7e-07).
        assert!(close(sign_test_p(31, 3), 7.660128176212311e-07));
        // n=68 split 63/5: 2 * 11290976 / 2^68 (about 7.7e-14).
        assert!(close(sign_test_p(63, 5), 7.651062942926057e-14));
        // The splits in docs/knob-clear-bitmap.md: p = 0.058, 0.024, 0.008.
        assert!(close(sign_test_p(23, 11), 0.05761267291381955));
        assert!(close(sign_test_p(24, 10), 0.024306510109454393));
        assert!(close(sign_test_p(46, 23), 0.007620521855025697));
        // An even split of an odd n sums past one half: clamped to 1.
        assert_eq!(sign_test_p(4, 5), 1.0);
    }

    #[test]
    fn sign_test_without_pairs_is_one() {
        assert_eq!(sign_test_p(0, 0), 1.0);
    }

    #[test]
    fn sign_test_stays_finite_for_large_n() {
        assert!((sign_test_p(5000, 5000) - 1.0).abs() < 1e-9);
        // n=10000 split 6000/4000: ln p = -204.37594012433692 (p ~ 1.74e-89).
        let p = sign_test_p(6000, 4000);
        assert!(p > 0.0 && p.is_finite());
        assert!((p.ln() - -204.37594012433692).abs() < 1e-6);
    }

    // Before: --min-pairs defaulted to 5, where even 5 to 0 gives
    // p = 0.0625: no result could ever reach 0.05.
    #[test]
    fn six_untied_pairs_are_the_fewest_that_can_reach_five_percent() {
        assert_eq!(min_p(5), 0.0625);
        assert_eq!(min_p(6), 0.03125);
        assert_eq!(pairs_needed(), 6);
        let t = tally(&[vec![(1.0, 2.0); 5]], false, 0, None);
        assert!(t.unreachable() && t.p == 0.0625);
        let t = tally(&[vec![(1.0, 2.0); 6]], false, 0, None);
        assert!(!t.unreachable() && t.p < ALPHA);
        // ties do not count toward n
        let mut pairs = vec![(1.0, 2.0); 5];
        pairs.extend([(3.0, 3.0); 4]);
        assert!(tally(&[pairs], false, 0, None).unreachable());
    }

    #[test]
    fn tally_drops_ties_and_follows_direction() {
        let pairs = vec![(1.0, 2.0), (1.0, 2.0), (3.0, 3.0), (3.0, 3.0), (5.0, 4.0)];
        let lower = tally(std::slice::from_ref(&pairs), false, 0, None);
        assert_eq!(
            (lower.pairs, lower.a_better, lower.b_better, lower.ties),
            (5, 2, 1, 2)
        );
        // n = 3 (ties dropped), k = 1: 2 * (1 + 3) / 8, clamped to 1.
        assert_eq!(lower.p, 1.0);
        let higher = tally(&[pairs], true, 0, None);
        assert_eq!((higher.a_better, higher.b_better, higher.ties), (1, 2, 2));
    }

    // Before: pairs with B = 0 were left out and pairs with A = 0 kept (as
    // ratio 0), so here, where B won three of five pairs, the median
    // ratio printed 0.000, as if A were far lower.
    #[test]
    fn median_ratio_treats_zeros_on_both_sides_alike() {
        let pairs = [(1.0, 0.0), (2.0, 0.0), (3.0, 0.0), (0.0, 1.0), (0.0, 1.0)];
        let t = tally(&[pairs.to_vec()], false, 0, None);
        assert_eq!((t.a_better, t.b_better), (2, 3));
        assert_eq!(t.median_ratio, Some(f64::INFINITY));
        // swapping the sides inverts the median
        let swapped: Vec<_> = pairs.iter().map(|&(a, b)| (b, a)).collect();
        assert_eq!(median_ratio(&swapped), Some(0.0));
        let pairs = [(1.0, 2.0), (4.0, 2.0), (3.0, 1.0), (2.0, 8.0)];
        let m = median_ratio(&pairs).unwrap();
        let swapped: Vec<_> = pairs.iter().map(|&(a, b)| (b, a)).collect();
        assert!((m * median_ratio(&swapped).unwrap() - 1.0).abs() < 1e-12);
        // 0/0 is 1; even counts take the geometric mean of the middle two
        assert_eq!(
            median_ratio(&[(0.0, 0.0), (2.0, 0.0), (1.0, 2.0)]),
            Some(1.0)
        );
        assert_eq!(median_ratio(&[(1.0, 2.0), (2.0, 1.0)]), Some(1.0));
        assert_eq!(median_ratio(&[(0.0, 1.0), (1.0, 0.0)]), None);
        assert_eq!(median_ratio(&[]), None);
    }

    #[test]
    fn lag1_sees_a_drift_and_not_an_alternation() {
        // a slow drift: neighbours alike
        let drift: Vec<f64> = (0..20).map(|i| i as f64).collect();
        let r = lag1(&[drift]).unwrap();
        assert!(r > 0.8 && lag1_high(Some(r), 20), "{r}");
        // alternating: neighbours unlike
        let alt: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        let r = lag1(&[alt]).unwrap();
        assert!(r < -0.8 && !lag1_high(Some(r), 20), "{r}");
        // rounds are not neighbours of each other
        let r = lag1(&[vec![0.0, 0.0, 0.0], vec![1.0, 1.0, 1.0]]).unwrap();
        assert!(r > 0.5, "{r}");
        assert_eq!(lag1(&[vec![1.0, 1.0, 1.0]]), None);
        assert_eq!(lag1(&[vec![1.0, 2.0]]), None);
    }

    #[test]
    fn block_test_votes_per_block() {
        // 7 pairs in blocks of 3: the 7th is dropped
        let votes = vec![vec![1, 1, -1, -1, -1, 1, 1]];
        let b = block_test(&votes, 3);
        assert_eq!((b.blocks, b.a_better, b.b_better), (2, 1, 1));
        assert_eq!(b.p, 1.0);
        // 12 straight A wins in two rounds: 4 blocks of 3, all A
        let b = block_test(&[vec![1; 6], vec![1; 6]], 3);
        assert_eq!((b.blocks, b.a_better), (4, 4));
        assert!(close(b.p, 0.125));
    }

    #[test]
    fn one_sided_p_is_the_binomial_tail() {
        // P(X <= k), X ~ Binomial(n, 1/2): 1/1024, 11/1024, 56/1024
        assert!(close(one_sided_p(0, 10), 1.0 / 1024.0));
        assert!(close(one_sided_p(1, 10), 11.0 / 1024.0));
        assert!(close(one_sided_p(2, 10), 56.0 / 1024.0));
        assert_eq!(one_sided_p(0, 0), 1.0);
        assert_eq!(one_sided_p(10, 10), 1.0);
        // half the two-sided p when the split is lopsided
        assert!(close(one_sided_p(1, 10), sign_test_p(1, 9) / 2.0));
    }

    // Worked by hand: p = 0.01, 0.04, 0.03, 0.5 sorted 0.01, 0.03, 0.04,
    // 0.5; times 4, 3, 2, 1: 0.04, 0.09, 0.08 (raised to 0.09), 0.5.
    #[test]
    fn holm_steps_down_and_keeps_the_order() {
        let h = holm(&[0.01, 0.04, 0.03, 0.5]);
        let want = [0.04, 0.09, 0.09, 0.5];
        for (g, w) in h.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{h:?}");
        }
        // never below the raw p, never above 1; one test is itself
        assert_eq!(holm(&[0.3, 0.9]), vec![0.6, 0.9]);
        assert_eq!(holm(&[0.02]), vec![0.02]);
        assert_eq!(holm(&[0.6, 0.7]), vec![1.0, 1.0]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn margin_test_counts_against_a_made_worse() {
        // lower is better: B 3% slower than A in every pair is within 5%
        let pairs: Vec<(f64, f64)> = (1..=8).map(|i| (i as f64, i as f64 * 1.03)).collect();
        let m = margin_test(&pairs, false, 0.05);
        assert_eq!((m.within, m.beyond, m.ties), (8, 0, 0));
        assert!(close(m.p, 1.0 / 256.0));
        // ... and beyond 2%
        let m = margin_test(&pairs, false, 0.02);
        assert_eq!((m.within, m.beyond), (0, 8));
        assert_eq!(m.p, 1.0);
        // higher is better: B 3% below A is within 5%, 10% below is not
        let m = margin_test(&[(100.0, 97.0), (100.0, 90.0)], true, 0.05);
        assert_eq!((m.within, m.beyond), (1, 1));
        // exactly on the margin: a tie, left out of the test
        let m = margin_test(&[(100.0, 105.0), (100.0, 101.0)], false, 0.05);
        assert_eq!((m.within, m.beyond, m.ties), (1, 0, 1));
        assert!(close(m.p, 0.5));
    }
}
