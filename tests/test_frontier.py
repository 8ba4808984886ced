"""Frontier analysis on synthetic curves whose answers are known."""

import warnings

import numpy as np
import pandas as pd
import pytest

from isobook.analysis.fits import SigmoidFit, fit_sigmoid, sigmoid
from isobook.analysis.frontier import (
    analyse_frontier,
    fit_curves,
    fit_optimal,
    frontier,
    measured_frontier,
    pass_summary,
    record_breaking,
    training_rewards,
)
from isobook.analysis.planner import ExtrapolationWarning, held_out_check, plan

N_VALUES = [2, 4, 8, 16, 32]
X = np.arange(6.0, 18.01, 0.5)  # log2 rollouts, 64 to 262k


def true_curve(n: int, x: np.ndarray) -> np.ndarray:
    """Small n rises early and plateaus low; large n rises late and higher (the paper's shape)."""
    return sigmoid(x, 0.1, 0.4 + 0.08 * np.log2(n), 8.0 + 0.8 * np.log2(n), 1.5)


def family(noise: float = 0.0, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [{"n": n, "batch_problems": 32, "rollouts": 2.0 ** x, "val_avg@4": float(y)}
            for n in N_VALUES for x, y in zip(X, true_curve(n, X) + rng.normal(0, noise, len(X)))]
    return pd.DataFrame(rows)


def test_a_noiseless_sigmoid_is_recovered() -> None:
    fit = fit_sigmoid(X, sigmoid(X, 0.1, 0.6, 10.4, 1.5))
    assert fit.midpoint == pytest.approx(10.4, rel=0.05)
    assert (fit.low, fit.high, fit.slope) == pytest.approx((0.1, 0.7, 1.5), rel=0.05)
    assert fit.rmse < 1e-4 and (fit.x_min, fit.x_max) == (6.0, 18.0)
    with pytest.raises(ValueError, match="at least 2 paired points"):
        fit_sigmoid([1.0], [0.5])


def test_record_breaking_keeps_first_points_of_new_best_buckets() -> None:
    assert record_breaking([0.10, 0.105, 0.12, 0.115, 0.13], bucket=0.01).tolist() == [True, False, True, False, True]
    with pytest.raises(ValueError, match="bucket: must be > 0"):
        record_breaking([0.1], bucket=0.0)


def test_the_record_breaking_filter_leaves_the_frontier_unchanged() -> None:
    points = family(noise=0.03, seed=1)
    bucket = 0.01
    for _, curve in points.groupby("n"):
        levels = np.floor(curve["val_avg@4"].to_numpy() / bucket + 1e-9)
        kept = record_breaking(curve["val_avg@4"], bucket)
        # the running best bucket at every point is the same from the kept points alone
        from_kept = np.maximum.accumulate(np.where(kept, levels, -np.inf))
        assert (from_kept == np.maximum.accumulate(levels)).all()
        assert kept.sum() < len(kept)  # noise made some points not records


def test_the_frontier_follows_the_best_curve_and_n_star_rises() -> None:
    fits = fit_curves(family(), by=["n"], metric="val_avg@4")
    assert sorted(fits) == [(n,) for n in N_VALUES]
    edge = frontier(fits, X, by=["n"])
    truth = np.array([max(N_VALUES, key=lambda n: true_curve(n, np.array([x]))[0]) for x in X])
    assert (edge["n"].to_numpy() == truth).mean() >= 0.9  # fits ~ truth; ties near crossings may flip
    assert (np.diff(edge["n"].to_numpy()) >= 0).all()  # n* grows with compute
    assert edge["n"].iloc[0] == 2 and edge["n"].iloc[-1] == 32
    # a curve competes only where it was measured
    short = {key: fit for key, fit in fits.items()}
    short[(32,)] = fit_sigmoid(X[:8], true_curve(32, X[:8]))
    assert 32 not in frontier(short, X[10:], by=["n"])["n"].tolist()


def test_a_sigmoid_of_log_n_star_is_recovered() -> None:
    x = np.arange(8.0, 20.01, 0.25)
    points = pd.DataFrame({"log2_rollouts": x, "n": 2.0 ** sigmoid(x, 1.0, 5.0, 13.0, 0.9)})
    fit = fit_optimal(points)
    assert fit.midpoint == pytest.approx(13.0, rel=0.05)
    assert (fit.low, fit.high) == pytest.approx((1.0, 6.0), rel=0.05)


def test_pass_summary_counts_stuck_and_solved_problems() -> None:
    train_pass = pd.DataFrame({"n": 4, "rollouts": [0, 0, 0, 0, 512, 512, 512, 512], "id": list("abcdabcd"),
                               "correct": [0, 0, 4, 2, 2, 4, 4, 0], "samples": 4})
    table = pass_summary(train_pass, by=["n"]).set_index("rollouts")
    assert table.loc[0, ["stuck", "solved", "mean"]].tolist() == [0.5, 0.25, 0.375]
    assert table.loc[512, ["stuck", "solved", "mean"]].tolist() == [0.25, 0.5, 0.625]
    assert table.loc[0, "std"] == pytest.approx(np.std([0, 0, 1, 0.5]))


def test_training_rewards_average_the_updates_since_the_previous_evaluation() -> None:
    nan = np.nan
    run = pd.DataFrame({"step": range(6), "rollouts": [0, 64, 128, 192, 256, 320],
                        "reward": [nan, 0.1, 0.3, 0.5, 0.7, 0.9], "val_avg@4": [0.4, nan, 0.5, nan, 0.6, nan]})
    history = pd.concat([run.assign(n=4, seed=0), run.assign(n=8, seed=0, reward=run["reward"] / 2)])
    table = training_rewards(history, ["n"], "val_avg@4")
    assert table.columns.tolist() == ["n", "seed", "rollouts", "reward"]
    # updates 1-2 close at the evaluation at 128, 3-4 at 256; update 5 has no later evaluation
    assert table[table["n"] == 4]["rollouts"].tolist() == [128, 256]
    assert table[table["n"] == 4]["reward"].tolist() == pytest.approx([0.2, 0.6])
    assert table[table["n"] == 8]["reward"].tolist() == pytest.approx([0.1, 0.3])


def test_plan_rounds_n_in_log_space_and_gives_m_the_rest() -> None:
    n_star = fit_sigmoid(X, sigmoid(X, 1.0, 4.0, 12.0, 1.0))  # log2 n* from 2 to 32
    small, large = (plan(budget, n_star, 8, N_VALUES, largest_measured_n=32) for budget in (2**8, 2**17))
    assert (small.n, large.n) == (2, 32)
    assert large.steps == 2**17 // (8 * 32)
    with pytest.raises(ValueError, match="buy no update"):
        plan(4, n_star, 8, N_VALUES, largest_measured_n=32)


def saturating_curve(n: int, x: float) -> float:
    """n* rises to 16 and stays: n = 16 has the highest plateau, larger n rise later and lower."""
    log_n = np.log2(n)
    return float(sigmoid(x, 0.1, 0.3 + 0.08 * min(log_n, 4) - 0.05 * max(log_n - 4, 0), 7.75 + 0.8 * log_n, 1.5))


def fitted_up_to(x_end: float, n_values: list[int]) -> tuple[SigmoidFit, int]:
    """The n* sigmoid and the largest n* measured, from `saturating_curve` run to 2^x_end rollouts."""
    x = np.arange(6.0, x_end + 1e-9, 0.25)
    points = pd.DataFrame([{"n": n, "rollouts": 2.0**v, "avg": saturating_curve(n, v)} for n in n_values for v in x])
    analysis = analyse_frontier(points, ["n"], "avg", budget=2.0**x_end)
    return analysis.n_star, int(analysis.fitted["n"].max())


def regret(n: int, budget: int, n_values: list[int]) -> float:
    """Reward lost at `budget` by choosing `n` over the best of `n_values`, on the true curves."""
    x = np.log2(budget)
    return max(saturating_curve(m, x) for m in n_values) - saturating_curve(n, x)


def test_plan_beyond_the_fitted_range_warns_and_caps_n_at_the_largest_measured() -> None:
    n_values = [2, 4, 8, 16, 32, 64]
    # Fitted to 2^12 rollouts, where n* has just reached 16 and the fitted sigmoid still
    # climbs; the truth stays at 16.
    n_star, largest = fitted_up_to(12.0, n_values)
    assert (n_star.x_max, largest) == (12.0, 16)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ExtrapolationWarning)  # none within the range, its end included
        inside = [plan(budget, n_star, 8, n_values, largest_measured_n=largest) for budget in (2**10, 2**12)]
    assert [p.extrapolated for p in inside] == [False, False] and inside[1].n == 16
    regrets = {}
    for budget in (2**14, 2**16):  # 4x and 16x the fitted range
        with pytest.warns(ExtrapolationWarning, match=rf"budget {budget:,} rollouts .* beyond the n\* fit's range "
                                                      r"2\^6.00 to 2\^12.00 rollouts; n capped from 32 to 16"):
            capped = plan(budget, n_star, 8, n_values, largest_measured_n=largest)
        with pytest.warns(ExtrapolationWarning, match="n = 32 extrapolated, not capped"):
            free = plan(budget, n_star, 8, n_values, largest_measured_n=largest, cap=False)
        assert capped.extrapolated and free.extrapolated
        assert (capped.n, capped.steps, free.n) == (16, budget // (8 * 16), 32)
        regrets[budget] = (regret(capped.n, budget, n_values), regret(free.n, budget, n_values))
    # The cap removes the overshoot's regret (capped, uncapped): 0 vs 0.063 at 4x, 0 vs 0.051 at 16x.
    assert regrets[2**14] == pytest.approx((0.0, 0.0625), abs=1e-3)
    assert regrets[2**16] == pytest.approx((0.0, 0.0507), abs=1e-3)


def test_held_out_check_applies_the_planners_cap() -> None:
    n_values = [2, 4, 8, 16, 32, 64]
    x = np.arange(6.0, 16.01, 0.25)
    points = pd.DataFrame([{"n": n, "rollouts": 2.0**v, "avg": saturating_curve(n, v)} for n in n_values for v in x])
    fits = fit_curves(points, by=["n"], metric="avg")
    capped, free = held_out_check(fits, 2.0**14), held_out_check(fits, 2.0**14, cap=False)  # n* fitted to 2^12
    assert (capped["sigmoid_n"], capped["predicted_n"], free["predicted_n"], capped["measured_n"]) == (32, 16, 32, 16)
    assert (capped["regret"], free["regret"]) == pytest.approx((0.0, 0.0625), abs=1e-3)


def test_the_cap_costs_reward_when_n_star_would_have_kept_rising() -> None:
    # The same truth fitted to 2^11.5 only: n* measured up to 8, the sigmoid's 16 is right
    # and the cap loses 0.075 at 2^14. Why the cap is a keyword and the plan says it extrapolated.
    n_values = [2, 4, 8, 16, 32, 64]
    n_star, largest = fitted_up_to(11.5, n_values)
    budget = 2**14
    with pytest.warns(ExtrapolationWarning, match="n capped from 16 to 8"):
        capped = plan(budget, n_star, 8, n_values, largest_measured_n=largest)
    with pytest.warns(ExtrapolationWarning):
        free = plan(budget, n_star, 8, n_values, largest_measured_n=largest, cap=False)
    assert (capped.n, free.n) == (8, 16)
    assert (regret(capped.n, budget, n_values), regret(free.n, budget, n_values)) == pytest.approx((0.0753, 0.0),
                                                                                                   abs=1e-3)


def test_held_out_check_predicts_the_frontier_n_from_smaller_budgets() -> None:
    fits = fit_curves(family(), by=["n"], metric="val_avg@4")
    settled = held_out_check(fits, budget=2.0**16)  # n* saturated by budget / 4: predicted right
    assert (settled["predicted_n"], settled["measured_n"], settled["regret"]) == (32, 32, 0.0)
    early = held_out_check(fits, budget=2.0**14)  # n* still climbing: extrapolation falls short
    assert early["measured_n"] == 32 and early["predicted_n"] < 32
    assert early["regret"] == pytest.approx(early["frontier_reward"] - float(fits[(early["predicted_n"],)](14.0)))
    assert early["regret"] > 0
    assert settled["sigmoid_n"] == 32 and early["sigmoid_n"] == early["predicted_n"]  # the cap did not bind


def test_at_fixed_batch_the_frontier_names_both_n_and_b_p() -> None:
    # B = 64 rollouts per update: (B_p, n) = (32, 2), (8, 8), (2, 32) share the compute axis,
    # so the frontier over steps M = rollouts / B says which split wins at each M.
    points = family()
    points = points[points["n"].isin([2, 8, 32])].assign(batch_problems=lambda t: 64 // t["n"])
    fits = fit_curves(points, by=["batch_problems", "n"], metric="val_avg@4")
    edge = frontier(fits, X, by=["batch_problems", "n"]).assign(steps=lambda t: t["rollouts"] / 64)
    assert (edge["batch_problems"] * edge["n"] == 64).all()
    assert edge.iloc[0][["batch_problems", "n"]].tolist() == [32, 2]  # few steps: many problems
    assert edge.iloc[-1][["batch_problems", "n"]].tolist() == [2, 32]  # many steps: large n


def test_the_measured_frontier_takes_running_bests_within_each_curves_range() -> None:
    points = pd.DataFrame({"n": [2, 2, 2, 8, 8], "rollouts": [64.0, 128.0, 256.0, 128.0, 256.0],
                           "avg": [0.5, 0.4, 0.55, 0.45, 0.7]})
    edge = measured_frontier(points, [6.0, 7.0, 8.0, 9.0], by=["n"], metric="avg")
    assert edge["n"].tolist() == [2, 2, 8]  # 512 rollouts: no curve was run that far
    assert edge["reward"].tolist() == [0.5, 0.5, 0.7]  # n=2 keeps its 0.5 at 128 (running best)
    fits_edge = frontier(fit_curves(family(), by=["n"], metric="val_avg@4"), X, by=["n"])
    raw_edge = measured_frontier(family(), X, by=["n"], metric="val_avg@4")
    assert (fits_edge["n"].to_numpy() == raw_edge["n"].to_numpy()).mean() >= 0.9  # noiseless: they agree


def test_analyse_frontier_fits_n_star_where_it_moves_and_says_why_where_it_cannot() -> None:
    points = family()
    analysis = analyse_frontier(points, ["n"], "val_avg@4", budget=2.0 ** X[-1])
    assert analysis.why_no_fit is None and analysis.fitted["n"].iloc[0] < analysis.fitted["n"].iloc[-1]
    assert analysis.n_star(X[-1]) > analysis.n_star(X[0])  # log2 n* rises along the frontier
    one_n = analyse_frontier(points[points["n"] == 8], ["n"], "val_avg@4", budget=2.0 ** X[-1])
    assert one_n.n_star is None
    assert one_n.why_no_fit == "n* = 8 at every budget from 64 to 262,144 rollouts: there is no rise to fit a sigmoid to."
    untrained = analyse_frontier(points.assign(rollouts=0.0), ["n"], "val_avg@4", budget=4096)
    assert untrained.fits == {} and untrained.fitted.empty and "no frontier" in untrained.why_no_fit
