"""Power by design: how many training seeds a contrast needs to resolve the smallest effect
worth knowing, from the variances a build measured.

A contrast's per-(seed, problem) values follow the two-way model of `statistics`:
``x_sp = delta + a_p + b_s + e_sp``, problems (variance `problem`), training seeds (`seed`)
and their interaction with evaluation noise (`residual`). `VarianceComponents.of` estimates
the three by the two-way ANOVA's method of moments; with one seed (or where the pool is
better determined) the seed part is the pool's ratio times one seed's evaluation variance,
as `statistics.Contrast.interval` takes it. Over S seeds and P problems the estimate's
variance is ``problem / P + residual / (S P) + seed / S``: seeds shrink the last two terms,
problems the first two, so past a few seeds only more problems help.

`power` is the chance that the verdict's 95% interval excludes zero when the true effect is
`effect`, on the interval's degrees of freedom (the seeds' S - 1, plus the pool's weight
where one moderates), with its seed term drawn as a chi-square on them and its problem term
fixed; the interval counts the residual twice, as `Contrast.interval` does (conservative). `tests/test_power.py` draws
contrasts from fitted components, decides them with `Contrast.interval` and checks that the
stated power is met within Monte Carlo error.

    components = VarianceComponents.of(contrast, pool)
    power(components, effect=0.12, seeds=8, problems=200, pool=pool)   # 0.83
    seeds_needed(components, effect=0.12, problems=200, pool=pool)       # 8
    problems_needed(components, effect=0.12, seeds=8, problems=200)      # 200 (or 400, ..., or None)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from isobook.analysis.findings.claims import growth_advantages, growth_trend, logit_margin
from isobook.analysis.findings.seed_variance import CONFIDENCE, SeedVariance
from isobook.analysis.findings.statistics import Contrast

TARGET_POWER = 0.8  # the power a primary claim is designed for
QUADRATURE = 256  # chi-square quantiles over which `power` integrates the interval's seed term
MAX_SEEDS = 64  # `seeds_needed` looks no further: past this, more problems, not seeds, would help


@dataclass(frozen=True)
class VarianceComponents:
    """A contrast's variance components, in the contrast's units squared: across problems
    (``a_p``), across training seeds (``b_s``) and what remains (``e_sp``: the seed x
    problem interaction and each evaluation's sampling noise)."""

    problem: float
    seed: float
    residual: float

    @classmethod
    def of(cls, contrast: Contrast, pool: SeedVariance | None = None) -> VarianceComponents:
        """The components of `contrast`, summed over its terms (independent problem sets).
        The seed part: the contrast's own (two or more seeds, method of moments) moderated
        by `pool` as its interval is (`SeedVariance.moderated`), or the pool's alone on one
        seed. Negative moment estimates are set to zero."""
        problem = seed = residual = residual_per_seed = 0.0
        count = len(contrast.seeds)
        if count == 0:
            raise ValueError("contrast: no seed shared by its candidates")
        for values in contrast.values():  # [seeds, problems]
            seeds, problems = values.shape
            if problems < 2:
                continue
            if seeds < 2:  # one seed: problems and their interaction cannot be told apart
                problem += float(values[0].var(ddof=1))
                continue
            rows, columns, grand = values.mean(axis=1), values.mean(axis=0), values.mean()
            interaction = values - rows[:, None] - columns[None, :] + grand
            ms_residual = float((interaction ** 2).sum()) / ((seeds - 1) * (problems - 1))
            ms_problems = seeds * float(((columns - grand) ** 2).sum()) / (problems - 1)
            ms_seeds = problems * float(((rows - grand) ** 2).sum()) / (seeds - 1)
            residual += ms_residual
            residual_per_seed += ms_residual / problems
            problem += max(0.0, (ms_problems - ms_residual) / seeds)
            seed += max(0.0, (ms_seeds - ms_residual) / problems)
        if pool is None and count < 2:  # one seed and nothing to borrow: the seed part is unknown
            seed = float("nan")
        elif pool is not None:  # a seed's value varies by ratio x v_one, the residual's share included
            _, v_one = contrast.variances()
            own = contrast.own_ratio()
            ratio, _ = pool.moderated(0.0 if np.isnan(own) else own, count - 1)
            seed = max(0.0, ratio * v_one - residual_per_seed)
        return cls(problem, seed, residual)

    def variance(self, seeds: int, problems: int) -> float:
        """The variance of the contrast's estimate over `seeds` seeds and `problems` problems."""
        return self.problem / problems + self.residual / (seeds * problems) + self.seed / seeds

    def interval_parts(self, seeds: int, problems: int) -> tuple[float, float]:
        """The expected parts of `Contrast.interval`'s variance: (its problem term, estimated
        on hundreds of problems and so nearly fixed; its seed term, estimated on the
        interval's few degrees of freedom). The residual enters both (conservative)."""
        return (self.problem / problems + self.residual / (seeds * problems),
                (self.seed + self.residual / problems) / seeds)


def interval_dof(seeds: int, pool: SeedVariance | None) -> float:
    """The degrees of freedom of a `seeds`-seed contrast's interval: its own S - 1, plus the
    pool's weight where one moderates (`SeedVariance.moderated`)."""
    if pool is None:
        return float(max(seeds - 1, 1))
    return float(pool.moderated(1.0, seeds - 1)[1])


def power(components: VarianceComponents, effect: float, seeds: int, problems: int,
          pool: SeedVariance | None = None, alpha: float = 1 - CONFIDENCE) -> float:
    """The chance that a two-sided 1 - `alpha` interval of the contrast (the verdicts' 95%;
    under Holm over k primaries, at least the chance at 0.05 / k), over `seeds` seeds and
    `problems` problems, excludes zero when its true value is `effect`. The estimate is
    normal with `VarianceComponents.variance`; the interval's half-width is the t quantile
    of its degrees of freedom times the root of its variance, whose seed term is the
    contrast's own estimate, a scaled chi-square on S - 1 (moderated: mixed with the
    pool's, whose share is taken as known), and whose problem term is taken as fixed
    (integrated over `QUADRATURE` quantiles of the chi-square). Reading the whole variance
    as chi-square (a noncentral t) would overstate the power at two or three seeds, where
    much of it comes from lucky small estimates of the seed term."""
    if seeds < 1 or problems < 1:
        raise ValueError(f"seeds, problems: need at least one each, got {seeds}, {problems}")
    true = components.variance(seeds, problems)
    if not true > 0:
        return float("nan") if np.isnan(true) else 1.0 if effect != 0 else alpha
    dof = interval_dof(seeds, pool)
    fixed, seed_term = components.interval_parts(seeds, problems)
    own = seeds - 1
    draws = stats.chi2.ppf((np.arange(QUADRATURE) + 0.5) / QUADRATURE, max(own, 1)) / max(own, 1)
    weight = 0.0 if pool is None else pool.weight(own)
    if own == 0 or not np.isfinite(weight):  # the pool alone: its ratio taken as known
        draws = np.ones(1)
    elif weight > 0:  # moderated: the pool's share fixed, the contrast's own a chi-square on its S - 1
        draws = (weight + own * draws) / (weight + own)
    half = float(stats.t.ppf(1 - alpha / 2, dof)) * np.sqrt(fixed + seed_term * draws)
    spread = np.sqrt(true)
    hits = stats.norm.cdf((abs(effect) - half) / spread) + stats.norm.cdf((-abs(effect) - half) / spread)
    return float(np.mean(hits))


def seeds_needed(components: VarianceComponents, effect: float, problems: int, pool: SeedVariance | None = None,
                 target: float = TARGET_POWER, alpha: float = 1 - CONFIDENCE, most: int = MAX_SEEDS) -> int | None:
    """The fewest seeds (at least two) whose `power` reaches `target`; None where `most`
    seeds do not (the problems' share of the variance alone is too large: more problems,
    not seeds, would help)."""
    for seeds in range(2, most + 1):
        if power(components, effect, seeds, problems, pool, alpha) >= target:
            return seeds
    return None


def problems_needed(components: VarianceComponents, effect: float, seeds: int, problems: int,
                    pool: SeedVariance | None = None, target: float = TARGET_POWER,
                    alpha: float = 1 - CONFIDENCE) -> int | None:
    """The fewest validation problems, in doublings of `problems` up to 16 times as many,
    whose `power` at `seeds` seeds reaches `target` (`problems` itself where it does); None
    where 16 times as many do not (the seeds' share is too large: more seeds would help)."""
    for factor in (1, 2, 4, 8, 16):
        if power(components, effect, seeds, problems * factor, pool, alpha) >= target:
            return problems * factor
    return None


def growth_design(selection: Mapping[float, pd.DataFrame], confirmed: Mapping[float, pd.DataFrame],
                  trend_effect: float, pool: SeedVariance | None, target: float = TARGET_POWER,
                  alpha: float = 1 - CONFIDENCE) -> dict[str, float | str]:
    """The design of a primary "n* grows" claim (`claims.n_star_grows`, decided by the trend
    of the every-n advantage on the logit scale), at `alpha` (0.05 over the number of
    primaries: what Holm's first step asks). `trend_effect` (pass rate per doubling of C)
    is taken to the logit scale at each side's mean pass rate at its largest budget. The
    design: the power the confirmatory seeds had, and the seeds `target` needed, by the
    variances of `selection` (the same arms on the selection seeds, read before the
    confirmatory runs), with the validation problems that would reach it at these seeds
    (up to 16 times as many); achieved: the power by the confirmatory runs' own. Both:
    `scores_by_budget` of the arms. Entries NaN where a side has fewer than two budgets."""
    found: dict[str, float | str] = {"effect": trend_effect, "unit": "pass rate per doubling of C",
                                     "alpha": alpha, "seeds": float("nan"), "problems": float("nan"),
                                     "design power": float("nan"), "seeds needed": float("nan"),
                                     "problems needed": float("nan"), "achieved power": float("nan")}
    confirmed_advantages = growth_advantages(confirmed)
    if len(confirmed_advantages) < 2:
        return found
    trend, _, _ = growth_trend(confirmed_advantages)
    seeds, problems = len(trend.seeds), trend.problems
    effect = logit_margin(confirmed[max(confirmed_advantages)], trend_effect)
    found.update({"effect (logit)": effect, "seeds": float(seeds), "problems": float(problems),
                  "achieved power": power(VarianceComponents.of(trend, pool), effect, seeds, problems, pool, alpha)})
    selection_advantages = growth_advantages(selection)
    if len(selection_advantages) >= 2:
        design = VarianceComponents.of(growth_trend(selection_advantages)[0], pool)
        planned = logit_margin(selection[max(selection_advantages)], trend_effect)
        needed = seeds_needed(design, planned, problems, pool, target, alpha)
        more = problems_needed(design, planned, seeds, problems, pool, target, alpha)
        found.update({"design power": power(design, planned, seeds, problems, pool, alpha),
                      "seeds needed": float("nan") if needed is None else float(needed),
                      "problems needed": float("nan") if more is None else float(more)})
    return found
