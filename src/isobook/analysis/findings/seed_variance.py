"""How much training-seed variance an interval holds: a contrast's own estimate, shrunk
toward a pool of other contrasts by as much as stays safe when contrasts differ.

A contrast's seed-to-seed variance is written as a multiple of its one-seed evaluation
variance, ``tau^2 = ratio * v_one`` (dimensionless, so it carries across metrics and
problem sets). With S seeds the contrast's own ratio has S - 1 degrees of freedom: one,
at the book's two seeds, whose 95% t quantile is 12.7. The pool (`SeedVariance`: the
ratio measured on chapter 02's two-seed grid and a chapter's own multi-seed arms, with
its degrees of freedom D) is far better determined, but a contrast need not share it: the
book's designs have measured 4.7, 7.2 and 16.8 times one seed's evaluation variance.

**The model** is the empirical-Bayes one of limma (Smyth 2004): the contrast's ratio is
drawn from a scaled inverse chi-square prior centred on the pool with d0 degrees of
freedom, so given its own estimate r (nu = S - 1 df) the moderated ratio is
``(d * pool + nu * r) / (d + nu)`` on ``d + nu`` degrees of freedom. d0 is fitted by
maximum likelihood (SciPy) to the pooled contrasts' own ratios, whose marginal law is a
scaled F(nu, d0) (`spread_dof`); infinite unless they vary more than sampling explains.

**The guard.** Coverage averaged over a prior is not coverage for each contrast: one
whose variance is 4x the pool gets an interval that is too short whenever the pool weighs
much. The weight used is therefore ``min(d0, guarded_weight(nu, D))``: the largest prior
weight at which a contrast whose true ratio is `SPREAD` times the pool's still covers at
`GUARDED_COVERAGE`, with the pool's own sampling error (D df) integrated over. A contrast
with many seeds leans on its own estimate; a one-seed contrast borrows the pool at t
quantiles of about 2 degrees of freedom. `tests/test_seed_statistics.py` simulates
contrasts from 1/4x to 4x the pool at the book's seed counts and checks each group.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

CONFIDENCE = 0.95
SPREAD = 4.0  # a contrast's seed variance may be this many times the pool's (or 1/SPREAD) and keep its coverage
GUARDED_COVERAGE = 0.94  # what a 95% interval still covers for a contrast SPREAD times the pool
QUADRATURE = 256  # chi-square quantiles per axis in `guarded_coverage`'s integral (its error < 1e-3)
MAX_WEIGHT = 1e4  # a prior weight beyond this is the pool itself


@dataclass(frozen=True)
class SeedVariance:
    """The pool: the seed-to-seed variance of a contrast as a multiple of one seed's
    evaluation variance of it (``ratio * v_one``), pooled over `contrasts` contrasts
    measured on two or more seeds (`dof` degrees of freedom), on the runs `source` names.

    `spread_dof`: the prior's d0 (`spread_dof`) fitted to `samples`, infinite when the
    pooled contrasts agree within sampling. `forced`: every contrast takes the pool's ratio on its degrees of
    freedom, whatever its own seeds say (the book before contrasts could differ; kept to
    show what that costs)."""

    ratio: float
    dof: float  # effective degrees of freedom of the ratio's estimate
    contrasts: int
    source: str
    spread_dof: float = np.inf
    forced: bool = False
    samples: tuple[tuple[float, float], ...] = ()  # (own ratio, its dof) of each pooled contrast

    def weight(self, own_dof: float) -> float:
        """The prior weight (degrees of freedom) the pool gets beside `own_dof` of a
        contrast's own estimate."""
        if self.forced:
            return np.inf
        return min(self.spread_dof, guarded_weight(own_dof, self.dof))

    def moderated(self, own_ratio: float, own_dof: float) -> tuple[float, float]:
        """(ratio, degrees of freedom) for a contrast whose own ratio is `own_ratio` on
        `own_dof` degrees of freedom (0: one seed, the pool alone)."""
        weight = self.weight(own_dof)
        if not np.isfinite(weight) or own_dof == 0:
            return self.ratio, (self.dof if not np.isfinite(weight) else weight)
        return (weight * self.ratio + own_dof * own_ratio) / (weight + own_dof), weight + own_dof

    def __str__(self) -> str:
        spread = "" if not np.isfinite(self.spread_dof) else f", contrasts spread as a prior of {self.spread_dof:.1f} df"
        return (f"pooled seed-to-seed variance {self.ratio:.1f} x one seed's evaluation variance "
                f"({self.dof:.1f} df over {self.contrasts} multi-seed contrasts{spread}, {self.source})")


def _quantiles(dof: float) -> np.ndarray:
    """`QUADRATURE` equally likely points of chi-square(dof) / dof (1 where dof is infinite)."""
    if not np.isfinite(dof):
        return np.ones(1)
    return stats.chi2.ppf((np.arange(QUADRATURE) + 0.5) / QUADRATURE, dof) / dof


def guarded_coverage(weight: float, own_dof: float, pool_dof: float, spread: float = SPREAD) -> float:
    """Coverage of the moderated 95% interval for a contrast whose true ratio is `spread`
    times the pool's, the pool estimated on `pool_dof` and the contrast on `own_dof`
    degrees of freedom, the pool weighing `weight`, at the t quantile of the seed term's
    degrees of freedom (as `statistics.Contrast.interval` takes it). Only the seed term is
    counted: a contrast's problem variance adds coverage. # scalar in (0, 1)"""
    pool = _quantiles(pool_dof)[:, None]  # pool estimate / true pool
    own = _quantiles(own_dof)[None, :] if own_dof > 0 else np.zeros((1, 1))  # own estimate / its truth
    moderated = (weight * pool + own_dof * spread * own) / (weight + own_dof)  # in units of the true pool
    quantile = stats.t.ppf(0.5 + CONFIDENCE / 2, weight + own_dof)
    return float((2 * stats.norm.cdf(quantile * np.sqrt(moderated / spread)) - 1).mean())


@functools.lru_cache(maxsize=256)
def _guarded_weight(own_dof: float, pool_dof: float, spread: float, target: float) -> float:
    def excess(weight: float) -> float:
        return guarded_coverage(weight, own_dof, pool_dof, spread) - target

    low = 1e-3 if own_dof == 0 else 0.0  # one seed: no weight is no interval
    if excess(MAX_WEIGHT) >= 0:
        return np.inf
    if excess(low) < 0:
        return low
    return float(optimize.brentq(excess, low, MAX_WEIGHT, xtol=1e-3))


def guarded_weight(own_dof: float, pool_dof: float, spread: float = SPREAD,
                   target: float = GUARDED_COVERAGE) -> float:
    """The largest prior weight at which a contrast `spread` times the pool keeps
    coverage `target` (`guarded_coverage`): with an exactly known pool, 1.5 df beside one
    seed's one and 2.3 for a one-seed contrast; 1.1 and 1.8 beside a pool of 5 df."""
    return _guarded_weight(float(own_dof), round(float(pool_dof), 3), spread, target)


def spread_dof(ratios: Sequence[float], dofs: Sequence[float]) -> float:
    """The prior's degrees of freedom d0 fitted by maximum likelihood to contrasts' own
    ratios (each on its `dofs`): ``ratio / scale ~ F(dof, d0)``. Infinite (the contrasts
    share one ratio) with fewer than three contrasts, or where the likelihood-ratio test
    of a finite d0 against one shared ratio does not reject at 5% (d0 = infinity lies on
    the boundary: the statistic is a half-half mixture of chi-square(0) and (1), so the
    critical value is chi-square(1)'s 90% quantile, 2.71)."""
    ratios, dofs = np.asarray(ratios, float), np.asarray(dofs, float)
    keep = (ratios > 0) & (dofs > 0)
    ratios, dofs = ratios[keep], dofs[keep]
    if len(ratios) < 3:
        return np.inf

    def negative_log_likelihood(theta: np.ndarray) -> float:
        d0, scale = np.exp(theta)
        return -float(np.sum(stats.f.logpdf(ratios / scale, dofs, d0) - np.log(scale)))

    shared = float(np.average(ratios, weights=dofs))  # the maximum-likelihood ratio when all share one
    shared_fit = -float(np.sum(stats.chi2.logpdf(dofs * ratios / shared, dofs) + np.log(dofs / shared)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the F density overflows far out in d0
        fit = optimize.minimize(negative_log_likelihood, np.log([10.0, shared]), method="Nelder-Mead",
                                bounds=[(np.log(0.1), np.log(MAX_WEIGHT)), (None, None)])
    if 2 * (shared_fit - fit.fun) < stats.chi2.ppf(0.90, 1):
        return np.inf
    return float(np.exp(fit.x[0]))
