"""Every verdict function on synthetic tables with a known answer: a clear effect, a tie
within noise, a reversal and a missing run.

Synthetic evaluations mimic the run store: 200 validation problems, 4 samples each, drawn
with common random numbers (every policy sees the same uniforms, as every run uses the
same evaluation seed), so paired comparisons are as sharp as in the book."""

import re
import zlib

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from isobook.analysis.findings.bandit_claims import bandit_optima, bandit_optimum, smallest_n_wins
from isobook.analysis.findings.claims import (
    best_candidate,
    gap_widens,
    greater,
    n_star_grows,
    optima_by_budget,
    optimum_above,
    optimum_of,
    piles_up,
    planner_regret,
    spread_comparison,
    training_statistic_rises,
    wins_on_most,
)
from isobook.analysis.findings.statistics import Interval, optimum, paired_interval, problem_scores, seeds_multiplier
from isobook.analysis.findings.verdicts import Verdict, combine
from isobook.tasks.metrics import Metric

PROBLEMS, SAMPLES = 200, 4
METRIC = Metric("avg", 4)
BASE = np.random.default_rng(7).uniform(0.25, 0.75, PROBLEMS)  # each problem's pass rate before any shift
UNIFORMS = np.random.default_rng(8).random((PROBLEMS, SAMPLES))  # common random numbers


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


def scores(shifts: dict[object, float], by: str = "n") -> pd.DataFrame:
    return problem_scores(pd.concat([counts(s, **{by: key}) for key, s in shifts.items()]), [by], METRIC)


def test_paired_interval_of_identical_and_shifted_scores() -> None:
    same = paired_interval(np.ones(10), np.ones(10))
    assert (same.estimate, same.low, same.high, same.sign) == (0, 0, 0, 0)
    shifted = paired_interval(np.arange(10) + 0.5, np.arange(10.0))
    assert (shifted.low, shifted.high, shifted.sign) == (0.5, 0.5, 1)
    noisy = paired_interval(np.array([1.0, 0, 1, 0, 1, 1]), np.array([0.0, 1, 1, 0, 0, 1]))
    assert noisy.low < 0 < noisy.high and noisy.estimate == pytest.approx(1 / 6)
    assert str(Interval(0.0123, -0.004, 0.031)) == "+0.012 [-0.004, +0.031]"


def test_problem_scores_read_each_run_at_its_latest_evaluation_within_the_compute() -> None:
    table = pd.concat([counts(-0.5, rollouts=0, n=4), counts(0.0, rollouts=512, n=4), counts(0.2, rollouts=1024, n=4),
                       counts(-0.5, rollouts=0, n=32), counts(0.1, rollouts=1024, n=32),
                       counts(0.3, rollouts=1024, n=32, seed=1).assign(seed=1)])
    table["seed"] = table["seed"].fillna(0)
    at_512 = problem_scores(table, ["n"], METRIC, rollouts=512)
    assert list(at_512.columns) == [4]  # n = 32 has made no update by 512 rollouts: no candidate there
    assert at_512[4].mean() == pytest.approx(counts(0.0, rollouts=512, n=4)["correct"].mean() / 4)
    last = problem_scores(table, ["n"], METRIC)
    both_seeds = (counts(0.1, rollouts=1024, n=32)["correct"].to_numpy()
                  + counts(0.3, rollouts=1024, n=32, seed=1)["correct"].to_numpy()) / 8
    assert last[32].to_numpy() == pytest.approx(both_seeds)  # averaged over seeds, problem by problem


def test_a_small_consistent_gain_is_resolved_only_because_problems_are_paired() -> None:
    rng = np.random.default_rng(3)
    base = rng.uniform(0, 1, 200)  # problems differ a lot from one another...
    better = base + 0.02 + 0.01 * rng.standard_normal(200)  # ...and the gain is small but steady
    assert paired_interval(better, base).sign == 1
    unpaired = stats.bootstrap((better, base), lambda a, b, axis: a.mean(axis) - b.mean(axis), paired=False,
                               vectorized=True, rng=np.random.default_rng(0), method="percentile")
    assert unpaired.confidence_interval.low < 0  # ignoring the pairing, the same gain is a tie


def test_optimum_keeps_the_candidates_within_noise() -> None:
    found = optimum(scores({4: 0.0, 8: 0.005, 16: -0.15}))
    assert found.tied == (4, 8) and found.best in (4, 8)
    assert found.runner_up.sign == 0


def test_the_best_candidate_clear_tie_reversal_partly_and_missing() -> None:
    claim = "the preset is best"
    clear = best_candidate(scores({"preset": 0.1, "a": 0.0, "b": -0.05}, by="cell"), "preset", claim, METRIC)
    assert clear.verdict == Verdict.REPRODUCED and "preset - a: +0." in clear.uncertainty
    tie = best_candidate(scores({"preset": 0.005, "a": 0.0}, by="cell"), "preset", claim, METRIC)
    assert tie.verdict == Verdict.TIE
    reversal = best_candidate(scores({"preset": -0.1, "a": 0.0, "b": -0.2}, by="cell"), "preset", claim, METRIC)
    assert reversal.verdict == Verdict.NOT_REPRODUCED
    partly = best_candidate(scores({"preset": 0.1, "a": 0.1, "b": -0.1}, by="cell"), "preset", claim, METRIC)
    assert partly.verdict == Verdict.PARTLY
    missing = best_candidate(scores({"a": 0.0, "b": 0.1}, by="cell"), "preset", claim, METRIC)
    assert missing.verdict == Verdict.NOT_MEASURED


def growth(shifts: dict[int, dict[int, float]]) -> pd.DataFrame:
    """Evaluations of each n at each budget: shifts[budget][n]."""
    return pd.concat([counts(s, rollouts=budget, n=n) for budget, row in shifts.items() for n, s in row.items()])


def test_n_star_grows_clear_tie_reversal_and_missing() -> None:
    budgets = [512, 1024, 2048, 4096]
    claim = "n* grows with C"
    grows = growth({512: {4: 0.2, 16: 0.0}, 1024: {4: 0.25, 16: 0.25}, 2048: {4: 0.3, 16: 0.45},
                    4096: {4: 0.3, 16: 0.46}})
    optima = optima_by_budget(grows, ["n"], METRIC, budgets)
    assert optima["n"].tolist() == [4, 4, 16, 16]
    assert optima["within noise"].iloc[0] == (4,) and optima["within noise"].iloc[-1] == (16,)
    assert n_star_grows(optima, claim).verdict == Verdict.REPRODUCED
    two_budgets = growth({512: {4: 0.2, 16: 0.0}, 4096: {4: 0.3, 16: 0.5}})
    assert n_star_grows(optima_by_budget(two_budgets, ["n"], METRIC, [512, 4096]), claim).verdict == Verdict.REPRODUCED
    tie = growth({512: {4: 0.0, 16: 0.0}, 4096: {4: 0.3, 16: 0.305}})
    assert n_star_grows(optima_by_budget(tie, ["n"], METRIC, budgets), claim).verdict == Verdict.TIE
    flat = growth({512: {4: 0.2, 16: 0.0}, 4096: {4: 0.4, 16: 0.2}})  # the smallest n wins throughout
    found = n_star_grows(optima_by_budget(flat, ["n"], METRIC, budgets), claim)
    assert found.verdict == Verdict.NOT_REPRODUCED
    assert "n* by budget: 512: 4, 1,024: 4, 2,048: 4, 4,096: 4" in found.measured
    joint = pd.concat([counts(s, rollouts=r, batch_problems=bp, n=n)
                       for r, shifts in {512: {(8, 4): 0.2, (4, 8): 0.0}, 4096: {(8, 4): 0.3, (4, 8): 0.45}}.items()
                       for (bp, n), s in shifts.items()])
    joint_optima = optima_by_budget(joint, ["batch_problems", "n"], METRIC, [512, 4096])
    assert joint_optima[["batch_problems", "n"]].values.tolist() == [[8, 4], [4, 8]]
    assert n_star_grows(joint_optima, claim).verdict == Verdict.REPRODUCED  # n read from the (B_p, n) pairs
    one_run = growth({512: {4: 0.2}, 4096: {4: 0.3}})
    assert n_star_grows(optima_by_budget(one_run, ["n"], METRIC, budgets), claim).verdict == Verdict.NOT_MEASURED


def test_a_seed_that_contradicts_the_pooled_growth_makes_it_a_tie() -> None:
    budgets, claim = [512, 4096], "n* grows with C"
    one = growth({512: {4: 0.2, 16: 0.0}, 4096: {4: 0.3, 16: 0.5}})  # grows
    agrees = growth({512: {4: 0.1, 16: 0.0}, 4096: {4: 0.3, 16: 0.4}})  # grows too
    contradicts = growth({512: {4: 0.2, 16: 0.0}, 4096: {4: 0.4, 16: 0.35}})  # the smallest n wins throughout
    pooled = pd.concat([one.assign(seed=0), contradicts.assign(seed=1)])
    optima = optima_by_budget(pooled, ["n"], METRIC, budgets)
    assert n_star_grows(optima, claim).verdict == Verdict.REPRODUCED  # the seed average alone grows
    per_seed = {0: optima_by_budget(one, ["n"], METRIC, budgets), 1: optima_by_budget(contradicts, ["n"], METRIC, budgets)}
    split = n_star_grows(optima, claim, per_seed=per_seed)
    assert split.verdict == Verdict.TIE
    assert "per seed 0: 4 -> 16, 1: 4 -> 4" in split.measured
    assert "each seed alone: 0 reproduced, 1 not reproduced" in split.uncertainty
    both = pd.concat([one.assign(seed=0), agrees.assign(seed=1)])
    agreeing = {0: per_seed[0], 1: optima_by_budget(agrees, ["n"], METRIC, budgets)}
    assert n_star_grows(optima_by_budget(both, ["n"], METRIC, budgets), claim,
                        per_seed=agreeing).verdict == Verdict.REPRODUCED


def test_one_optimum_above_another_clear_tie_reversal() -> None:
    def named(name: str, shifts: dict[int, float]) -> tuple:
        return name, *optimum_of(pd.concat([counts(s, n=n) for n, s in shifts.items()]), ["n"], METRIC)

    claim = "worst@4 peaks at a larger n than best@4"
    clear = optimum_above(named("worst@4", {4: 0.0, 16: 0.1}), named("best@4", {4: 0.1, 16: 0.0}), claim)
    assert clear.verdict == Verdict.REPRODUCED and "n within noise: worst@4 {16}, best@4 {4}" in clear.uncertainty
    tie = optimum_above(named("worst@4", {4: 0.0, 16: 0.004}), named("best@4", {4: 0.1, 16: 0.0}), claim)
    assert tie.verdict == Verdict.TIE and "worst@4 {4, 16}" in tie.uncertainty
    reversal = optimum_above(named("worst@4", {4: 0.1, 16: 0.0}), named("best@4", {4: 0.1, 16: 0.0}), claim)
    assert reversal.verdict == Verdict.NOT_REPRODUCED  # both peak at n = 4, beyond noise
    censored = optimum_above(named("worst@4", {4: 0.1, 16: 0.0}), named("best@4", {4: 0.1, 16: 0.0}), claim, floor=4)
    assert censored.verdict == Verdict.TIE and "both at the smallest n tried (4)" in censored.uncertainty
    above_floor = optimum_above(named("a", {4: 0.1, 16: 0.0}), named("b", {4: 0.0, 16: 0.1}), claim, floor=4)
    assert above_floor.verdict == Verdict.NOT_REPRODUCED  # the second's optimum lies above: no censoring
    nothing = optimum_of(counts(0.0, n=4).iloc[:0], ["n"], METRIC)
    assert nothing == (None, [])
    assert optimum_above(("worst@4", *nothing), named("best@4", {4: 0.1}), claim).verdict == Verdict.NOT_MEASURED


def grid(shifts: dict[tuple[int, int], float]) -> pd.DataFrame:
    table = pd.concat([counts(s, batch_problems=bp, n=n) for (bp, n), s in shifts.items()])
    return problem_scores(table, ["batch_problems", "n"], METRIC)


def test_spread_over_n_against_spread_over_bp() -> None:
    claim = "B_p matters less than n"
    # By hand: ranges over B_p at n = 4 and 8 are 0.02 and 0.01; over n at B_p = 8 and 16, 0.10 and 0.09.
    exact = pd.DataFrame({(8, 4): [0.50] * 10, (16, 4): [0.52] * 10, (8, 8): [0.60] * 10, (16, 8): [0.61] * 10})
    exact.columns = pd.MultiIndex.from_tuples(exact.columns, names=["batch_problems", "n"])
    by_hand = spread_comparison(exact, claim, METRIC)
    assert "moves 0.015 when only B_p changes (2 pairs) vs 0.095 when only n changes (2 pairs)" in by_hand.measured
    assert "+0.080 [+0.080, +0.080]" in by_hand.uncertainty and by_hand.verdict == Verdict.REPRODUCED
    clear = spread_comparison(grid({(8, 4): 0.2, (8, 16): 0.0, (16, 4): 0.21, (16, 16): 0.01}), claim, METRIC)
    assert clear.verdict == Verdict.REPRODUCED
    assert "moves 0.00" in clear.measured and "vs 0.19" in clear.measured
    reversal = spread_comparison(grid({(8, 4): 0.2, (8, 16): 0.2, (16, 4): 0.0, (16, 16): 0.0}), claim, METRIC)
    assert reversal.verdict == Verdict.NOT_REPRODUCED
    tie = spread_comparison(grid({(8, 4): 0.0, (8, 16): 0.0, (16, 4): 0.0, (16, 16): 0.0}), claim, METRIC)
    assert tie.verdict == Verdict.TIE
    missing = spread_comparison(grid({(8, 4): 0.0, (8, 16): 0.1}), claim, METRIC)
    assert missing.verdict == Verdict.NOT_MEASURED
    assert spread_comparison(pd.DataFrame(), claim, METRIC).verdict == Verdict.NOT_MEASURED
    # Unequal groups: four n at one B_p, two B_p at one n, all equal but for noise: pairs keep it a tie.
    uneven = grid({(8, 4): 0.0, (8, 8): 0.0, (8, 16): 0.0, (8, 32): 0.0, (16, 8): 0.0})
    assert spread_comparison(uneven, claim, METRIC).verdict == Verdict.TIE


def test_greater_and_its_no_gain_form() -> None:
    base, trained = scores({"base": 0.0, "trained": -0.2}, by="policy")[["base", "trained"]].T.to_numpy()
    forgets = greater(base, trained, "hard-only training forgets easy", ("base", "hard-trained"), METRIC)
    assert forgets.verdict == Verdict.REPRODUCED and "base 0." in forgets.measured
    assert greater(trained, base, "x", ("a", "b"), METRIC).verdict == Verdict.NOT_REPRODUCED
    assert greater(base, base + 0.0, "x", ("a", "b"), METRIC).verdict == Verdict.TIE
    # A claim of no gain: "very easy data does not help" holds when the gain is negative.
    assert greater(trained, base, "x", ("a", "b"), METRIC, claimed=-1).verdict == Verdict.REPRODUCED
    assert greater(base, np.array([]), "x", ("a", "b"), METRIC).verdict == Verdict.NOT_MEASURED
    assert greater(None, base, "x", ("a", "b"), METRIC).verdict == Verdict.NOT_MEASURED


def test_a_seed_that_resolves_the_opposite_makes_greater_a_tie() -> None:
    pooled = scores({"a": 0.1, "b": 0.0}, by="policy")
    agree = {0: (pooled["a"], pooled["b"]), 1: (pooled["a"], pooled["b"])}
    assert greater(pooled["a"], pooled["b"], "x", ("a", "b"), METRIC, per_seed=agree).verdict == Verdict.REPRODUCED
    against = scores({"a": -0.1, "b": 0.0}, by="policy")
    mixed = greater(pooled["a"], pooled["b"], "x", ("a", "b"), METRIC, per_seed={0: agree[0], 1: (against["a"],
                                                                                                   against["b"])})
    assert mixed.verdict == Verdict.TIE and "each seed alone: 0 +0.099" in mixed.uncertainty


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
    improved = pd.concat([counts(0.0, 1024), counts(0.0, 1536), counts(0.0, 2048), counts(0.1, 3072), counts(0.3, 4096)])
    claim = "the training reward pulls away from the validation reward"
    gap = gap_widens(run_history(rising), stalled, METRIC, claim)
    assert gap.verdict == Verdict.REPRODUCED
    assert "(2,048 -> 4,096 rollouts)" in gap.measured and "training reward 0.5" in gap.measured
    # the two points' windows: updates since the evaluation before each (1,536 and 3,072)
    assert "block means of 8 and 16 updates" in gap.uncertainty and "over 200 problems" in gap.uncertainty
    assert gap_widens(run_history(flat), stalled, METRIC, claim).verdict == Verdict.TIE
    assert gap_widens(run_history(flat), improved, METRIC, claim).verdict == Verdict.NOT_REPRODUCED
    assert gap_widens(run_history(rising[::-1]), stalled, METRIC, claim).verdict == Verdict.NOT_REPRODUCED
    assert gap_widens(run_history(rising), counts(0.0, 4096), METRIC, claim).verdict == Verdict.NOT_MEASURED
    with pytest.raises(ValueError, match="one run's updates"):
        gap_widens(pd.concat([run_history(rising).assign(seed=s) for s in (0, 1)]), stalled, METRIC, claim)


def bandit_curves(final: dict[int, float], se: float) -> pd.DataFrame:
    return pd.DataFrame([{"n": n, "rollouts": budget, "suboptimality": value * budget / 4096, "suboptimality_se": se}
                         for n, value in final.items() for budget in (1024, 4096)])


def test_the_smallest_n_wins_the_bandit_beyond_its_standard_errors() -> None:
    claim = "one problem: the smallest n wins"
    clear = smallest_n_wins(bandit_curves({2: 0.1, 8: 0.2, 32: 0.4}, se=0.005), [1024, 4096], claim)
    assert clear.verdict == Verdict.REPRODUCED and "1,024: 2, 4,096: 2" in clear.measured
    assert smallest_n_wins(bandit_curves({2: 0.1, 8: 0.101}, se=0.01), [4096], claim).verdict == Verdict.TIE
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
    assert n_star_grows(optima, "n* grows").verdict == Verdict.REPRODUCED


def train_pass(correct: list[int]) -> pd.DataFrame:
    return pd.DataFrame({"id": range(len(correct)), "correct": correct, "samples": 8})


def test_pass_rates_pile_up_at_zero_and_one_for_small_n() -> None:
    claim = "small n piles problems at 0 and 1"
    piled = train_pass([0] * 40 + [8] * 40 + [4] * 20)
    even = train_pass([4] * 100)

    def measured(small: pd.DataFrame, large: pd.DataFrame, large_at: int = 4096) -> pd.DataFrame:
        return pd.concat([small.assign(n=4, rollouts=4096), large.assign(n=32, rollouts=large_at),
                          even.assign(n=4, rollouts=0), even.assign(n=32, rollouts=0)])

    clear = piles_up(measured(piled, even), 4, 32, claim)
    assert clear.verdict == Verdict.REPRODUCED
    assert "4,096 rollouts; at pass@1 = 0: 40% (n = 4) vs 0% (n = 32)" in clear.measured
    assert piles_up(measured(even, piled), 4, 32, claim).verdict == Verdict.NOT_REPRODUCED
    assert piles_up(measured(even, even), 4, 32, claim).verdict == Verdict.TIE
    assert piles_up(measured(train_pass([0] * 40 + [4] * 60), even), 4, 32, claim).verdict == Verdict.PARTLY
    # n = 32 measured at another compute: the comparison falls back to the compute both have (the start).
    assert "0 rollouts" in piles_up(measured(piled, even, large_at=2048), 4, 32, claim).measured
    assert piles_up(measured(piled, even), 4, 64, claim).verdict == Verdict.NOT_MEASURED


def test_wins_on_most_sets() -> None:
    claim = "larger n wins on most sets"
    table = scores({"up": 0.1, "same": 0.0, "down": -0.1}, by="policy")
    up, same, down = (table[c].to_numpy() for c in ("up", "same", "down"))
    names = ("n = 32", "n = 4")
    assert wins_on_most({"easy": (up, same), "hard": (up, same), "veryeasy": (same, same)}, claim, names,
                        METRIC).verdict == Verdict.REPRODUCED
    assert wins_on_most({"easy": (up, same), "hard": (same, same), "veryeasy": (same, same)}, claim, names,
                        METRIC).verdict == Verdict.PARTLY
    assert wins_on_most({"easy": (same, same), "hard": (same, same)}, claim, names, METRIC).verdict == Verdict.TIE
    assert wins_on_most({"easy": (down, same), "hard": (down, same), "veryeasy": (up, same)}, claim, names,
                        METRIC).verdict == Verdict.NOT_REPRODUCED
    assert wins_on_most({"easy": (up, same), "hard": (down, same)}, claim, names,
                        METRIC).verdict == Verdict.NOT_REPRODUCED  # one win, one loss
    assert wins_on_most({"easy": (up, same), "hard": (down, same), "veryeasy": (same, same)}, claim, names,
                        METRIC).verdict == Verdict.NOT_REPRODUCED
    assert wins_on_most({}, claim, names, METRIC).verdict == Verdict.NOT_MEASURED


def test_the_planners_regret_is_a_claim_of_no_loss() -> None:
    claim = "the planner loses nothing against the best n"
    table = scores({4: 0.1, 8: 0.098, 16: -0.1})
    assert planner_regret(table, 4, claim, METRIC).verdict == Verdict.TIE  # the best: regret 0
    assert planner_regret(table, 8, claim, METRIC).verdict == Verdict.TIE  # within noise of the best
    wrong = planner_regret(table, 16, claim, METRIC)
    regret = table.mean().max() - table[16].mean()
    shown = float(re.search(r"regret (\d\.\d+)$", wrong.measured)[1])
    assert wrong.verdict == Verdict.NOT_REPRODUCED and shown == pytest.approx(regret, abs=1e-3)  # shown to 3 decimals
    assert planner_regret(table, 64, claim, METRIC).verdict == Verdict.NOT_MEASURED
    assert planner_regret(table, None, claim, METRIC).measured == "the planner could not be fitted"


def test_combining_the_parts_of_a_claim() -> None:
    r, t, n = Verdict.REPRODUCED, Verdict.TIE, Verdict.NOT_REPRODUCED
    assert [combine(p) for p in ([r, r], [r, t], [t, t], [r, n], [])] == [r, Verdict.PARTLY, t, n,
                                                                            Verdict.NOT_MEASURED]
