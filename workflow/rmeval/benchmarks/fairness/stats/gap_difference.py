"""Is one model's group gap really smaller than another's? Two models on the same papers (paired by id).

**Scale-free gap.** A model's gap is G = max over ordered pairs of groups (g, h) of a_gh = (mu_g - mu_h) / sigma, sigma
the pooled within-group SD (Table 7's scale-free gap). For two models A and B,

    G_A - G_B = max_j min_l (a_j - b_l),

a max-min of linear functionals of the two models' standardised group differences. The null "equal gaps" has
several shapes (both models fair; the same group pattern; the same gap with another pattern, e.g. mirrored groups)
and the estimator's distribution depends on which: a paired permutation test (swapping the two models' rewards
within a paper) tests exchangeability, not equal gaps, and a percentile bootstrap of the gap difference is biased
where a model is fair (the range of noisy means is biased upwards; Andrews 2000), as the issue's simulation showed.

The interval and the test here are an intersection-union construction (Berger 1982) with generalised moment
selection (Andrews & Soares 2010):

- The lower bound of G_A - G_B is L = max over j in J_A of min over l of (a_j - b_l - c_A se_jl). G_A - G_B >= L holds
  when the one-sided bound of the pair (j, l*) holds for the true maximiser j* of A and every l (it suffices that
  it holds for B's maximiser l*: the intersection over l needs no multiplicity correction), and the union over j
  is Bonferroni-corrected: c_A = the t quantile (df = N - k) at 1 - alpha / (2 |J_A|). J_A holds A's functionals
  that may be its maximum: those whose studentised shortfall max_j' (a_j' - a_j) / se is at most
  kappa_N = sqrt(ln N) (Andrews & Soares' BIC-type choice); a functional far below A's maximum cannot be the
  maximiser and would only widen c. The upper bound is the same for G_B - G_A.
- The test of "equal gaps" is the inverted interval: p = min(1, 2 min(p_up, p_down)), p_up = |J_A| min over j of the
  t tail of min over l of (a_j - b_l) / se_jl: p < alpha exactly when the interval at 1 - alpha leaves 0.
- Standard errors come from the two models' influence functions on the same papers (group means and the pooled
  variance; the delta method for the ratio), so the correlation between models, within papers, is accounted for.

Measured by seeded simulation (perf/compare_simulation.py; CONTRIBUTING "Which model is better"): size below 5 %
in all three null shapes (it is conservative where every group is near the maximum), coverage >= 95 %, and at
3 groups x 500 papers with one model fair and the other's gap 0.3 SD, power 54 % (groups 0 / 0.15 / 0.3 SD) to
74 % (0 / 0 / 0.3).

**Cohen's f** (the second effect measure; f^2 = eta^2 / (1 - eta^2), f = sqrt(SS_between / SS_within)): each model's
interval inverts the noncentral F of the one-way ANOVA in lambda = f^2 N (Steiger & Fouladi 1997, Steiger 2004),
exact under normal, equal-variance groups and valid at f = 0; the difference's interval is the conservative
combination of the two models' intervals at 1 - alpha / 2 each (Bonferroni): [L_A - U_B, U_A - L_B]. Its p-value
is the smallest alpha at which that interval leaves 0 (the crossing of the two models' noncentral-F tails).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from rmeval.paired_difference import Interval, undefined


@lru_cache(maxsize=4096)
def _t_isf(tail: float, df: int) -> float:
    """The t quantile with upper tail `tail` (scipy.special: precise for tiny tails, no scipy.stats import)."""
    from scipy.special import stdtrit

    return float(-stdtrit(df, tail))


def _t_sf(value: np.ndarray, df: int) -> np.ndarray:
    from scipy.special import stdtr

    return np.asarray(stdtr(df, -np.asarray(value, dtype=np.float64)), dtype=np.float64)


@dataclass(frozen=True)
class GapModel:
    """One model's standardised group differences on a set of papers, with what their influence functions are made
    of (one value per paper, in the order given, so that two models on the same papers give their covariance).

    functionals: a_gh = (mean_g - mean_h) / pooled SD for every ordered pair g != h (k (k - 1) of them, `first` and
    `second` their groups). A paper i of group g moves a_gh by (e_gh(g) m_i) / sd - a_gh v_i / (2 sd^2), with
    e_gh(g) = [g is the pair's first] - [g is its second], m_i its group mean's influence and v_i the pooled
    variance's: the covariances are per-group sums (`covariance`), never an N x k(k-1) matrix."""

    gap: float
    functionals: np.ndarray
    first: np.ndarray
    second: np.ndarray
    labels: np.ndarray
    mean_influence: np.ndarray
    variance_influence: np.ndarray
    sd: float
    n: int
    groups: int
    note: str = ""

    @property
    def df(self) -> int:
        return self.n - self.groups

    @property
    def defined(self) -> bool:
        return math.isfinite(self.gap)

    @cached_property
    def own_covariance(self) -> np.ndarray:
        """Cov(a_j, a_j') of its own functionals (computed once: every pair with another model needs it)."""
        return covariance(self, self)

    @cached_property
    def contrasts(self) -> np.ndarray:
        """e_gh(g): one row per functional, one column per group."""
        matrix = np.zeros((self.functionals.size, self.groups))
        rows = np.arange(self.functionals.size)
        matrix[rows, self.first] = 1.0
        matrix[rows, self.second] = -1.0
        return matrix


def covariance(a: GapModel, b: GapModel) -> np.ndarray:
    """Cov(a_j, b_l) of two models' functionals on the same papers: sum over papers of the products of their
    influences, written as per-group sums (O(N) and a k x k product: no large matrix, no threaded BLAS call)."""
    k = a.groups
    mean_mean = np.bincount(a.labels, weights=a.mean_influence * b.mean_influence, minlength=k)
    mean_var = np.bincount(a.labels, weights=a.mean_influence * b.variance_influence, minlength=k)
    var_mean = np.bincount(a.labels, weights=a.variance_influence * b.mean_influence, minlength=k)
    var_var = float(np.dot(a.variance_influence, b.variance_influence))
    left, right = a.contrasts, b.contrasts
    return ((left * mean_mean) @ right.T / (a.sd * b.sd)
            - np.outer(left @ mean_var, b.functionals) / (2.0 * a.sd * b.sd * b.sd)
            - np.outer(a.functionals, right @ var_mean) / (2.0 * a.sd * a.sd * b.sd)
            + np.outer(a.functionals, b.functionals) * var_var / (4.0 * a.sd * a.sd * b.sd * b.sd))


def gap_model(rewards: np.ndarray, labels: np.ndarray, k: int) -> GapModel:
    """The functionals and influence functions of one model's rewards (labels 0..k-1, every group present)."""
    rewards = np.asarray(rewards, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    n_total = rewards.size
    sizes = np.bincount(labels, minlength=k).astype(np.float64)
    if (sizes < 2).any():
        group = int(np.flatnonzero(sizes < 2)[0])
        return _undefined_gap(labels, k, f"group {group + 1} has fewer than 2 papers scored by both models")
    means = np.bincount(labels, weights=rewards, minlength=k) / sizes
    residuals = rewards - means[labels]
    squares = residuals * residuals
    variance = float(squares.sum()) / (n_total - k)
    if not variance > 0:
        return _undefined_gap(labels, k, "its rewards are constant within every group: no pooled SD")
    first, second = (np.array(index) for index in zip(*[(g, h) for g in range(k) for h in range(k) if g != h],
                                                      strict=True))
    functionals = (means[first] - means[second]) / math.sqrt(variance)
    # a group mean's influence, with the n / (n - 1) correction of an unbiased variance
    mean_influence = residuals / sizes[labels] * np.sqrt(sizes / (sizes - 1))[labels]
    variance_influence = (squares - squares.mean()) / (n_total - k)
    return GapModel(float(functionals.max()), functionals, first, second, labels, mean_influence, variance_influence,
                    math.sqrt(variance), n_total, k)


def _undefined_gap(labels: np.ndarray, k: int, note: str) -> GapModel:
    empty = np.empty(0)
    return GapModel(math.nan, empty, empty.astype(np.int64), empty.astype(np.int64), labels, empty, empty, math.nan,
                    labels.size, k, note)


def _selected(functionals: np.ndarray, cov: np.ndarray, kappa: float) -> np.ndarray:
    """Moment selection: the functionals whose studentised shortfall from the others is at most kappa."""
    shortfall = functionals[None, :] - functionals[:, None]  # [j, j'] = a_j' - a_j
    variances = np.diag(cov)
    spread = variances[None, :] + variances[:, None] - 2.0 * cov
    with np.errstate(divide="ignore", invalid="ignore"):
        studentised = np.where(spread > 0, shortfall / np.sqrt(np.maximum(spread, 0.0)),
                               np.where(shortfall > 0, np.inf, 0.0))
    return studentised.max(axis=1) <= kappa


def _studentised(values: np.ndarray, errors: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(errors > 0, values / errors, np.sign(values) * np.inf)


def kappa(n: int) -> float:
    """The moment-selection threshold sqrt(ln N) (Andrews & Soares 2010, their BIC-type choice)."""
    return math.sqrt(math.log(max(n, 3)))


def gap_difference(a: GapModel, b: GapModel) -> tuple[Interval, float]:
    """The interval (at any alpha) of G_A - G_B and the p-value of equal gaps (module docstring). Both models must be
    computed on the same papers, in the same order."""
    if not (a.defined and b.defined):
        return undefined(), math.nan
    cov_a, cov_b, cross = a.own_covariance, b.own_covariance, covariance(a, b)
    threshold = kappa(a.n)
    chosen_a, chosen_b = _selected(a.functionals, cov_a, threshold), _selected(b.functionals, cov_b, threshold)
    contrasts = a.functionals[:, None] - b.functionals[None, :]  # [j, l] = a_j - b_l
    errors = np.sqrt(np.maximum(np.diag(cov_a)[:, None] + np.diag(cov_b)[None, :] - 2.0 * cross, 0.0))
    df = a.df
    n_a, n_b = int(chosen_a.sum()), int(chosen_b.sum())

    def bounds(alpha: float) -> tuple[float, float]:
        c_a, c_b = _t_isf(alpha / (2 * n_a), df), _t_isf(alpha / (2 * n_b), df)
        lower = float((contrasts - c_a * errors)[chosen_a].min(axis=1).max())
        upper = float((contrasts + c_b * errors)[:, chosen_b].max(axis=0).min())
        return lower, upper

    up = n_a * float(_t_sf(_studentised(contrasts, errors)[chosen_a].min(axis=1), df).min())
    down = n_b * float(_t_sf(_studentised(-contrasts, errors)[:, chosen_b].min(axis=0), df).min())
    estimate = a.gap - b.gap
    p_value = 1.0 if estimate == 0.0 and not (errors > 0).any() else min(1.0, 2.0 * min(up, down))
    return Interval(estimate, bounds), p_value


# ----------------------------------------------------------------------------- Cohen's f
@dataclass(frozen=True)
class FModel:
    """One model's one-way ANOVA on the paired papers: Cohen's f = sqrt(SS_between / SS_within) and its F test."""

    f: float
    statistic: float  # F
    df_between: int
    df_within: int
    n: int
    note: str = ""

    @property
    def defined(self) -> bool:
        return math.isfinite(self.f) and math.isfinite(self.statistic)


def f_model(rewards: np.ndarray, labels: np.ndarray, k: int) -> FModel:
    rewards = np.asarray(rewards, dtype=np.float64)
    n_total = rewards.size
    sizes = np.bincount(labels, minlength=k).astype(np.float64)
    means = np.bincount(labels, weights=rewards, minlength=k) / np.maximum(sizes, 1)
    within = float(((rewards - means[labels]) ** 2).sum())
    between = float((sizes * (means - rewards.mean()) ** 2).sum())
    if not within > 0 or n_total <= k:
        return FModel(math.nan, math.nan, k - 1, n_total - k, n_total, "no within-group variance: f is undefined")
    statistic = (between / (k - 1)) / (within / (n_total - k))
    return FModel(math.sqrt(between / within), statistic, k - 1, n_total - k, n_total)


def noncentral_f_tail(statistic: float, df_between: int, df_within: int, noncentrality: float, upper: bool) -> float:
    """P(F >= statistic) (upper) or P(F <= statistic) of the noncentral F(df_between, df_within, noncentrality):
    the Poisson(noncentrality / 2) mixture of central F tails, each a regularised incomplete beta (Johnson, Kotz &
    Balakrishnan 1995, ch. 30), summed over the Poisson mass (a complement is never 1 - a near-1 number, so far
    tails keep their precision); equal to scipy.stats.ncf (tests/test_compare_fairness.py), which is wrong at
    noncentrality 0 and costs a scipy.stats import."""
    from scipy.special import betainc, gammaln

    if statistic <= 0.0:
        return 1.0 if upper else 0.0
    y = df_between * statistic / (df_between * statistic + df_within)
    half = noncentrality / 2.0
    if half <= 0.0:
        terms, weights = np.array([0.0]), np.array([1.0])
    else:
        spread = 12.0 * math.sqrt(half) + 12.0
        terms = np.arange(max(0.0, math.floor(half - spread)), math.ceil(half + spread) + 1.0)
        weights = np.exp(terms * math.log(half) - half - gammaln(terms + 1.0))
    a = df_between / 2.0 + terms
    b = df_within / 2.0
    tails = betainc(b, a, 1.0 - y) if upper else betainc(a, b, y)
    return float(min(1.0, max(0.0, float(np.dot(weights, tails)))))


def _tail(model: FModel, noncentrality: float, upper: bool) -> float:
    return noncentral_f_tail(model.statistic, model.df_between, model.df_within, noncentrality, upper)


def _noncentrality(model: FModel, tail: float, upper: bool) -> float:
    """The interval's bound of lambda: the lower one where P(F >= observed) = tail, the upper one where
    P(F <= observed) = tail; 0 where even lambda = 0 leaves that probability on the wrong side of tail (bisection
    in lambda: both probabilities move monotonically with it)."""
    # P(F >= observed) rises with lambda, P(F <= observed) falls: `excess` rises from its value at 0 either way
    def excess(noncentrality: float) -> float:
        value = _tail(model, noncentrality, upper=not upper)
        return value - tail if not upper else tail - value

    if excess(0.0) >= 0.0:
        return 0.0
    low, high = 0.0, max(10.0, 2.0 * model.df_between * model.statistic)
    while excess(high) < 0.0:
        low, high = high, high * 2.0
    while high - low > 1e-7 * max(1.0, high):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if excess(middle) < 0.0 else (low, middle)
    return 0.5 * (low + high)


def f_interval(model: FModel) -> Interval:
    """The model's f with the noncentral-F interval of sqrt(lambda / N) (equal tails)."""
    if not model.defined:
        return undefined()

    return Interval(model.f, lambda alpha: _f_bounds(model, alpha))


@lru_cache(maxsize=4096)
def _f_bounds(model: FModel, alpha: float) -> tuple[float, float]:
    """A model's f interval at one level, computed once (every pair with another model asks for it)."""
    low = _noncentrality(model, alpha / 2, upper=False)
    high = _noncentrality(model, alpha / 2, upper=True)
    return math.sqrt(low / model.n), math.sqrt(high / model.n)


def f_difference(a: FModel, b: FModel) -> tuple[Interval, float]:
    """f_A - f_B: each model's interval at 1 - alpha / 2, combined conservatively; its inversion p-value."""
    if not (a.defined and b.defined):
        return undefined(), math.nan
    interval_a, interval_b = f_interval(a), f_interval(b)

    def bounds(alpha: float) -> tuple[float, float]:
        low_a, high_a = interval_a.bounds(alpha / 2)
        low_b, high_b = interval_b.bounds(alpha / 2)
        return low_a - high_b, high_a - low_b

    crossing = min(_crossing(a, b), _crossing(b, a))
    return Interval(a.f - b.f, bounds), min(1.0, 4.0 * crossing)


def _crossing(larger: FModel, smaller: FModel) -> float:
    """min over f0 of max(P(F_larger >= its F | f0), P(F_smaller <= its F | f0)): below tau exactly when larger's
    lower bound at one-sided tau exceeds smaller's upper bound (bisection on f0: the first rises, the second falls)."""
    def tails(f0: float) -> tuple[float, float]:
        return _tail(larger, f0 * f0 * larger.n, upper=True), _tail(smaller, f0 * f0 * smaller.n, upper=False)

    low, high = 0.0, max(larger.f, smaller.f, 1e-6) * 4.0 + 1.0
    rise, fall = tails(low)
    if rise >= fall:
        return rise
    for _ in range(40):
        middle = 0.5 * (low + high)
        rise, fall = tails(middle)
        if rise < fall:
            low = middle
        else:
            high = middle
    return max(tails(0.5 * (low + high)))
