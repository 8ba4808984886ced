"""The statistics behind the verdicts: per-problem scores by seed, contrasts between
candidates, intervals that hold both evaluation and training-seed noise, and the best
candidate with those within noise of it.

**Scores.** A run's score at a budget C is the mean of its evaluations within [C / 2, C]
(with one evaluation per doubling: at C / 2 and at C), not its last point alone, the
noisiest point of a curve. `problem_scores` keeps one row per (seed, problem): the unit a
verdict is about is a training run, and the same seed in two arms means the same problem
order and the same evaluation draws, so seeds pair across the arms that share them.

**Contrasts.** A claim is decided by one pre-registered linear contrast of candidates'
scores (first minus second; the every-n advantage's trend in log C on the logit scale; its
value at the largest budget), a `Contrast`: per-(seed, problem) values on each problem set it reads.

**Uncertainty.** The model is a two-way random effect: the contrast's value on seed s and
problem p is ``delta + a_p + b_s + e_sp``, with problems (a_p) and training seeds (b_s,
variance tau^2) both drawn from populations. Over S seeds and P problems its estimate has
variance ``v_problems + tau^2 / S``, where ``v_problems`` is the variance over problems of
the seed-averaged values over P. tau^2 is written as a multiple of the contrast's one-seed
evaluation variance (``tau^2 = ratio * v_one``): the contrast's own ratio (S - 1 degrees
of freedom) moderated by a pool measured on a chapter's multi-seed arms (a `SeedVariance`,
by the two-way ANOVA's method of moments), as much as stays safe for a contrast whose
variance is 4x the pool's (`seed_variance`). A one-seed contrast borrows the pool at the
few degrees of freedom that keep it safe (the findings say from where). The 95% interval
is Student's t on the seed term's degrees of freedom. The pool is assumed independent of
the contrast it moderates (a chapter's own arms pool several contrasts, one of which may
be the one decided: a small share where many are pooled). More seeds only narrow it.

**Optima.** `optimum` returns the best candidate (an n, or a (B_p, n) pair) and the
candidates within noise of it (the best's lead over each is not resolved), each compared
with the best at 95% on its own: "within noise" is generous. These sets are for tables;
claims about where an optimum lies are decided by contrasts (`claims`).

Training statistics logged per update (entropy, response length) compare by Welch's t
interval on the means of four consecutive blocks of each run's last quarter of updates.
Metrics are `isobook.tasks.metrics.Metric` values (``evaluation.metric_name``), whose text
is the run store's column (``val_avg@4``).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy import stats

from isobook.analysis.findings.seed_variance import CONFIDENCE, SeedVariance, spread_dof
from isobook.tasks.metrics import Metric

Z = float(stats.norm.ppf(0.5 + CONFIDENCE / 2))  # 1.96: half-width of a normal 95% interval in standard errors
BLOCKS = 4  # consecutive blocks of updates whose means the Welch interval compares
READ_WINDOW = 2.0  # a run's score at C: the mean of its evaluations within [C / READ_WINDOW, C]
VALIDATION = "validation"  # the problem set of a contrast read from one table of scores
# Correlation of the variance estimates of two neighbouring differences (x1 - x2, x2 - x3) of
# independent candidates: their correlation is -1/2, that of their sample variances its square.
CHAIN_CORRELATION = 0.25


@dataclass(frozen=True)
class Interval:
    """A difference (first minus second) and its 95% interval, a Student t interval on
    `dof` degrees of freedom (infinite: normal)."""

    estimate: float
    low: float
    high: float
    dof: float = np.inf

    @property
    def sign(self) -> int:
        """+1 or -1 when the interval excludes zero, else 0."""
        return 1 if self.low > 0 else -1 if self.high < 0 else 0

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    @property
    def standard_error(self) -> float:
        return self.half_width / float(stats.t.ppf(0.5 + CONFIDENCE / 2, self.dof))

    def p_value(self, null: float = 0.0, side: int = 0) -> float:
        """The p-value of "the difference is `null`" against the difference being above it
        (`side` +1), below it (-1) or either (0, two-sided)."""
        if not np.isfinite(self.half_width):
            return 1.0
        if self.half_width == 0:
            return 0.0 if (self.estimate - null) * (side or 1) > 0 or (side == 0 and self.estimate != null) else 1.0
        t = (self.estimate - null) / self.standard_error
        if side == 0:
            return float(2 * stats.t.sf(abs(t), self.dof))
        return float(stats.t.sf(side * t, self.dof))

    def __str__(self) -> str:
        return f"{self.estimate:+.3f} [{self.low:+.3f}, {self.high:+.3f}]"


@dataclass(frozen=True)
class Optimum:
    """The best candidate among several, and those within noise of it."""

    best: Hashable
    value: float  # the best's score
    tied: tuple  # every candidate not resolved below the best, the best included, in sorted order
    runner_up: Interval | None  # the best's lead over the next candidate; None with one candidate


# ---- per-problem scores ---------------------------------------------------------------------------


def problem_scores(counts: pd.DataFrame, by: Sequence[str], metric: Metric,
                   rollouts: float | None = None) -> pd.DataFrame:
    """Per-problem `metric` of each candidate (the `by` columns, e.g. ``["n"]``) and seed:
    rows (``seed``, ``id``), columns the candidates; NaN where a candidate lacks that
    seed. # [seeds * problems, candidates]

    `counts`: per-problem counts with `by`, ``rollouts``, ``id``, ``correct``, ``samples``
    (and ``seed``; seed 0 without). Each run is read at C, its last evaluation (with
    `rollouts`: its latest within that compute after at least one update; a run whose first
    update costs more is no candidate there), as the mean of its evaluations within
    [C / 2, C] (a base model, at 0, is its own score). Problems some candidate has no score
    for are left out."""
    if not isinstance(metric, Metric):
        raise TypeError(f"metric: {metric!r} is text; allowed: a Metric (evaluation.metric_name), which scores problems")
    table = counts if "seed" in counts else counts.assign(seed=0)
    runs = [*by, "seed"]
    if rollouts is not None:
        table = table[(table["rollouts"] > 0) & (table["rollouts"] <= rollouts * (1 + 1e-9))]
    if table.empty:
        return pd.DataFrame()
    latest = table.groupby(runs)["rollouts"].transform("max")
    table = table[table["rollouts"] >= latest / READ_WINDOW * (1 - 1e-9)]
    correct, samples = table["correct"].to_numpy(), table["samples"].to_numpy()
    score = np.empty(len(table))
    for count in np.unique(samples):
        chosen = samples == count
        score[chosen] = metric.per_problem(correct[chosen], int(count))
    matrix = table.assign(score=score).pivot_table(index=["seed", "id"], columns=list(by), values="score",
                                                   aggfunc="mean")
    problems = matrix.notna().groupby(level="id").any().all(axis=1)  # scored by every candidate on some seed
    return matrix[matrix.index.get_level_values("id").isin(problems[problems].index)]


# ---- contrasts and their intervals ----------------------------------------------------------------


@dataclass(frozen=True)
class Contrast:
    """A linear combination of candidates' per-problem scores: on each problem set (the
    key), its value per seed and problem. # {set: [seeds, problems]}

    Terms on the same set add problem by problem (their covariance kept); terms on
    different sets are independent evaluations. Seeds pair: a contrast holds the seeds
    every term has."""

    terms: Mapping[str, pd.DataFrame] = field(default_factory=dict)

    @classmethod
    def of(cls, scores: pd.DataFrame, weights: Mapping[Hashable, float], problems: str = VALIDATION) -> Contrast:
        """``sum(weight * scores[candidate])`` on the seeds all weighted candidates share."""
        columns = scores[list(weights)]
        combined = sum(w * columns[c] for c, w in weights.items()).dropna()
        return cls({problems: combined.unstack("id").dropna(axis=1)})

    @classmethod
    def difference(cls, scores: pd.DataFrame, first: Hashable, second: Hashable,
                   problems: str = VALIDATION) -> Contrast:
        """`first` minus `second`, problem by problem and seed by seed (zero where they are one)."""
        weights = {first: 1.0}
        weights[second] = weights.get(second, 0.0) - 1.0
        return cls.of(scores, weights, problems)

    def __add__(self, other: Contrast) -> Contrast:
        terms = dict(self.terms)
        for key, values in other.terms.items():
            if key in terms:
                left, right = terms[key].align(values, join="inner")
                terms[key] = left + right
            else:
                terms[key] = values
        return Contrast(terms)

    def __rmul__(self, weight: float) -> Contrast:
        return Contrast({key: weight * values for key, values in self.terms.items()})

    def __neg__(self) -> Contrast:
        return -1.0 * self

    def __sub__(self, other: Contrast) -> Contrast:
        return self + -other

    @property
    def seeds(self) -> list[int]:
        """The seeds every term has."""
        shared = None
        for values in self.terms.values():
            own = set(values.index)
            shared = own if shared is None else shared & own
        return sorted(shared or ())

    def values(self) -> list[np.ndarray]:
        """Each term's values on the shared seeds. # [seeds, problems] each"""
        seeds = self.seeds
        return [values.loc[seeds].to_numpy(float) for values in self.terms.values() if values.shape[1]]

    @property
    def problems(self) -> int:
        """Problems in the smallest term (0 for an empty contrast)."""
        return min((v.shape[1] for v in self.values()), default=0) if self.seeds else 0

    @property
    def estimate(self) -> float:
        return float(sum(v.mean() for v in self.values()))

    def per_seed(self) -> np.ndarray:
        """The contrast's value on each shared seed. # [seeds]"""
        return sum(v.mean(axis=1) for v in self.values())

    def variances(self) -> tuple[float, float]:
        """(v_problems, v_one): the variance over problems of the seed-averaged estimate,
        and the mean over seeds of one seed's evaluation variance (each over problems)."""
        v_problems = v_one = 0.0
        for v in self.values():
            problems = v.shape[1]
            if problems > 1:
                v_problems += float(v.mean(axis=0).var(ddof=1)) / problems
                v_one += float(v.var(axis=1, ddof=1).mean()) / problems
        return v_problems, v_one

    def seed_variance(self) -> float:
        """The variance of this contrast's per-seed values (two or more seeds; NaN with
        one): training-seed variance plus the part of one seed's evaluation noise that does
        not average out over its problems."""
        if len(self.seeds) < 2:
            return float("nan")
        return float(self.per_seed().var(ddof=1))

    def own_ratio(self) -> float:
        """This contrast's seed variance as a multiple of its one-seed evaluation variance
        (`seed_variance` / v_one; NaN with one seed or no evaluation variance)."""
        _, v_one = self.variances()
        return self.seed_variance() / v_one if len(self.seeds) >= 2 and v_one > 0 else float("nan")

    def interval(self, seeds: SeedVariance | None) -> Interval:
        """The 95% interval with problem and training-seed variance (the module's model).
        `seeds`: the pool its own seed variance is moderated by (`SeedVariance.moderated`);
        None uses this contrast's own alone (two or more seeds)."""
        count = len(self.seeds)
        if count == 0 or self.problems == 0:
            raise ValueError("contrast: no seed and problem shared by its candidates")
        estimate = self.estimate
        v_problems, v_one = self.variances()
        if count == 1 and v_one <= 0:  # one seed and no evaluation variance: no pooled ratio can scale it
            return Interval(estimate, -np.inf, np.inf)
        own = self.own_ratio()
        if seeds is None or (count >= 2 and v_one <= 0):  # no evaluation variance to scale a pool by
            if count < 2:
                raise ValueError("seeds: a one-seed contrast needs a pooled SeedVariance to borrow")
            spread, dof = self.seed_variance(), count - 1
        else:
            ratio, dof = seeds.moderated(0.0 if np.isnan(own) else own, count - 1)
            spread = ratio * v_one
        total = v_problems + spread / count
        if total <= 0:
            return Interval(estimate, estimate, estimate)
        # The seed term's degrees of freedom, not Welch-Satterthwaite's blend with the
        # problems' hundreds: with a seed term on one or two degrees of freedom the blend
        # undercovers, the more so for a contrast whose seed variance exceeds its estimate.
        df = dof if spread > 0 else max(self.problems - 1, 1)
        half = float(stats.t.ppf(0.5 + CONFIDENCE / 2, df)) * np.sqrt(total)
        return Interval(estimate, estimate - half, estimate + half, df)


def logit_scores(scores: pd.DataFrame) -> pd.DataFrame:
    """`problem_scores` on the logit scale of each candidate's pass rate, linearised: a
    cell's value is ``logit(m) + (x - m) / (m (1 - m))``, m the candidate's mean over its
    cells, so a column's mean is logit(m) (but where m is held off 0 and 1, below) and a
    contrast's variance is the delta method's. A difference of pass rates shrinks as both approach 1 (or 0) whatever the
    policies' distance; on the logit scale it does not. m is held inside
    [1 / (2 K), 1 - 1 / (2 K)] (K: the column's cells), the usual half-count correction,
    so a column at 0 or 1 stays finite. # [seeds * problems, candidates]"""
    cells = scores.notna().sum().clip(lower=1)
    low = 1 / (2 * cells)
    means = scores.mean().clip(lower=low, upper=1 - low)
    slope = means * (1 - means)
    return (scores - means) / slope + np.log(means / (1 - means))


def ratio_interval(numerator: Contrast, denominator: Contrast, seeds: SeedVariance | None) -> Interval:
    """Fieller's 95% interval for numerator / denominator, two contrasts on the same
    seeds and problems. An interval's variance is a quadratic form in the contrast's
    weights (problem and seed terms alike, moderation included), so Var(a + x b) at
    x = 0, +1, -1 gives Var(a), Var(b) and their covariance; the t quantile is the
    denominator's. Infinite where the denominator is not resolved from zero (the ratio
    is then unbounded)."""
    a, b = numerator.interval(seeds), denominator.interval(seeds)
    plus, minus = (numerator + denominator).interval(seeds), (numerator - denominator).interval(seeds)
    va, vb = a.standard_error ** 2, b.standard_error ** 2
    cov = (plus.standard_error ** 2 - minus.standard_error ** 2) / 4
    q = float(stats.t.ppf(0.5 + CONFIDENCE / 2, b.dof))
    estimate = a.estimate / b.estimate if b.estimate else float("nan")
    # (a - r b)^2 <= q^2 (va - 2 r cov + r^2 vb): a quadratic c2 r^2 + c1 r + c0 <= 0
    c2 = b.estimate ** 2 - q * q * vb
    c1 = -2 * (a.estimate * b.estimate - q * q * cov)
    c0 = a.estimate ** 2 - q * q * va
    discriminant = c1 * c1 - 4 * c2 * c0
    if c2 <= 0 or discriminant < 0:
        return Interval(estimate, -np.inf, np.inf, b.dof)
    roots = sorted(((-c1 - np.sqrt(discriminant)) / (2 * c2), (-c1 + np.sqrt(discriminant)) / (2 * c2)))
    return Interval(estimate, float(roots[0]), float(roots[1]), b.dof)


def pooled_seed_variance(contrasts: Iterable[Contrast], source: str) -> SeedVariance | None:
    """The ratio of seed-to-seed variance to one seed's evaluation variance, pooled over
    `contrasts` with two or more seeds, weighted by their degrees of freedom (seeds - 1),
    with the prior spread of their own ratios (`seed_variance.spread_dof`); None without any."""
    ratios, dofs = [], []
    for contrast in contrasts:
        own = contrast.own_ratio()
        if not np.isnan(own):
            ratios.append(own)
            dofs.append(len(contrast.seeds) - 1)
    if not dofs:
        return None
    return SeedVariance(float(np.average(ratios, weights=dofs)), float(sum(dofs)), len(dofs), source,
                        spread_dof(ratios, dofs), samples=tuple(zip(ratios, dofs)))


def grid_seed_variance(scores_by_budget: Mapping[float, pd.DataFrame], source: str) -> SeedVariance | None:
    """The seed-variance ratio of a grid: at each budget (`problem_scores` there), the
    contrasts of neighbouring candidates (in column order) on the seeds both have, pooled;
    then the mean of the budgets' ratios. The same runs recur at every budget, so the
    degrees of freedom (and the spread) are those of one budget (the largest count), not their sum."""
    found = []
    for scores in scores_by_budget.values():
        columns = list(scores.columns)
        pairs = [Contrast.difference(scores, a, b) for a, b in zip(columns, columns[1:])]
        pooled = pooled_seed_variance(pairs, source)
        if pooled is not None:  # neighbours share a candidate: their estimates correlate (CHAIN_CORRELATION)
            chained = pooled.contrasts
            found.append(replace(pooled, dof=pooled.dof / (1 + 2 * CHAIN_CORRELATION * (chained - 1) / chained)))
    if not found:
        return None
    widest = max(found, key=lambda f: (f.dof, f.contrasts))
    return replace(widest, ratio=float(np.mean([f.ratio for f in found])))


def combined_seed_variance(parts: Iterable[SeedVariance | None], source: str) -> SeedVariance | None:
    """Several pooled ratios as one, weighted by their degrees of freedom, the prior spread
    fitted to all their contrasts together (so designs that disagree widen it)."""
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    dof = sum(p.dof for p in parts)
    samples = tuple(sample for p in parts for sample in p.samples)
    spread = spread_dof(*zip(*samples)) if samples else min(p.spread_dof for p in parts)
    return SeedVariance(sum(p.ratio * p.dof for p in parts) / dof, dof, sum(p.contrasts for p in parts), source,
                        spread, samples=samples)


def resolvable_difference(scores: pd.DataFrame, seeds: SeedVariance | None) -> float:
    """The smallest difference a design resolves: the median half-width of the 95%
    intervals of neighbouring candidates' contrasts in `scores` (`problem_scores` at one
    budget), each on the seeds it has. NaN with fewer than two candidates."""
    columns = list(scores.columns)
    widths = [Contrast.difference(scores, a, b).interval(seeds).half_width for a, b in zip(columns, columns[1:])]
    return float(np.median(widths)) if widths else float("nan")


def optimum(scores: pd.DataFrame, seeds: SeedVariance | None) -> Optimum:
    """The candidate (column) with the highest mean score, and every candidate whose
    deficit to it is within noise (its contrast's interval holding zero)."""
    if scores.shape[1] == 0:
        raise ValueError("scores: no candidate to choose from")
    means = scores.mean()
    best = means.idxmax()
    leads = {c: Contrast.difference(scores, best, c).interval(seeds) for c in scores.columns if c != best}
    tied = sorted([best, *(c for c, lead in leads.items() if lead.sign <= 0)])
    runner_up = leads[max(leads, key=lambda c: means[c])] if leads else None
    return Optimum(best, float(means[best]), tuple(tied), runner_up)


def welch_interval(first: Sequence[float], second: Sequence[float]) -> Interval:
    """Difference of means of two independent samples with Welch's 95% t interval."""
    first, second = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    estimate = float(first.mean() - second.mean())
    if len(first) < 2 or len(second) < 2:
        return Interval(estimate, -np.inf, np.inf)
    if np.ptp(first) == 0 and np.ptp(second) == 0:  # two constants: no noise to put an interval on
        return Interval(estimate, estimate, estimate)
    test = stats.ttest_ind(first, second, equal_var=False)
    low, high = test.confidence_interval(CONFIDENCE)
    return Interval(estimate, float(low), float(high), float(test.df))


# ---- logged training statistics -------------------------------------------------------------------


def last_quarter(history: pd.DataFrame, column: str) -> np.ndarray:
    """`column` over the updates of a run's last quarter (``step`` > 3/4 of its last). # [updates]"""
    trained = history[history["step"] > 0]
    return trained.loc[trained["step"] > 0.75 * trained["step"].max(), column].dropna().to_numpy(float)


def block_means(values: np.ndarray, blocks: int = BLOCKS) -> np.ndarray:
    """Means of `blocks` consecutive, nearly equal parts of `values` (fewer if shorter). # [blocks]"""
    return np.array([part.mean() for part in np.array_split(values, min(blocks, len(values))) if len(part)])


# ---- bandit curves --------------------------------------------------------------------------------


def seeds_dof(curves: pd.DataFrame) -> float:
    """The degrees of freedom behind `seeds_multiplier`: 2 (seeds - 1), or infinite (normal)."""
    if "seeds" not in curves or curves["seeds"].min() < 2:
        return np.inf
    return float(2 * (int(curves["seeds"].min()) - 1))


def seeds_multiplier(curves: pd.DataFrame) -> float:
    """Half-width, in standard errors, of a 95% interval on the difference of two bandit
    curves' means over seeds: Student's t with 2 (seeds - 1) degrees of freedom (two
    independent means of ``seeds`` values each; 2.14 at 8 seeds, 2.04 at 16), or the
    normal 1.96 where `curves` has no ``seeds`` column. Every n trains on the same problems,
    so treating the two means as independent errs on the wide side."""
    dof = seeds_dof(curves)
    return Z if not np.isfinite(dof) else float(stats.t.ppf(0.5 + CONFIDENCE / 2, dof))
