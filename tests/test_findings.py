"""Every verdict function on synthetic tables with a known answer: a clear effect, a tie
within noise, a reversal and a missing run.

Synthetic evaluations mimic the run store: 200 validation problems, 4 samples each, drawn
with common random numbers (every policy sees the same uniforms, as every run uses the
same evaluation seed), so paired comparisons are as sharp as in the book. A one-seed table
borrows `SEEDS`, a seed-to-seed variance four times one seed's evaluation variance: the
interval of a difference is then about sqrt(5) x 0.014 = 0.03 in standard error (a
half-width near 0.07), so clear effects here are 0.2 and ties are at most 0.01."""

import re
import zlib

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from isobook.analysis.findings.bandit_claims import (
    bandit_n_star_grows,
    bandit_optima,
    bandit_optimum,
    smallest_n_wins,
)
from isobook.analysis.findings.claims import (
    best_candidate,
    gap_widens,
    gains_nothing,
    greater,
    every_n_advantage,
    large_n_advantage,
    matters_little,
    n_star_grows,
    optima_by_budget,
    optimum_above,
    optimum_at_larger_n,
    optimum_of,
    piles_up,
    planner_regret,
    scores_by_budget,
    spread_comparison,
    training_statistic_rises,
    wins_on_most,
)
from isobook.analysis.findings.power import growth_design
from isobook.analysis.findings.statistics import (
    Contrast,
    Interval,
    SeedVariance,
    optimum,
    problem_scores,
    ratio_interval,
    resolvable_difference,
    seeds_multiplier,
)
from isobook.analysis.findings.verdicts import Decision, Verdict, combine, direction, equivalence, no_gain
from isobook.tasks.metrics import Metric

PROBLEMS, SAMPLES = 200, 4
METRIC = Metric("avg", 4)
BASE = np.random.default_rng(7).uniform(0.25, 0.75, PROBLEMS)  # each problem's pass rate before any shift
UNIFORMS = np.random.default_rng(8).random((PROBLEMS, SAMPLES))  # common random numbers
SEEDS = SeedVariance(4.0, 8.0, 8, "test", forced=True)  # the pooled ratio on every contrast: the claims alone


def counts(pass_shift: float, rollouts: float = 4096, **columns: object) -> pd.DataFrame:
    """One evaluation of a policy whose pass rate is BASE + `pass_shift` plus a per-problem
    deviation of its own (sd 0.1, seeded by the policy's columns), as two trained
    policies differ problem by problem in both directions."""
    own = np.random.default_rng(zlib.crc32(repr((sorted(columns.items()), rollouts)).encode()))
    deviation = own.standard_normal(PROBLEMS)
    rate = np.clip(BASE + pass_shift + 0.1 * (deviation - deviation.mean()), 0, 1)
    correct = (UNIFORMS < rate[:, None]).sum(axis=1)
    return pd.DataFrame({**columns, "step": 1, "rollouts": rollouts, "id": np.arange(PROBLEMS), "correct": correct,
                         "samples": SAMPLES})


def seeds_with(table: pd.DataFrame, candidate: object) -> list[int]:
    """The seeds on which `candidate` has scores in a `problem_scores` table."""
    present = table[candidate].notna().groupby(level="seed").any()
    return [int(seed) for seed in present[present].index]


def on(table: pd.DataFrame, seed: int) -> pd.DataFrame:
    """One seed's rows of `problem_scores`, indexed by problem."""
    return table.xs(seed, level="seed")


def scores(shifts: dict[object, float], by: str = "n") -> pd.DataFrame:
    """One seed's `problem_scores` of policies with these shifts."""
    return problem_scores(pd.concat([counts(s, **{by: key}) for key, s in shifts.items()]), [by], METRIC)


def seeded(shifts: dict[object, float], seeds: tuple[int, ...] = (0, 1), by: str = "n",
           seed_shifts: tuple[float, ...] = (0.0, 0.02, -0.02, 0.01)) -> pd.DataFrame:
    """`problem_scores` of each policy trained on each seed: every seed shifts the policy by
    a little of its own (`seed_shifts`, a training seed's luck) on top of its own deviation."""
    return problem_scores(pd.concat([counts(s + seed_shifts[seed], **{by: key, "seed": seed})
                                     for key, s in shifts.items() for seed in seeds]), [by], METRIC)


# ---- scores and contrasts ------------------------------------------------------------------------


def test_problem_scores_average_each_runs_evaluations_within_half_its_compute() -> None:
    table = pd.concat([counts(0.0, rollouts=0, n=0),  # the base model: its own score, at 0
                       counts(-0.5, rollouts=0, n=4), counts(0.0, rollouts=512, n=4), counts(0.1, rollouts=1024, n=4),
                       counts(0.2, rollouts=2048, n=4),
                       counts(-0.5, rollouts=0, n=32), counts(0.1, rollouts=1024, n=32),
                       counts(0.2, rollouts=1024, n=32, seed=1), counts(0.3, rollouts=2048, n=32, seed=1)])
    table["seed"] = table["seed"].fillna(0).astype(int)

    def avg(*parts: pd.DataFrame) -> np.ndarray:
        return np.mean([p["correct"].to_numpy() / SAMPLES for p in parts], axis=0)

    at_512 = problem_scores(table, ["n"], METRIC, rollouts=512)
    assert list(at_512.columns) == [4]  # n = 32 has made no update by 512 rollouts; the base none at all
    assert list(at_512.index.names) == ["seed", "id"] and seeds_with(at_512, 4) == [0]
    assert at_512[4].to_numpy() == pytest.approx(avg(counts(0.0, rollouts=512, n=4)))
    at_1024 = problem_scores(table, ["n"], METRIC, rollouts=1024)
    assert on(at_1024, 0)[4].to_numpy() == pytest.approx(avg(counts(0.0, rollouts=512, n=4),
                                                             counts(0.1, rollouts=1024, n=4)))  # [512, 1024]
    assert on(at_1024, 1)[32].to_numpy() == pytest.approx(avg(counts(0.2, rollouts=1024, n=32, seed=1)))
    assert on(at_1024, 1)[4].isna().all() and seeds_with(at_1024, 4) == [0]  # n = 4 has no seed 1
    assert seeds_with(at_1024, 32) == [0, 1]
    last = problem_scores(table, ["n"], METRIC)
    assert list(last.columns) == [0, 4, 32]
    assert on(last, 0)[0].to_numpy() == pytest.approx(avg(counts(0.0, rollouts=0, n=0)))
    assert on(last, 0)[4].to_numpy() == pytest.approx(avg(counts(0.1, rollouts=1024, n=4),
                                                          counts(0.2, rollouts=2048, n=4)))  # not the base at 0
    assert on(last, 0)[32].to_numpy() == pytest.approx(avg(counts(0.1, rollouts=1024, n=32)))  # its own latest
    seed_one = avg(counts(0.2, rollouts=1024, n=32, seed=1), counts(0.3, rollouts=2048, n=32, seed=1))
    assert on(last, 1)[32].to_numpy() == pytest.approx(seed_one)
    averaged = last.groupby(level="id").mean()  # each candidate over its own seeds
    assert list(averaged.index) == list(range(PROBLEMS))
    assert averaged[32].to_numpy() == pytest.approx((on(last, 0)[32].to_numpy() + seed_one) / 2)  # seeds averaged
    assert averaged[4].to_numpy() == pytest.approx(on(last, 0)[4].to_numpy())  # a candidate's own seeds only
    # A problem one candidate has no score for is left out; no seed column reads as seed 0.
    partial = problem_scores(pd.concat([counts(0.0, n=4), counts(0.0, n=8).iloc[1:]]), ["n"], METRIC)
    assert len(partial) == PROBLEMS - 1 and 0 not in partial.index.get_level_values("id")
    assert set(partial.index.get_level_values("seed")) == {0}
    assert problem_scores(table, ["n"], METRIC, rollouts=100).empty
    with pytest.raises(TypeError, match="is text"):
        problem_scores(table, ["n"], "val_avg@4")


def test_a_contrast_borrows_the_seed_variance_on_one_seed_and_uses_its_own_on_several() -> None:
    assert str(Interval(0.0123, -0.004, 0.031)) == "+0.012 [-0.004, +0.031]"
    assert Interval(0.1, 0.05, 0.15).sign == 1 and Interval(0.0, -0.1, 0.1).half_width == pytest.approx(0.1)
    one = scores({"a": 0.2, "b": 0.0}, by="policy")
    contrast = Contrast.difference(one, "a", "b")
    assert contrast.seeds == [0] and contrast.problems == PROBLEMS
    assert contrast.estimate == pytest.approx(one["a"].mean() - one["b"].mean())
    with pytest.raises(ValueError, match="one-seed contrast needs a pooled SeedVariance"):
        contrast.interval(None)
    # On one seed the problem variance is the evaluation variance: a ratio r widens it by sqrt(1 + r).
    alone = contrast.interval(SeedVariance(0.0, np.inf, 1, "none", forced=True))
    widened = contrast.interval(SeedVariance(3.0, np.inf, 1, "none", forced=True))
    assert widened.half_width / alone.half_width == pytest.approx(2.0, rel=0.01)
    assert contrast.interval(SEEDS).sign == 1 and 0.04 < contrast.interval(SEEDS).half_width < 0.1
    # Two seeds: the per-seed values, and the contrast's own seed variance (one degree of freedom: wide).
    two = seeded({"a": 0.2, "b": 0.0}, by="policy")
    paired = Contrast.difference(two, "a", "b")
    assert paired.seeds == [0, 1] and len(paired.per_seed()) == 2
    assert paired.seed_variance() == pytest.approx(np.var(paired.per_seed(), ddof=1))
    own, pooled = paired.interval(None), paired.interval(SEEDS)
    assert own.estimate == pooled.estimate == pytest.approx(paired.per_seed().mean())
    assert own.sign == pooled.sign == 1
    # Terms on different problem sets add as independent evaluations.
    both = Contrast.difference(one, "a", "b", problems="easy") + Contrast.difference(one, "a", "b", problems="hard")
    assert set(both.terms) == {"easy", "hard"} and both.estimate == pytest.approx(2 * contrast.estimate)
    assert both.variances()[0] == pytest.approx(2 * contrast.variances()[0])
    assert (both - both).estimate == pytest.approx(0.0)


# ---- optima --------------------------------------------------------------------------------------


def test_optimum_keeps_the_candidates_within_noise() -> None:
    table = scores({4: 0.0, 8: 0.005, 16: -0.2})
    found = optimum(table, SEEDS)
    assert found.tied == (4, 8) and found.best in (4, 8)
    assert found.value == pytest.approx(table[found.best].mean())
    assert found.runner_up.sign == 0  # the lead over the other of 4 and 8, not over 16
    assert resolvable_difference(table, SEEDS) == pytest.approx(np.median(
        [Contrast.difference(table, a, b).interval(SEEDS).half_width for a, b in ((4, 8), (8, 16))]))
    alone = optimum(scores({4: 0.0}), SEEDS)
    assert alone.tied == (4,) and alone.runner_up is None
    with pytest.raises(ValueError, match="no candidate"):
        optimum(pd.DataFrame(), SEEDS)
    found, levels = optimum_of(table, SEEDS)
    assert found.tied == (4, 8) and levels == [4, 8]
    assert optimum_of(pd.DataFrame(), SEEDS) == (None, [])
    joint = grid({(8, 4): 0.2, (16, 8): 0.195, (4, 16): -0.1})
    found, levels = optimum_of(joint, SEEDS)
    assert found.best in ((8, 4), (16, 8)) and levels == [4, 8]  # n read from the (B_p, n) pairs


def growth(shifts: dict[int, dict[object, float]], by: str = "n", **columns: object) -> pd.DataFrame:
    """Evaluations of each candidate at each budget: shifts[budget][candidate] (a tuple for
    a (batch_problems, n) candidate)."""
    def keys(candidate: object) -> dict[str, object]:
        return dict(zip(("batch_problems", "n"), candidate)) if isinstance(candidate, tuple) else {by: candidate}

    return pd.concat([counts(s, rollouts=budget, **keys(c), **columns) for budget, row in shifts.items()
                      for c, s in row.items()])


def test_optima_by_budget_tabulate_the_best_and_the_n_within_noise() -> None:
    evaluations = growth({512: {4: 0.2, 16: 0.0}, 1024: {4: 0.2, 16: 0.2}, 2048: {4: 0.2, 16: 0.3},
                          4096: {4: 0.2, 16: 0.4}})
    optima = optima_by_budget(evaluations, ["n"], METRIC, [256, 512, 1024, 2048, 4096], SEEDS)
    assert list(optima.columns) == ["rollouts", "n", "score", "within noise", "lead", "candidates"]
    assert optima["rollouts"].tolist() == [512, 1024, 2048, 4096]  # nothing evaluated by 256
    assert optima["n"].tolist() == [4, 4, 16, 16]
    # Each budget averages its evaluation and the one at half of it: at 1,024, 0.2 against 0.1; at 2,048,
    # 0.2 against 0.25, within noise; at 4,096, 0.2 against 0.35.
    assert optima["within noise"].tolist() == [(4,), (4,), (4, 16), (16,)]
    assert optima["candidates"].tolist() == [2, 2, 2, 2]
    assert [lead.sign for lead in optima["lead"]] == [1, 1, 0, 1]
    one_run = growth({512: {4: 0.2}, 4096: {4: 0.3}})
    assert optima_by_budget(one_run, ["n"], METRIC, [512, 4096], SEEDS).empty


# ---- claims on one contrast ----------------------------------------------------------------------


def test_the_best_candidate_clear_tie_reversal_partly_and_missing() -> None:
    claim = "the preset is best"
    clear = best_candidate(scores({"preset": 0.2, "a": 0.0, "b": -0.05}, by="cell"), "preset", claim, METRIC, SEEDS)
    assert clear.verdict == Verdict.REPRODUCED and "preset - a: +0." in clear.uncertainty
    assert "95% over 1 seed x 200 problems, the pooled seed variance (8.0 df)" in clear.uncertainty
    assert clear.deciding.estimate == pytest.approx(min(0.2, 0.25), abs=0.03)  # the lead over the closest, a
    level = best_candidate(scores({"preset": 0.005, "a": 0.0}, by="cell"), "preset", claim, METRIC, SEEDS)
    assert level.verdict == Verdict.UNRESOLVED  # 0.005 within an interval of about ±0.06: past the margin
    assert level.p_value > 0.05
    reversal = best_candidate(scores({"preset": -0.2, "a": 0.0, "b": -0.4}, by="cell"), "preset", claim, METRIC,
                              SEEDS)
    assert reversal.verdict == Verdict.NOT_REPRODUCED
    partly = best_candidate(scores({"preset": 0.2, "a": 0.2, "b": -0.1}, by="cell"), "preset", claim, METRIC, SEEDS)
    assert partly.verdict == Verdict.PARTLY
    missing = best_candidate(scores({"a": 0.0, "b": 0.1}, by="cell"), "preset", claim, METRIC, SEEDS)
    assert missing.verdict == Verdict.NOT_MEASURED
    assert best_candidate(scores({"preset": 0.2}, by="cell"), "preset", claim, METRIC,
                          SEEDS).verdict == Verdict.NOT_MEASURED
    with pytest.raises(ValueError, match="one-seed contrast"):  # one seed and nothing to borrow
        best_candidate(scores({"preset": 0.2, "a": 0.0}, by="cell"), "preset", claim, METRIC, None)
    # Two seeds each: the seed variance may be the contrasts' own.
    own = best_candidate(seeded({"preset": 0.2, "a": 0.0, "b": -0.1}, by="cell"), "preset", claim, METRIC, None)
    assert own.verdict == Verdict.REPRODUCED
    assert "95% over 2 seeds x 200 problems, seed variance of this contrast alone (1 df)" in own.uncertainty


def test_greater_and_gains_nothing() -> None:
    table = scores({"base": 0.0, "trained": -0.2, "same": 0.0}, by="policy")
    names = ("base", "hard-trained")
    forgets = greater(table, "base", "trained", "hard-only training forgets easy", names, METRIC, SEEDS)
    assert forgets.verdict == Verdict.REPRODUCED and "base 0." in forgets.measured
    assert f"base - hard-trained: {forgets.deciding}" in forgets.uncertainty and "by seed" not in forgets.uncertainty
    assert forgets.deciding.estimate == pytest.approx(table["base"].mean() - table["trained"].mean())
    assert greater(table, "trained", "base", "x", ("a", "b"), METRIC, SEEDS).verdict == Verdict.NOT_REPRODUCED
    same = greater(table, "base", "same", "x", ("a", "b"), METRIC, SEEDS)
    assert same.verdict == Verdict.UNRESOLVED and same.deciding.half_width > 0.03
    assert greater(table, "trained", "base", "x", ("a", "b"), METRIC, SEEDS, claimed=-1).verdict == Verdict.REPRODUCED
    # A claim of no gain ("very easy data does not help"): reproduced when the gain's upper end lies below
    # the margin, not reproduced when its lower end lies above it.
    assert gains_nothing(table, "trained", "base", "x", ("a", "b"), METRIC, SEEDS).verdict == Verdict.REPRODUCED
    assert gains_nothing(table, "base", "trained", "x", ("a", "b"), METRIC, SEEDS).verdict == Verdict.NOT_REPRODUCED
    assert gains_nothing(table, "base", "same", "x", ("a", "b"), METRIC, SEEDS).verdict == Verdict.UNRESOLVED
    assert greater(table, "base", "missing", "x", ("a", "b"), METRIC, SEEDS).verdict == Verdict.NOT_MEASURED
    assert greater(pd.DataFrame(), "base", "trained", "x", ("a", "b"), METRIC, SEEDS).verdict == Verdict.NOT_MEASURED


def test_greater_pairs_the_seeds_both_policies_have() -> None:
    two = seeded({"a": 0.2, "b": 0.0}, by="policy")
    found = greater(two, "a", "b", "x", ("a", "b"), METRIC, SEEDS)
    assert found.verdict == Verdict.REPRODUCED and "95% over 2 seeds x 200 problems" in found.uncertainty
    per_seed = Contrast.difference(two, "a", "b").per_seed()
    assert "; by seed: " + ", ".join(f"{v:+.3f}" for v in per_seed) in found.uncertainty
    assert greater(two, "a", "b", "x", ("a", "b"), METRIC, None).verdict == Verdict.REPRODUCED  # its own variance
    # b trained on a third seed a lacks: compared on the two they share, means included.
    three = seeded({"a": 0.2, "b": 0.0}, seeds=(0, 1, 2), by="policy")
    three.loc[(2, slice(None)), "a"] = np.nan
    shared = greater(three, "a", "b", "x", ("a", "b"), METRIC, SEEDS)
    assert "95% over 2 seeds" in shared.uncertainty
    assert f"b {three.loc[[0, 1], 'b'].mean():.3f}" in shared.measured
    # No seed in common: nothing to pair.
    apart = problem_scores(pd.concat([counts(0.2, policy="a", seed=0), counts(0.0, policy="b", seed=1)]), ["policy"],
                           METRIC)
    assert greater(apart, "a", "b", "x", ("a", "b"), METRIC, SEEDS).measured == "needs both policies scored on one seed"


def logit_grid(rates: dict[int, dict[int, float]], seeds: int = 2, problems: int = PROBLEMS,
               seed_sd: float = 0.0, rng_seed: int = 11) -> dict[float, pd.DataFrame]:
    """`scores_by_budget`-shaped tables drawn from logit pass rates: rates[budget][n] is the
    logit of n's mean pass rate there; each problem adds an effect of its own (sd 1, shared
    by every n and budget), each (seed, n) a training seed's luck (sd `seed_sd`), and a
    problem's score is avg@4 of 4 Bernoulli draws."""
    rng = np.random.default_rng(rng_seed)
    problem = rng.standard_normal(problems)
    tables = {}
    for budget, by_n in rates.items():
        columns = {}
        for n, rate in by_n.items():
            luck = rng.normal(0.0, seed_sd, (seeds, 1)) if seed_sd else np.zeros((seeds, 1))
            p = 1 / (1 + np.exp(-(rate + problem[None, :] + luck)))
            columns[n] = (rng.random((seeds, problems, SAMPLES)) < p[..., None]).mean(axis=2).ravel()
        index = pd.MultiIndex.from_product([range(seeds), range(problems)], names=["seed", "id"])
        tables[budget] = pd.DataFrame(columns, index=index).rename_axis(columns="n")
    return tables


def test_n_star_grows_when_the_every_n_advantage_rises_and_large_n_is_no_longer_behind() -> None:
    budgets, claim = [512, 1024, 2048, 4096], "n* grows with C"
    # Evaluated at each doubling, so a budget's score is the mean of two evaluations.
    grows = growth({512: {4: 0.0, 16: -0.2}, 1024: {4: 0.0, 16: -0.1}, 2048: {4: 0.0, 16: 0.1},
                    4096: {4: 0.0, 16: 0.25}})
    by_budget = scores_by_budget(grows, ["n"], METRIC, budgets)
    found = n_star_grows(by_budget, claim, SEEDS)
    assert found.verdict == Verdict.REPRODUCED
    assert found.measured.startswith("every n above 4 minus n = 4, logit: 512: -0.")
    # The deciding contrast is the trend per doubling on the logit scale: by hand from each budget's means.
    logit = {b: np.log(t.mean() / (1 - t.mean())) for b, t in by_budget.items()}
    advantage = np.array([logit[b][16] - logit[b][4] for b in budgets])
    assert found.deciding.estimate == pytest.approx(np.polyfit(np.log2(budgets), advantage, 1)[0], rel=1e-9)
    assert "trend per doubling of C +" in found.uncertainty and "at 4,096: +" in found.uncertainty
    one_n = growth({512: {4: 0.2}, 4096: {4: 0.3}})
    assert n_star_grows(scores_by_budget(one_n, ["n"], METRIC, budgets), claim, SEEDS).verdict == Verdict.NOT_MEASURED
    one_budget = growth({4096: {4: 0.0, 16: 0.2}})
    assert n_star_grows(scores_by_budget(one_budget, ["n"], METRIC, budgets), claim,
                        SEEDS).verdict == Verdict.NOT_MEASURED
    assert n_star_grows({}, claim, SEEDS).verdict == Verdict.NOT_MEASURED


def test_a_shrinking_deficit_is_the_papers_direction_not_a_refutation() -> None:
    """Large n behind at every budget, its deficit halving per doubling beyond noise: the
    paper's law below its crossing. The finding says where the fitted line crosses zero."""
    rates = {b: {4: 0.0, 32: -2.0 + 0.4 * k} for k, b in enumerate([512, 1024, 2048, 4096])}
    found = n_star_grows(logit_grid(rates, seeds=4), "n* grows", SEEDS)
    assert found.verdict == Verdict.NOT_REACHED and found.deciding.sign == 1
    crossing = float(found.uncertainty.split("catch up) at C ~ ")[1].split(" rollouts")[0].replace(",", ""))
    assert 4096 < crossing < 16 * 4096  # by the rates, two doublings past 4,096 (-0.8 there, +0.4 per doubling)
    # The same trend on one seed and few problems: growth resolved, the end open.
    few = n_star_grows(logit_grid(rates, seeds=1, problems=40), "n* grows", SEEDS)
    assert few.verdict in (Verdict.PARTLY, Verdict.UNRESOLVED) and few.verdict != Verdict.NOT_REPRODUCED
    # A deficit that does not move: growth resolved absent, on many problems and seeds.
    flat = logit_grid({b: {4: 0.0, 32: -0.8} for b in (512, 1024, 2048, 4096)}, seeds=8, problems=2000)
    assert n_star_grows(flat, "n* grows", SEEDS).verdict == Verdict.NOT_REPRODUCED
    # A large-n lead that falls: a resolved negative trend is a refutation, leading or not.
    falls = logit_grid({512: {4: 0.0, 32: 1.5}, 4096: {4: 0.0, 32: 0.3}})
    assert n_star_grows(falls, "n* grows", SEEDS).verdict == Verdict.NOT_REPRODUCED
    # A lead that holds at the top of the grid: n* cannot be seen to move, not a refutation.
    pinned = logit_grid({b: {4: 0.0, 32: 0.8} for b in (512, 1024, 2048, 4096)}, seeds=8, problems=2000)
    found = n_star_grows(pinned, "n* grows", SEEDS)
    assert found.verdict == Verdict.UNRESOLVED and "cannot be seen to move" in found.uncertainty


def test_a_deficit_compressed_by_the_ceiling_is_not_growth() -> None:
    """Every n climbs toward a pass rate of 1 with large n one logit behind throughout: the
    raw deficit shrinks (0.23 -> 0.02) only because both saturate. On the logit scale the
    trend is flat: no growth, never 'reproduced' or 'not reached'."""
    rates = {b: {4: 0.5 + k, 32: -0.5 + k} for k, b in enumerate([512, 1024, 2048, 4096])}
    tables = logit_grid(rates, seeds=8, problems=2000)
    raw = [float(t[32].mean() - t[4].mean()) for t in tables.values()]
    assert raw[0] < -0.15 and raw[-1] > raw[0] + 0.1  # the pass-rate deficit shrinks a lot
    assert n_star_grows(tables, "n* grows", SEEDS).verdict == Verdict.NOT_REPRODUCED


def test_the_every_n_advantage_sees_n_star_move_from_4_to_8_with_the_extremes_still() -> None:
    """n = 32 stays 0.8 logit behind n = 4 at every budget while n = 8 and 16 overtake it:
    the two-extreme contrast sees nothing, the every-n advantage sees growth."""
    budgets = [512, 1024, 2048, 4096]
    rates = {b: {4: 0.0, 8: -0.6 + 0.6 * k, 16: -0.8 + 0.6 * k, 32: -0.8} for k, b in enumerate(budgets)}
    tables = logit_grid(rates, seeds=4)
    extremes = {b: t[[4, 32]] for b, t in tables.items()}
    assert n_star_grows(extremes, "n* grows", SEEDS).deciding.sign == 0
    assert n_star_grows(tables, "n* grows", SEEDS).verdict == Verdict.REPRODUCED
    # With two candidates the every-n advantage is their difference; each B_p's own within a grid.
    advantage = every_n_advantage(tables[4096][[4, 32]])
    assert advantage.estimate == pytest.approx(float((tables[4096][32] - tables[4096][4]).mean()))
    table = grid({(8, 4): 0.0, (8, 8): 0.1, (8, 16): 0.2, (16, 4): 0.0, (16, 16): 0.1})
    expected = (((table[(8, 8)] + table[(8, 16)]) / 2 - table[(8, 4)]).mean()
                + (table[(16, 16)] - table[(16, 4)]).mean()) / 2
    assert every_n_advantage(table).estimate == pytest.approx(expected)
    assert every_n_advantage(scores({4: 0.0})) is None


def test_n_star_grows_over_seeds_and_over_batch_splits() -> None:
    budgets, claim = [512, 4096], "n* grows with C"
    two = pd.concat([growth({512: {4: 0.0, 16: -0.2 + d}, 4096: {4: 0.0, 16: 0.2 + d}}, seed=seed)
                     for seed, d in ((0, 0.0), (1, 0.02))])
    found = n_star_grows(scores_by_budget(two, ["n"], METRIC, budgets), claim, SEEDS)
    assert found.verdict == Verdict.REPRODUCED
    assert "95% over 2 seeds x 200 problems, the pooled seed variance" in found.uncertainty
    assert n_star_grows(scores_by_budget(two, ["n"], METRIC, budgets), claim, None).verdict in (
        Verdict.REPRODUCED, Verdict.PARTLY)  # its own seed variance, on one degree of freedom
    # A fixed batch: each B_p has one n, and the advantage is the larger-n splits' against the smallest.
    fixed = growth({512: {(8, 4): 0.0, (4, 8): -0.2}, 4096: {(8, 4): 0.0, (4, 8): 0.2}})
    by_budget = scores_by_budget(fixed, ["batch_problems", "n"], METRIC, budgets)
    assert n_star_grows(by_budget, claim, SEEDS).verdict == Verdict.REPRODUCED
    assert n_star_grows(by_budget, claim, SEEDS).measured.startswith("every n above 4 minus n = 4")
    # The large-n advantage (other claims' contrast): the mean over B_p of the within-B_p advantage.
    table = grid({(8, 4): 0.0, (8, 16): 0.2, (16, 4): 0.0, (16, 16): 0.1})
    advantage = large_n_advantage(table)
    assert advantage.estimate == pytest.approx(((table[(8, 16)] - table[(8, 4)]).mean()
                                                + (table[(16, 16)] - table[(16, 4)]).mean()) / 2)
    assert large_n_advantage(scores({4: 0.0})) is None


def test_one_optimum_at_a_larger_n_than_another() -> None:
    claim = "worst@2 peaks at a larger n than best@2"
    # Raising every pass rate 0.3 gains more where all samples must be right than where one must.
    evaluations = pd.concat([counts(0.1, n=4), counts(0.4, n=32)])
    worst, best = (problem_scores(evaluations, ["n"], Metric(kind, 2)) for kind in ("worst", "best"))
    clear = optimum_at_larger_n(("worst@2", worst, "easy"), ("best@2", best, "easy"), claim, SEEDS)
    gap = (worst[32] - worst[4]).mean() - (best[32] - best[4]).mean()
    assert clear.verdict == Verdict.REPRODUCED and clear.deciding.estimate == pytest.approx(gap) and gap > 0.15
    assert "worst@2: n* = 32" in clear.measured and "advantage worst@2 - best@2: +0.2" in clear.uncertainty
    assert "over 1 seed x 200 problems" in clear.uncertainty
    swapped = optimum_at_larger_n(("best@2", best, "easy"), ("worst@2", worst, "easy"), claim, SEEDS)
    assert swapped.verdict == Verdict.NOT_REPRODUCED
    # Two problem sets: independent evaluations, an easy set where large n gains and a hard one where it loses.
    easy = scores({4: 0.0, 32: 0.2})
    hard = problem_scores(pd.concat([counts(0.0, n=4, set="hard"), counts(-0.2, n=32, set="hard")]), ["n"], METRIC)
    found = optimum_at_larger_n(("easy", easy, "easy"), ("hard", hard, "hard"), "hard peaks lower", SEEDS)
    assert found.verdict == Verdict.REPRODUCED and found.deciding.estimate == pytest.approx(0.4, abs=0.04)
    assert optimum_at_larger_n(("hard", hard, "hard"), ("easy", easy, "easy"), "x",
                               SEEDS).verdict == Verdict.NOT_REPRODUCED
    # The same advantage on two sets: exactly level, and a tie.
    same = optimum_at_larger_n(("easy", easy, "easy"), ("again", easy, "again"), "x", SEEDS)
    assert same.verdict == Verdict.UNRESOLVED and same.deciding.estimate == pytest.approx(0.0, abs=1e-12)
    assert optimum_at_larger_n(("easy", easy, "easy"), ("hard", scores({4: 0.0}), "hard"), "x",
                               SEEDS).verdict == Verdict.NOT_MEASURED  # one n: no advantage
    assert optimum_at_larger_n(("easy", pd.DataFrame(), "easy"), ("hard", hard, "hard"), "x",
                               SEEDS).verdict == Verdict.NOT_MEASURED
    elsewhere = hard.rename(index={0: 1}, level="seed")
    apart = optimum_at_larger_n(("easy", easy, "easy"), ("hard", elsewhere, "hard"), "x", SEEDS)
    assert apart.measured == "needs both optima measured on a common seed"


def test_one_optimum_above_another_by_the_n_within_noise() -> None:
    def named(name: str, shifts: dict[int, float]) -> tuple:
        return name, *optimum_of(scores(shifts), SEEDS)

    claim = "the bandit peaks at a larger n than the LLM"
    clear = optimum_above(named("bandit", {4: 0.0, 16: 0.2}), named("LLM", {4: 0.2, 16: 0.0}), claim)
    assert clear.verdict == Verdict.REPRODUCED and "n within noise: bandit {16}, LLM {4}" in clear.uncertainty
    tie = optimum_above(named("bandit", {4: 0.0, 16: 0.004}), named("LLM", {4: 0.2, 16: 0.0}), claim)
    assert tie.verdict == Verdict.UNRESOLVED and "bandit {4, 16}" in tie.uncertainty
    reversal = optimum_above(named("bandit", {4: 0.2, 16: 0.0}), named("LLM", {4: 0.2, 16: 0.0}), claim)
    assert reversal.verdict == Verdict.NOT_REPRODUCED  # both peak at n = 4, beyond noise
    censored = optimum_above(named("bandit", {4: 0.2, 16: 0.0}), named("LLM", {4: 0.2, 16: 0.0}), claim, floor=4)
    assert censored.verdict == Verdict.UNRESOLVED and "both at the smallest n tried (4)" in censored.uncertainty
    above_floor = optimum_above(named("a", {4: 0.2, 16: 0.0}), named("b", {4: 0.0, 16: 0.2}), claim, floor=4)
    assert above_floor.verdict == Verdict.NOT_REPRODUCED  # the second's optimum lies above: no censoring
    nothing = optimum_of(pd.DataFrame(), SEEDS)
    assert optimum_above(("bandit", *nothing), named("LLM", {4: 0.1}), claim).verdict == Verdict.NOT_MEASURED


def grid(shifts: dict[tuple[int, int], float]) -> pd.DataFrame:
    table = pd.concat([counts(s, batch_problems=bp, n=n) for (bp, n), s in shifts.items()])
    return problem_scores(table, ["batch_problems", "n"], METRIC)


# Two seeds that agree exactly, 10 problems: B_p moves the score 0.02 at n = 4 and 0.01 at n = 8; n moves it
# 0.10 at B_p = 8 and 0.09 at B_p = 16.
EXACT_GRID = pd.DataFrame({(8, 4): [0.50] * 20, (16, 4): [0.52] * 20, (8, 8): [0.60] * 20, (16, 8): [0.61] * 20},
                          index=pd.MultiIndex.from_product([[0, 1], range(10)], names=["seed", "id"]))
EXACT_GRID.columns = pd.MultiIndex.from_tuples(EXACT_GRID.columns, names=["batch_problems", "n"])


def test_spread_over_n_against_spread_over_bp() -> None:
    claim = "B_p matters less than n"
    # By hand: ranges over B_p at n = 4 and 8 are 0.02 and 0.01; over n at B_p = 8 and 16, 0.10 and 0.09.
    exact = EXACT_GRID
    by_hand = spread_comparison(exact, claim, METRIC, SEEDS)
    assert "moves 0.015 when only B_p changes (2 pairs) vs 0.095 when only n changes (2 pairs)" in by_hand.measured
    assert "+0.080 [+0.080, +0.080]" in by_hand.uncertainty and by_hand.verdict == Verdict.REPRODUCED
    clear = spread_comparison(grid({(8, 4): 0.2, (8, 16): 0.0, (16, 4): 0.21, (16, 16): 0.01}), claim, METRIC, SEEDS)
    assert clear.verdict == Verdict.REPRODUCED
    assert "moves 0.0" in clear.measured and "vs 0.19" in clear.measured
    reversal = spread_comparison(grid({(8, 4): 0.2, (8, 16): 0.2, (16, 4): 0.0, (16, 16): 0.0}), claim, METRIC, SEEDS)
    assert reversal.verdict == Verdict.NOT_REPRODUCED
    level = spread_comparison(grid({(8, 4): 0.0, (8, 16): 0.0, (16, 4): 0.0, (16, 16): 0.0}), claim, METRIC, SEEDS)
    # Identical one-seed runs: no evaluation variance to scale the pooled seed variance by, so nothing is known.
    assert level.verdict == Verdict.UNRESOLVED and not np.isfinite(level.deciding.half_width)
    missing = spread_comparison(grid({(8, 4): 0.0, (8, 16): 0.1}), claim, METRIC, SEEDS)
    assert missing.verdict == Verdict.NOT_MEASURED
    assert spread_comparison(pd.DataFrame(), claim, METRIC, SEEDS).verdict == Verdict.NOT_MEASURED
    with pytest.raises(ValueError, match="batch_problems, n"):
        spread_comparison(scores({4: 0.0, 8: 0.0}), claim, METRIC, SEEDS)
    # Unequal groups: four n at one B_p, two B_p at one n, all equal but for noise: pairs keep it a tie.
    uneven = grid({(8, 4): 0.0, (8, 8): 0.0, (8, 16): 0.0, (8, 32): 0.0, (16, 8): 0.0})
    assert spread_comparison(uneven, claim, METRIC, SEEDS).verdict == Verdict.UNRESOLVED


def test_b_p_matters_little_is_an_equivalence_that_a_large_change_leaves_unresolved() -> None:
    claim = "at fixed n, B_p matters little"
    # By hand, two seeds that agree exactly: B_p moves the score 0.02 at n = 4 and 0.01 at n = 8.
    exact = EXACT_GRID
    little = matters_little(exact, claim, METRIC, SEEDS)
    assert little.verdict == Verdict.REPRODUCED and little.deciding.estimate == pytest.approx(0.015)
    assert "moves 0.015 on average when only B_p changes (2 pairs)" in little.measured
    # B_p moves it 0.3: the mean |change| is biased upwards by noise, so beyond the margin is no refutation.
    large = matters_little(grid({(8, 4): 0.0, (16, 4): 0.3, (8, 16): 0.0, (16, 16): 0.3}), claim, METRIC, SEEDS)
    assert large.verdict == Verdict.UNRESOLVED and large.deciding.low > 0.03
    assert matters_little(grid({(8, 4): 0.0, (8, 16): 0.1}), claim, METRIC, SEEDS).verdict == Verdict.NOT_MEASURED


def logged(values: dict[str, np.ndarray]) -> pd.DataFrame:
    """A run's logged updates: step 0 (the base model, no statistics) then one row per update."""
    updates = len(next(iter(values.values())))
    return pd.DataFrame({"step": np.arange(updates + 1), **{k: np.r_[np.nan, v] for k, v in values.items()}})


def test_training_statistics_compare_by_welch_interval_over_the_last_quarter() -> None:
    rng = np.random.default_rng(0)
    early = np.full(24, 9.0)  # the first three quarters are not compared
    high = np.r_[early, 1.0 + 0.01 * rng.standard_normal(8)]
    low = np.r_[early, 0.5 + 0.01 * rng.standard_normal(8)]
    claim = "entropy and length blow up with the bonus"
    clear = training_statistic_rises(logged({"entropy": high, "length": high}), logged({"entropy": low, "length": low}),
                                     ["entropy", "length"], claim, ("with", "without"))
    assert clear.verdict == Verdict.REPRODUCED and "4 block means of the last 8 updates" in clear.uncertainty
    assert "entropy: 1.00" in clear.measured
    half = training_statistic_rises(logged({"entropy": high, "length": low}), logged({"entropy": low, "length": low}),
                                    ["entropy", "length"], claim, ("with", "without"))
    assert half.verdict == Verdict.PARTLY
    reversal = training_statistic_rises(logged({"entropy": low}), logged({"entropy": high}), ["entropy"], claim,
                                        ("a", "b"))
    assert reversal.verdict == Verdict.NOT_REPRODUCED
    lower = training_statistic_rises(logged({"entropy": low}), logged({"entropy": high}), ["entropy"], claim,
                                     ("a", "b"), claimed=-1)
    assert lower.verdict == Verdict.REPRODUCED
    missing = training_statistic_rises(logged({"entropy": high}), logged({"entropy": high}).iloc[:1], ["entropy"],
                                       claim, ("a", "b"))
    assert missing.verdict == Verdict.NOT_MEASURED


def run_history(rewards: np.ndarray, batch: int = 64) -> pd.DataFrame:
    """One run's logged rows: step 0, then one update of `batch` rollouts per reward."""
    steps = np.arange(len(rewards) + 1)
    return pd.DataFrame({"step": steps, "rollouts": steps * batch, "reward": np.r_[np.nan, rewards]})


def test_the_gap_widens_when_training_reward_rises_more_than_validation() -> None:
    rng = np.random.default_rng(1)
    rising = np.linspace(0.3, 0.9, 64) + 0.01 * rng.standard_normal(64)  # 64 updates of 64 rollouts: 4,096
    flat = np.full(64, 0.6) + 0.01 * rng.standard_normal(64)
    evaluations = (1024, 1536, 2048, 3072, 4096)
    stalled = pd.concat([counts(0.0, r) for r in evaluations])  # the same policy at every evaluation
    improved = pd.concat([counts(s, r) for s, r in zip((0.0, 0.0, 0.0, 0.1, 0.3), evaluations)])
    claim = "the training reward pulls away from the validation reward"
    gap = gap_widens(run_history(rising), stalled, METRIC, claim, SEEDS)
    assert gap.verdict == Verdict.REPRODUCED
    assert "(2,048 -> 4,096 rollouts)" in gap.measured and "training reward 0.5" in gap.measured
    # the two points' windows: updates since the evaluation before each (1,536 and 3,072)
    assert "block means of 8 and 16 updates" in gap.uncertainty and "1 seed x 200 problems" in gap.uncertainty
    assert gap.deciding.estimate == pytest.approx(0.28, abs=0.03)  # the training rise; validation did not move
    assert gap_widens(run_history(flat), stalled, METRIC, claim, SEEDS).verdict == Verdict.UNRESOLVED
    assert gap_widens(run_history(flat), improved, METRIC, claim, SEEDS).verdict == Verdict.NOT_REPRODUCED
    assert gap_widens(run_history(rising[::-1]), stalled, METRIC, claim, SEEDS).verdict == Verdict.NOT_REPRODUCED
    assert gap_widens(run_history(rising), counts(0.0, 4096), METRIC, claim, SEEDS).verdict == Verdict.NOT_MEASURED
    early = pd.concat([counts(0.0, r) for r in (2048, 3072, 4096)])  # one evaluation within half the run
    assert gap_widens(run_history(rising), early, METRIC, claim, SEEDS).verdict == Verdict.NOT_MEASURED
    with pytest.raises(ValueError, match="one run's updates"):
        gap_widens(pd.concat([run_history(rising).assign(seed=s) for s in (0, 1)]), stalled, METRIC, claim, SEEDS)


def train_pass(correct: list[int]) -> pd.DataFrame:
    return pd.DataFrame({"id": range(len(correct)), "correct": correct, "samples": 8})


def test_pass_rates_pile_up_at_zero_and_one_for_small_n() -> None:
    claim = "small n piles problems at 0 and 1"
    piled = train_pass([0] * 40 + [8] * 40 + [4] * 20)
    even = train_pass([4] * 100)

    def measured(small: pd.DataFrame, large: pd.DataFrame, large_at: int = 4096) -> pd.DataFrame:
        return pd.concat([small.assign(n=4, rollouts=4096), large.assign(n=32, rollouts=large_at),
                          even.assign(n=4, rollouts=0), even.assign(n=32, rollouts=0)])

    clear = piles_up(measured(piled, even), 4, 32, claim, SEEDS)
    assert clear.verdict == Verdict.REPRODUCED
    assert "4,096 rollouts, validation problems; none of 8 right: 40% (n = 4) vs 0% (n = 32)" in clear.measured
    assert clear.deciding.estimate == pytest.approx(0.4) and "1 seed x 100 problems" in clear.uncertainty
    assert piles_up(measured(even, piled), 4, 32, claim, SEEDS).verdict == Verdict.NOT_REPRODUCED
    assert piles_up(measured(even, even), 4, 32, claim, SEEDS).verdict == Verdict.UNRESOLVED  # no variance to scale
    assert piles_up(measured(train_pass([0] * 40 + [4] * 60), even), 4, 32, claim, SEEDS).verdict == Verdict.PARTLY
    # n = 32 measured at another compute: the comparison falls back to the compute both have (the start).
    assert "0 rollouts" in piles_up(measured(piled, even, large_at=2048), 4, 32, claim, SEEDS).measured
    assert piles_up(measured(piled, even), 4, 64, claim, SEEDS).verdict == Verdict.NOT_MEASURED
    # Two seeds, each piling up a little differently: paired by seed, with their own seed variance.
    other = train_pass([0] * 35 + [8] * 45 + [4] * 20)
    two = pd.concat([measured(piled, even).assign(seed=0), measured(other, even).assign(seed=1)])
    both = piles_up(two, 4, 32, claim, SEEDS)
    assert both.verdict == Verdict.REPRODUCED and "2 seeds x 100 problems" in both.uncertainty
    assert both.deciding.estimate == pytest.approx(0.375)
    own = piles_up(two, 4, 32, claim, None)  # two seeds' own variance alone: one degree of freedom, t = 12.7
    assert own.verdict == Verdict.UNRESOLVED and own.deciding.estimate == pytest.approx(0.375)
    # Matched epochs: n = 32 at 4,096 against n = 4 at 512 (both drew 128 problems), not at 4,096.
    early = pd.concat([measured(even, even), piled.assign(n=4, rollouts=512)])
    epochs = piles_up(early, 4, 32, claim, SEEDS, matched="epochs")
    assert epochs.verdict == Verdict.REPRODUCED and epochs.deciding.estimate == pytest.approx(0.4)
    assert "n = 4 at 512 rollouts, n = 32 at 4,096 (the same problems drawn)" in epochs.measured
    assert piles_up(early, 4, 32, claim, SEEDS).verdict == Verdict.UNRESOLVED  # matched compute: both even at 4,096
    assert piles_up(measured(piled, even), 4, 32, claim, SEEDS, matched="epochs").verdict == Verdict.NOT_MEASURED
    with pytest.raises(ValueError, match="matched: 'updates'; allowed: compute, epochs"):
        piles_up(early, 4, 32, claim, SEEDS, matched="updates")


def test_wins_on_most_sets() -> None:
    claim = "larger n wins on most sets"
    table = scores({"up": 0.2, "same": 0.0, "level": 0.0, "down": -0.2}, by="policy")

    def sets(**pairs: tuple[str, str] | None) -> dict[str, Contrast | None]:
        return {name: None if pair is None else Contrast.difference(table, *pair, problems=name)
                for name, pair in pairs.items()}

    up, tie, down = ("up", "same"), ("level", "same"), ("down", "same")  # tie: 0 [-0.06, +0.06], unresolved
    names = ("n = 32", "n = 4")
    reproduced = wins_on_most(sets(easy=up, hard=up, veryeasy=tie), claim, names, METRIC, SEEDS)
    assert reproduced.verdict == Verdict.REPRODUCED
    assert "wins beyond noise on 2 of 3, losses on 0" in reproduced.measured and "easy +0.1" in reproduced.measured
    assert wins_on_most(sets(easy=up, hard=tie, veryeasy=tie), claim, names, METRIC, SEEDS).verdict == Verdict.PARTLY
    assert wins_on_most(sets(easy=tie, hard=tie), claim, names, METRIC, SEEDS).verdict == Verdict.UNRESOLVED
    assert wins_on_most(sets(easy=up, hard=up, veryeasy=tie), claim, names, METRIC, SEEDS).p_value == pytest.approx(
        Contrast.difference(table, *up).interval(SEEDS).p_value())  # the majority's weakest win
    assert wins_on_most(sets(easy=down, hard=down, veryeasy=up), claim, names, METRIC,
                        SEEDS).verdict == Verdict.NOT_REPRODUCED
    assert wins_on_most(sets(easy=up, hard=down), claim, names, METRIC,
                        SEEDS).verdict == Verdict.NOT_REPRODUCED  # one win, one loss
    assert wins_on_most(sets(easy=up, hard=down, veryeasy=tie), claim, names, METRIC,
                        SEEDS).verdict == Verdict.NOT_REPRODUCED
    # A set one policy was not scored on is left out: one win of one.
    assert wins_on_most(sets(easy=up, hard=None), claim, names, METRIC, SEEDS).verdict == Verdict.REPRODUCED
    assert wins_on_most(sets(easy=None), claim, names, METRIC, SEEDS).verdict == Verdict.NOT_MEASURED
    assert wins_on_most({}, claim, names, METRIC, SEEDS).verdict == Verdict.NOT_MEASURED


def test_the_planners_regret_is_a_claim_of_no_loss() -> None:
    claim = "the planner loses nothing against the best n"
    table = scores({4: 0.2, 8: 0.198, 16: -0.1})
    assert optimum(table, SEEDS).best == 4
    close = planner_regret(table, 8, claim, METRIC, SEEDS)  # within noise of the best, but not within the margin
    assert close.verdict == Verdict.UNRESOLVED
    assert close.deciding.estimate == pytest.approx(table[4].mean() - table[8].mean())
    assert close.deciding.high > 0.03
    wrong = planner_regret(table, 16, claim, METRIC, SEEDS)
    regret = table.mean().max() - table[16].mean()
    shown = float(re.search(r"regret (\d\.\d+)$", wrong.measured)[1])
    assert wrong.verdict == Verdict.NOT_REPRODUCED and shown == pytest.approx(regret, abs=1e-3)  # shown to 3 decimals
    assert wrong.deciding.estimate == pytest.approx(regret)
    assert planner_regret(table, 64, claim, METRIC, SEEDS).verdict == Verdict.NOT_MEASURED
    assert planner_regret(table, None, claim, METRIC, SEEDS).measured == "the planner could not be fitted"


def test_the_planner_that_picks_the_best_has_no_regret() -> None:
    table = scores({4: 0.2, 8: 0.198, 16: -0.1})
    assert optimum(table, SEEDS).best == 4
    claim = "the planner loses nothing against the best n"
    picked = planner_regret(table, 4, claim, METRIC, SEEDS)
    # A zero regret is no evidence (the best is picked from the same data): every other n's lead over the pick
    # decides, and n = 8's reaches past the margin.
    assert picked.measured.endswith("regret 0.000") and picked.verdict == Verdict.UNRESOLVED and picked.p_value > 0.05
    assert picked.deciding.estimate == pytest.approx(table[8].mean() - table[4].mean())
    clear = planner_regret(scores({4: 0.2, 8: -0.1, 16: -0.2}), 4, claim, METRIC, SEEDS)
    assert clear.verdict == Verdict.REPRODUCED and clear.p_value < 0.05


# ---- the bandit ----------------------------------------------------------------------------------


def bandit_curves(final: dict[int, float], se: float) -> pd.DataFrame:
    return pd.DataFrame([{"n": n, "rollouts": budget, "suboptimality": value * budget / 4096, "suboptimality_se": se}
                         for n, value in final.items() for budget in (1024, 4096)])


def test_the_smallest_n_wins_the_bandit_beyond_its_standard_errors() -> None:
    claim = "one problem: the smallest n wins"
    clear = smallest_n_wins(bandit_curves({2: 0.1, 8: 0.2, 32: 0.4}, se=0.005), [1024, 4096], claim)
    assert clear.verdict == Verdict.REPRODUCED and "1,024: 2, 4,096: 2" in clear.measured
    level = smallest_n_wins(bandit_curves({2: 0.1, 8: 0.101}, se=0.01), [4096], claim)
    assert level.verdict == Verdict.UNRESOLVED and level.family == "bandit"  # no margin on a bandit
    reversal = smallest_n_wins(bandit_curves({2: 0.3, 8: 0.1}, se=0.005), [1024, 4096], claim)
    assert reversal.verdict == Verdict.NOT_REPRODUCED
    assert smallest_n_wins(bandit_curves({2: 0.1}, se=0.01), [4096], claim).verdict == Verdict.NOT_MEASURED


def test_the_bandits_optimum_and_the_n_within_its_standard_errors() -> None:
    found = bandit_optimum(bandit_curves({2: 0.1, 8: 0.101, 32: 0.4}, se=0.005), 4096)
    assert (found.best, found.tied) == (2, (2, 8)) and found.value == pytest.approx(0.9)
    one_seed = bandit_optimum(bandit_curves({2: 0.1, 8: 0.2}, se=np.nan), 4096)
    assert one_seed.tied == (2, 8)  # no standard error from one seed: nothing is resolved


def test_bandit_optima_by_budget_decide_whether_n_star_grows() -> None:
    # n = 2 leads at 1,024 rollouts, n = 32 at 4,096; n = 8 ties n = 2 at 1,024 (standard errors 0.005 over 8 seeds)
    curves = pd.DataFrame([{"n": n, "rollouts": budget, "suboptimality": value, "suboptimality_se": 0.005, "seeds": 8}
                           for (n, budget), value in {(2, 0): 0.9, (8, 0): 0.9, (32, 0): 0.9, (2, 1024): 0.5,
                                                      (8, 1024): 0.5, (32, 1024): 0.7, (2, 4096): 0.4,
                                                      (8, 4096): 0.35, (32, 4096): 0.3}.items()])
    optima = bandit_optima(curves, [512, 1024, 4096])
    assert optima["rollouts"].tolist() == [1024, 4096]  # at 512 no curve has taken a step
    assert optima["n"].tolist() == [2, 32] and optima["score"].tolist() == pytest.approx([0.5, 0.7])
    assert optima["within noise"].tolist() == [(2, 8), (32,)]
    tied_lead = optima["lead"].iloc[0]  # over n = 8, level with the best: not the best over itself
    assert tied_lead.estimate == pytest.approx(0.0) and tied_lead.low < 0 < tied_lead.high
    lead = optima["lead"].iloc[-1]  # over n = 8, the runner-up at 4,096
    half = stats.t.ppf(0.975, 14) * 0.005 * np.sqrt(2)  # two means of 8 seeds: Student's t, 14 degrees of freedom
    assert (lead.estimate, lead.high - lead.estimate) == pytest.approx((0.05, half), abs=1e-9)
    assert seeds_multiplier(curves) == pytest.approx(2.1448, abs=1e-4)
    assert seeds_multiplier(curves.drop(columns="seeds")) == pytest.approx(1.96, abs=1e-3)
    grows = bandit_n_star_grows(optima, "n* grows")
    assert grows.verdict == Verdict.REPRODUCED and "n* by budget: 1,024: 2, 4,096: 32" in grows.measured
    assert "n within noise of n*: {2, 8} at 1,024, {32} at 4,096" in grows.uncertainty
    # The smallest n leads at every budget: n* does not grow.
    stays = bandit_optima(bandit_curves({2: 0.1, 8: 0.2, 32: 0.4}, se=0.005), [1024, 4096])
    assert bandit_n_star_grows(stays, "n* grows").verdict == Verdict.NOT_REPRODUCED
    # n = 8 within noise of n = 2 at both budgets: the sets leave it open.
    level = bandit_optima(bandit_curves({2: 0.1, 8: 0.101, 32: 0.4}, se=0.005), [1024, 4096])
    assert bandit_n_star_grows(level, "n* grows").verdict == Verdict.UNRESOLVED
    assert bandit_n_star_grows(optima.iloc[:1], "n* grows").verdict == Verdict.NOT_MEASURED


def test_combining_the_parts_of_a_claim() -> None:
    r, e, u, n = (Decision(v, p) for v, p in ((Verdict.REPRODUCED, 0.01), (Verdict.EQUIVALENT, 0.02),
                                              (Verdict.UNRESOLVED, 0.4), (Verdict.NOT_REPRODUCED, 0.003)))
    assert [combine(p).verdict for p in ([r, r], [r, u], [u, u], [e, e], [e, u], [u, n], [r, n], [])] == [
        Verdict.REPRODUCED, Verdict.PARTLY, Verdict.UNRESOLVED, Verdict.EQUIVALENT, Verdict.UNRESOLVED,
        Verdict.NOT_REPRODUCED, Verdict.MIXED, Verdict.NOT_MEASURED]  # parts resolved both ways: no refutation
    # Every part needed: the largest p (intersection-union); any one part: the smallest, times the parts.
    assert combine([r, n], any_refutes=True).verdict == Verdict.NOT_REPRODUCED  # "best against every other"
    assert combine([r, Decision(Verdict.REPRODUCED, 0.04)]).p_value == 0.04
    assert combine([r, u]).p_value == pytest.approx(0.02)
    assert combine([e, u]).p_value == 0.4  # unresolved: never before a resolved finding under Holm
    assert combine([u, n]).p_value == pytest.approx(0.006)
    assert combine([r, n]).p_value == pytest.approx(0.02)  # mixed asserts both sides: the larger Bonferroni p
    assert combine([Decision(Verdict.REPRODUCED)]).p_value is None  # an order of optima: no test


def test_a_verdict_is_resolved_exactly_when_its_p_value_reaches_five_percent() -> None:
    """Each rule's p-value crosses 0.05 where its 95% interval crosses zero or the margin."""
    for estimate in np.linspace(-0.12, 0.12, 49) + 0.0013:  # off the boundaries, where rounding decides
        interval = Interval(estimate, estimate - 0.05, estimate + 0.05, dof=7.0)
        for decision in (direction(interval), equivalence(interval), no_gain(interval)):
            resolved = decision.verdict != Verdict.UNRESOLVED
            assert resolved == (decision.p_value <= 0.05 + 1e-12), (estimate, decision)
    inside = equivalence(Interval(0.0, -0.02, 0.02, dof=np.inf))
    assert inside.verdict == Verdict.REPRODUCED and inside.p_value < 0.05
    beyond = direction(Interval(0.0, -0.1, 0.1))
    assert beyond.verdict == Verdict.UNRESOLVED
    assert direction(Interval(0.0, -0.02, 0.02)).verdict == Verdict.EQUIVALENT


def test_fiellers_interval_for_the_crossing_covers_the_true_ratio() -> None:
    """`ratio_interval`: numerator / denominator of two contrasts on the same seeds and
    problems (their errors correlated, as the level and slope of one fitted line are).
    Over 400 draws with known ratio 1.5, the 95% interval covers it about 95% of the time;
    its ends are ordered and hold the estimate."""
    rng = np.random.default_rng(4)
    index = pd.Index(range(8), name="seed")
    covered = 0
    for _ in range(400):
        shared = rng.normal(0, 0.2, (8, 1)) + rng.normal(0, 0.05, (8, 50))  # seeds carry the noise, as in the book
        level = Contrast({"validation": pd.DataFrame(0.3 + shared + rng.normal(0, 0.1, (8, 1)), index=index)})
        slope = Contrast({"validation": pd.DataFrame(0.2 + 0.5 * shared + rng.normal(0, 0.1, (8, 1)), index=index)})
        found = ratio_interval(level, slope, None)
        assert found.low <= found.estimate <= found.high
        covered += found.low <= 1.5 <= found.high
    assert 0.92 <= covered / 400 <= 0.975  # binomial sd at 0.95: 0.011


def test_a_primarys_design_states_its_power_before_and_after_its_confirmatory_runs() -> None:
    budgets = [512, 1024, 2048, 4096]
    rates = {b: {4: 0.0, 32: -2.0 + 0.4 * k} for k, b in enumerate(budgets)}
    selection = logit_grid(rates, seeds=2, seed_sd=0.1, rng_seed=1)
    confirmed = logit_grid(rates, seeds=8, seed_sd=0.1, rng_seed=2)
    design = growth_design(selection, confirmed, 0.03, SEEDS, alpha=0.025)
    assert (design["seeds"], design["problems"], design["alpha"]) == (8, PROBLEMS, 0.025)
    assert 0 < design["design power"] < 1 and 0 < design["achieved power"] < 1
    assert design["seeds needed"] >= 2 and design["effect (logit)"] > 0.03  # 0.03 at p = 0.5 is 0.12 logit
    # Holm's first step over more primaries asks more: less power at the same seeds.
    assert growth_design(selection, confirmed, 0.03, SEEDS, alpha=0.05)["achieved power"] > design["achieved power"]
    assert np.isnan(growth_design(selection, {512: confirmed[512]}, 0.03, SEEDS)["achieved power"])
