"""Power by design (`analysis.findings.power`): the components a build measures, the power
they give a design, and the seeds a primary claim needs. The simulations decide each drawn
contrast with the book's own interval (`Contrast.interval`), so a power that promised more
than the verdicts deliver fails here."""

import numpy as np
import pandas as pd
import pytest

from isobook.analysis.findings.power import VarianceComponents, power, problems_needed, seeds_needed
from isobook.analysis.findings.seed_variance import SeedVariance
from isobook.analysis.findings.statistics import Contrast

PROBLEMS = 200
# A contrast of two arms' per-problem avg@4 on hard validation problems, of the size the default
# book measures: problems' share 0.02, seeds' 0.002 (a seed's luck of about 0.045), residual 0.05.
TRUTH = VarianceComponents(problem=0.02, seed=0.002, residual=0.05)
REPLICATES = 2000  # Monte Carlo standard error of a power near 0.8: 0.009


def draw(components: VarianceComponents, effect: float, seeds: int, problems: int,
         rng: np.random.Generator) -> Contrast:
    """One contrast from the two-way model: effect + a_p + b_s + e_sp. # [seeds, problems]"""
    values = (effect + rng.normal(0, np.sqrt(components.problem), problems)[None, :]
              + rng.normal(0, np.sqrt(components.seed), seeds)[:, None]
              + rng.normal(0, np.sqrt(components.residual), (seeds, problems)))
    table = pd.DataFrame(values, index=pd.Index(range(seeds), name="seed"),
                         columns=pd.Index(range(problems), name="id"))
    return Contrast({"validation": table})


def simulated_power(components: VarianceComponents, effect: float, seeds: int, pool: SeedVariance | None,
                    rng: np.random.Generator) -> float:
    """The share of drawn contrasts whose interval (as the book computes it) excludes zero."""
    return float(np.mean([draw(components, effect, seeds, PROBLEMS, rng).interval(pool).sign != 0
                          for _ in range(REPLICATES)]))


def test_the_components_are_recovered_from_drawn_contrasts() -> None:
    rng = np.random.default_rng(0)
    fitted = [VarianceComponents.of(draw(TRUTH, 0.0, 8, PROBLEMS, rng)) for _ in range(300)]
    for name in ("problem", "seed", "residual"):
        mean = np.mean([getattr(f, name) for f in fitted])
        assert mean == pytest.approx(getattr(TRUTH, name), rel=0.15), name  # method of moments: unbiased
    assert TRUTH.variance(8, PROBLEMS) == pytest.approx(0.02 / 200 + 0.05 / 1600 + 0.002 / 8)
    # Moderated by a pool at the true ratio, two-seed contrasts recover the seed part too (the
    # residual's share taken out of the pool's per-seed variance); one seed borrows it whole.
    v_one = (TRUTH.problem + TRUTH.residual) / PROBLEMS
    pool = SeedVariance((TRUTH.seed + TRUTH.residual / PROBLEMS) / v_one, 40.0, 20, "test")
    pooled = [VarianceComponents.of(draw(TRUTH, 0.0, 2, PROBLEMS, rng), pool).seed for _ in range(300)]
    assert np.mean(pooled) == pytest.approx(TRUTH.seed, rel=0.2)
    assert np.isnan(VarianceComponents.of(draw(TRUTH, 0.0, 1, PROBLEMS, rng)).seed)  # nothing to borrow


@pytest.mark.parametrize("seeds", [3, 8])
def test_the_stated_power_is_met_by_the_books_own_intervals(seeds: int) -> None:
    """At 3 and 8 seeds, the verdicts' intervals resolve a 0.05 effect as often as `power`
    says, within Monte Carlo error (a noncentral t, which reads the interval's whole
    variance as chi-square, states 0.16 at 3 seeds where the intervals deliver 0.07)."""
    rng = np.random.default_rng(seeds)
    stated = power(TRUTH, 0.05, seeds, PROBLEMS)
    simulated = simulated_power(TRUTH, 0.05, seeds, None, rng)
    error = np.sqrt(stated * (1 - stated) / REPLICATES)
    assert abs(simulated - stated) <= 3 * error + 0.01, (stated, simulated)
    # Under no effect: the false-positive rate, at most 5% (the residual counted twice
    # makes the intervals conservative), and what the intervals deliver.
    null = power(TRUTH, 0.0, seeds, PROBLEMS)
    assert null <= 0.05 and abs(simulated_power(TRUTH, 0.0, seeds, None, rng) - null) <= 3 * np.sqrt(0.05 / REPLICATES)


def test_the_seeds_a_design_needs_reach_the_target_on_data_from_the_fitted_variances() -> None:
    """As a build does it: fit the components on two selection seeds, size the design from
    them, then draw from those fitted components at that many seeds and decide with the
    book's interval. With one seed fewer the stated power falls short of the target."""
    rng = np.random.default_rng(5)
    fitted = VarianceComponents.of(draw(TRUTH, 0.0, 2, PROBLEMS, rng))
    needed = seeds_needed(fitted, 0.05, PROBLEMS)
    assert needed is not None and needed >= 3
    assert power(fitted, 0.05, needed - 1, PROBLEMS) < 0.8 <= power(fitted, 0.05, needed, PROBLEMS)
    simulated = simulated_power(fitted, 0.05, needed, None, rng)
    assert simulated >= 0.8 - 3 * np.sqrt(0.16 / REPLICATES), (needed, simulated)


def test_a_pool_moderated_interval_has_the_power_stated_with_the_pools_weight() -> None:
    """Where a pool moderates the seed variance, the interval's degrees of freedom grow by the
    pool's weight: the power stated on them is met by the moderated intervals."""
    rng = np.random.default_rng(9)
    v_one = (TRUTH.problem + TRUTH.residual) / PROBLEMS
    pool = SeedVariance((TRUTH.seed + TRUTH.residual / PROBLEMS) / v_one, 40.0, 20, "test")
    stated = power(TRUTH, 0.05, 4, PROBLEMS, pool)
    simulated = simulated_power(TRUTH, 0.05, 4, pool, rng)
    assert abs(simulated - stated) <= 3 * np.sqrt(stated * (1 - stated) / REPLICATES) + 0.02, (stated, simulated)


def test_past_a_few_seeds_only_problems_help() -> None:
    """The problems' share sets a floor no number of seeds removes: an effect below it is
    out of reach (None), and more problems bring it back."""
    heavy = VarianceComponents(problem=0.2, seed=0.002, residual=0.05)
    assert seeds_needed(heavy, 0.05, PROBLEMS) is None
    assert seeds_needed(heavy, 0.05, 4 * PROBLEMS) is not None
    more = problems_needed(heavy, 0.05, 16, PROBLEMS)
    assert more is not None and more > PROBLEMS and power(heavy, 0.05, 16, more) >= 0.8
    assert power(heavy, 0.05, 16, more // 2) < 0.8  # the fewest doublings that reach it
    assert problems_needed(TRUTH, 0.01, 2, PROBLEMS) is None  # two seeds' share: no number of problems helps
    assert power(TRUTH, 0.05, 16, PROBLEMS) > power(TRUTH, 0.05, 8, PROBLEMS) > power(TRUTH, 0.05, 2, PROBLEMS)
    with pytest.raises(ValueError, match="seeds, problems"):
        power(TRUTH, 0.05, 0, PROBLEMS)
