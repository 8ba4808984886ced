"""The statistics behind the verdicts: per-problem scores, paired-bootstrap and Welch
intervals on differences, and the best candidate with those within noise of it.

**Uncertainty.** Every run scores the same validation problems with the same random
numbers, so two policies compare problem by problem: a difference of set-level scores
is the mean of per-problem differences, and its 95% interval comes from a paired
bootstrap over problems (`scipy.stats.bootstrap`, ``paired=True``, percentile method,
2,000 resamples, a fixed seed so that a rebuild gives the same intervals). The interval
holds the evaluation noise (which problems, which samples) of the trained policies
compared; it does not hold the training noise of a seed (another seed trains another
policy). With one seed a verdict says "these runs differ", not yet "this setting beats
that one"; where a grid has several seeds, each problem's score is averaged over them
first, which shrinks training noise but still leaves it out of the interval. Training
statistics logged per update (entropy, response length) compare by Welch's t interval on
the means of four consecutive blocks of each run's last quarter of updates (neighbouring
updates are correlated; block means much less so).

**Optima.** `optimum` returns the best candidate (an n, or a (B_p, n) pair) and the
candidates within noise of it (the best's lead over each is not resolved). Claims about
where an optimum lies ("n* grows with C", "hard saturates at a smaller n* than easy")
compare these sets: reproduced when every n in one lies beyond every n in the other.
Each candidate is compared with the best at 95% on its own, without a correction for
multiple comparisons: "within noise" is generous (a candidate is kept unless its deficit
is resolved), "reproduced" asks every comparison to be resolved.

Metrics are `isobook.tasks.metrics.Metric` values (``evaluation.metric_name``), whose text is
the run store's column (``val_avg@4``).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from isobook.tasks.metrics import Metric

CONFIDENCE = 0.95
RESAMPLES = 2000
Z = float(stats.norm.ppf(0.5 + CONFIDENCE / 2))  # 1.96: half-width of a normal 95% interval in standard errors
BLOCKS = 4  # consecutive blocks of updates whose means the Welch interval compares


@dataclass(frozen=True)
class Interval:
    """A difference (first minus second) and its 95% interval."""

    estimate: float
    low: float
    high: float

    @property
    def sign(self) -> int:
        """+1 or -1 when the interval excludes zero, else 0."""
        return 1 if self.low > 0 else -1 if self.high < 0 else 0

    def __str__(self) -> str:
        return f"{self.estimate:+.3f} [{self.low:+.3f}, {self.high:+.3f}]"


@dataclass(frozen=True)
class Optimum:
    """The best candidate among several, and those within noise of it."""

    best: Hashable
    value: float  # the best's score
    tied: tuple  # every candidate not resolved below the best, the best included, in sorted order
    runner_up: Interval | None  # the best's lead over the next candidate; None with one candidate


# ---- per-problem scores and intervals -------------------------------------------------------------


def problem_scores(counts: pd.DataFrame, by: Sequence[str], metric: Metric,
                   rollouts: float | None = None) -> pd.DataFrame:
    """Per-problem `metric` of each candidate (the `by` columns, e.g. ``["n"]``): rows are
    problems (``id``) scored by every candidate, columns the candidates, each problem's
    score averaged over seeds. # [problems, candidates]

    `counts`: per-problem counts with `by`, ``rollouts``, ``id``, ``correct``, ``samples``
    (and ``seed``). Each run is read at its last evaluation, or with `rollouts` at its
    latest evaluation within that compute after at least one update (a run whose first
    update costs more is no candidate there)."""
    if not isinstance(metric, Metric):
        raise TypeError(f"metric: {metric!r} is text; allowed: a Metric (evaluation.metric_name), which scores problems")
    runs = [*by, "seed"] if "seed" in counts else list(by)
    table = counts
    if rollouts is not None:
        table = counts[(counts["rollouts"] > 0) & (counts["rollouts"] <= rollouts * (1 + 1e-9))]
    if table.empty:
        return pd.DataFrame()
    latest = table.groupby(runs)["rollouts"].transform("max")
    table = table[table["rollouts"] == latest]
    correct, samples = table["correct"].to_numpy(), table["samples"].to_numpy()
    score = np.empty(len(table))
    for count in np.unique(samples):
        chosen = samples == count
        score[chosen] = metric.per_problem(correct[chosen], int(count))
    scores = table.assign(score=score)
    matrix = scores.pivot_table(index="id", columns=list(by), values="score", aggfunc="mean")
    return matrix.dropna()


def paired_interval(first: np.ndarray, second: np.ndarray, seed: int = 0) -> Interval:
    """Mean of `first - second` over paired problems, with its 95% paired-bootstrap interval."""
    first, second = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    difference = first - second
    estimate = float(difference.mean())
    if np.ptp(difference) == 0:  # every resample gives the same mean
        return Interval(estimate, estimate, estimate)
    result = stats.bootstrap((first, second), lambda a, b, axis: np.mean(a - b, axis=axis), paired=True,
                             vectorized=True, n_resamples=RESAMPLES, confidence_level=CONFIDENCE,
                             method="percentile", rng=np.random.default_rng(seed))
    return Interval(estimate, float(result.confidence_interval.low), float(result.confidence_interval.high))


def welch_interval(first: Sequence[float], second: Sequence[float]) -> Interval:
    """Difference of means of two independent samples with Welch's 95% t interval."""
    first, second = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    estimate = float(first.mean() - second.mean())
    if len(first) < 2 or len(second) < 2:
        return Interval(estimate, -np.inf, np.inf)
    if np.ptp(first) == 0 and np.ptp(second) == 0:  # two constants: no noise to put an interval on
        return Interval(estimate, estimate, estimate)
    low, high = stats.ttest_ind(first, second, equal_var=False).confidence_interval(CONFIDENCE)
    return Interval(estimate, float(low), float(high))


def optimum(scores: pd.DataFrame) -> Optimum:
    """The candidate (column) with the highest mean score, and every candidate whose
    deficit to it is within noise (paired interval of best minus it holding zero)."""
    if scores.shape[1] == 0:
        raise ValueError("scores: no candidate to choose from")
    means = scores.mean()
    best = means.idxmax()
    leads = {c: paired_interval(scores[best], scores[c]) for c in scores.columns if c != best}
    tied = sorted([best, *(c for c, lead in leads.items() if lead.sign <= 0)])
    runner_up = leads[max(leads, key=lambda c: means[c])] if leads else None
    return Optimum(best, float(means[best]), tuple(tied), runner_up)


# ---- logged training statistics -------------------------------------------------------------------


def last_quarter(history: pd.DataFrame, column: str) -> np.ndarray:
    """`column` over the updates of a run's last quarter (``step`` > 3/4 of its last). # [updates]"""
    trained = history[history["step"] > 0]
    return trained.loc[trained["step"] > 0.75 * trained["step"].max(), column].dropna().to_numpy(float)


def block_means(values: np.ndarray, blocks: int = BLOCKS) -> np.ndarray:
    """Means of `blocks` consecutive, nearly equal parts of `values` (fewer if shorter). # [blocks]"""
    return np.array([part.mean() for part in np.array_split(values, min(blocks, len(values))) if len(part)])


# ---- bandit curves --------------------------------------------------------------------------------


def seeds_multiplier(curves: pd.DataFrame) -> float:
    """Half-width, in standard errors, of a 95% interval on the difference of two bandit
    curves' means over seeds: Student's t with 2 (seeds - 1) degrees of freedom (two
    independent means of ``seeds`` values each; 2.14 at 8 seeds, 2.04 at 16), or the
    normal 1.96 where `curves` has no ``seeds`` column. Every n trains on the same problems,
    so treating the two means as independent errs on the wide side."""
    if "seeds" not in curves or curves["seeds"].min() < 2:
        return Z
    return float(stats.t.ppf(0.5 + CONFIDENCE / 2, 2 * (int(curves["seeds"].min()) - 1)))
