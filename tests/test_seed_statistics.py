"""The verdicts' intervals on simulated grids with known problem, seed and evaluation
variance: they cover the true difference at their nominal rate, and more seeds resolve more.

A simulated grid is chapter 02's design: four candidates (n = 4 ... 32), each trained on
`seeds` seeds, scored on 200 validation problems with 4 samples each. A problem's pass rate
is ``sigmoid(problem + arm + seed shift + seed x problem deviation)``: problems are drawn
from a population (sd 1.5 on the logit), each training run shifts its whole set (sd 0.15)
and each problem on its own (sd 0.3), and a seed's evaluation draws are common to the
arms (common random numbers, as in the run store). With these the seed-to-seed spread of
a difference is about 3.5 times its one-seed evaluation standard error, the book's measured
2-3 times and more."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import expit

from isobook.analysis.findings.statistics import Contrast, SeedVariance, grid_seed_variance, problem_scores
from isobook.tasks.metrics import Metric

PROBLEMS, SAMPLES = 200, 4
ARMS = {4: 0.0, 8: -0.1, 16: -0.2, 32: -0.3}  # each n's shift of the logit: n = 4 best
SD_PROBLEM, SD_SEED, SD_RUN_PROBLEM = 1.5, 0.15, 0.3


def true_difference(first: int, second: int, arms: dict[int, float] = ARMS) -> float:
    """The population difference of two arms' expected pass rates (over problems and seeds)."""
    logit = np.random.default_rng(0).standard_normal(2_000_000) * np.hypot(np.hypot(SD_PROBLEM, SD_SEED),
                                                                         SD_RUN_PROBLEM)
    return float(expit(logit + arms[first]).mean() - expit(logit + arms[second]).mean())


def simulated_grid(rng: np.random.Generator, seeds: int, arms: dict[int, float] = ARMS) -> pd.DataFrame:
    """One replicate's per-problem avg@4 of every arm on every seed (`problem_scores`'s shape)."""
    problem = rng.normal(0, SD_PROBLEM, PROBLEMS)
    uniforms = rng.random((seeds, PROBLEMS, SAMPLES))  # each seed's evaluation draws, shared by the arms
    columns = {}
    for n, shift in arms.items():
        rate = expit(problem + shift + rng.normal(0, SD_SEED, (seeds, 1)) + rng.normal(0, SD_RUN_PROBLEM,
                                                                                       (seeds, PROBLEMS)))
        columns[n] = ((uniforms < rate[..., None]).sum(axis=-1) / SAMPLES).ravel()
    index = pd.MultiIndex.from_product([range(seeds), range(PROBLEMS)], names=["seed", "id"])
    return pd.DataFrame(columns, index=index).rename_axis(columns="n")


def test_the_interval_of_a_two_seed_grid_covers_the_true_difference_95_percent_of_the_time() -> None:
    """800 replicates of the book's design (two seeds): the seed variance pooled over the
    grid's neighbouring n, the interval of the extreme pair n = 4 minus n = 32."""
    truth = true_difference(4, 32)
    rng = np.random.default_rng(2)
    covered, resolved = 0, 0
    for _ in range(800):
        grid = simulated_grid(rng, seeds=2)
        interval = Contrast.difference(grid, 4, 32).interval(grid_seed_variance({4096: grid}, "simulated"))
        covered += interval.low <= truth <= interval.high
        resolved += interval.sign != 0
    assert 0.93 <= covered / 800 <= 0.97
    # Evaluation noise alone (what the intervals held before seeds were the unit) covers far less.
    rng = np.random.default_rng(2)
    evaluation_only = SeedVariance(0.0, np.inf, 1, "none")
    alone = sum(Contrast.difference(g, 4, 32).interval(evaluation_only).low <= truth
                <= Contrast.difference(g, 4, 32).interval(evaluation_only).high
                for g in (simulated_grid(rng, seeds=2) for _ in range(200)))
    assert alone / 200 < 0.85


def test_for_a_fixed_effect_more_seeds_give_fewer_ties() -> None:
    ties = {}
    for seeds in (1, 2, 4, 8):
        rng = np.random.default_rng(seeds)
        count = 0
        for _ in range(200):
            grid = simulated_grid(rng, seeds=seeds)
            # one seed borrows the ratio measured on an independent two-seed grid, as a chapter would
            pooled = grid_seed_variance({4096: grid if seeds > 1 else simulated_grid(rng, seeds=2)}, "simulated")
            count += Contrast.difference(grid, 4, 32).interval(pooled).sign == 0
        ties[seeds] = count / 200
    assert ties[1] > ties[2] > ties[4] > ties[8]
    assert ties[8] < 0.15


def test_a_contrast_pairs_seeds_and_problems_and_adds_terms_on_the_same_problems() -> None:
    grid = simulated_grid(np.random.default_rng(0), seeds=3)
    grid.loc[pd.IndexSlice[2, :], 32] = np.nan  # n = 32 lacks seed 2
    difference = Contrast.difference(grid, 4, 32)
    assert difference.seeds == [0, 1] and difference.problems == PROBLEMS
    assert difference.estimate == pytest.approx(grid.loc[[0, 1], 4].mean() - grid.loc[[0, 1], 32].mean(), abs=1e-12)
    # (4 - 8) + (8 - 32) is 4 - 32 on the seeds all three share, problem by problem
    chained = Contrast.difference(grid, 4, 8) + Contrast.difference(grid, 8, 32)
    assert chained.seeds == [0, 1]
    assert chained.per_seed() == pytest.approx(difference.per_seed(), abs=1e-12)
    assert chained.variances() == pytest.approx(difference.variances(), rel=1e-9)
    # on two problem sets the terms stay apart: independent evaluations, variances add
    other = Contrast.difference(grid, 4, 32, problems="hard")
    both = difference - other
    assert both.estimate == pytest.approx(0.0, abs=1e-12)
    assert both.variances() == pytest.approx(tuple(2 * v for v in difference.variances()), rel=1e-9)


def test_a_one_seed_contrast_needs_a_seed_variance_to_borrow() -> None:
    grid = simulated_grid(np.random.default_rng(1), seeds=1)
    with pytest.raises(ValueError, match="seeds: a one-seed contrast needs a pooled SeedVariance"):
        Contrast.difference(grid, 4, 8).interval(None)
    assert grid_seed_variance({4096: grid}, "one seed") is None
    borrowed = Contrast.difference(grid, 4, 8).interval(SeedVariance(8.0, 6.0, 6, "elsewhere"))
    plain = Contrast.difference(grid, 4, 8).interval(SeedVariance(0.0, 6.0, 6, "elsewhere"))
    v_problems, v_one = Contrast.difference(grid, 4, 8).variances()
    assert v_problems == pytest.approx(v_one)  # one seed: the two variances are one
    # sqrt(1 + 8) times the standard error, at a t quantile between t(199)'s and t(6)'s (Satterthwaite)
    assert 3.0 < borrowed.half_width / plain.half_width < 3.0 * stats.t.ppf(0.975, 6) / stats.t.ppf(0.975, 199)


def test_scores_read_the_mean_of_the_evaluations_within_the_last_doubling() -> None:
    """A run's score at C averages its evaluations at C / 2 and C (not the step-0 one)."""
    rows = []
    for rollouts, correct in ((0, 0), (256, 1), (512, 2), (1024, 4)):
        rows.append(pd.DataFrame({"n": 4, "seed": 0, "rollouts": rollouts, "id": [0, 1], "correct": correct,
                                  "samples": 4}))
    table = pd.concat(rows)
    at_1024 = problem_scores(table, ["n"], Metric("avg", 4))
    assert at_1024[4].tolist() == [0.75, 0.75]  # (2 + 4) / 2 / 4
    at_512 = problem_scores(table, ["n"], Metric("avg", 4), rollouts=600)
    assert at_512[4].tolist() == [0.375, 0.375]  # (1 + 2) / 2 / 4
    assert at_512.index.names == ["seed", "id"]
