"""Chapter 02's studies as library code: the learning-rate envelope (each n at the rate chosen
on the other half of the problems), its runs and their extension past an edge, the
data-reuse grid, and n* tables that carry C/D and updates beside the rollouts."""

import math

import numpy as np
import pandas as pd
import pytest

from isobook.analysis.envelope import (
    confirmatory_runs,
    edge_runs,
    envelope_runs,
    halves,
    lr_envelope,
    one_rate_changes,
    preferred_rates,
    rate_multiplier,
    rule_peak,
    selection_budget,
)
from isobook.analysis.findings.statistics import SeedVariance, problem_scores
from isobook.analysis.n_star import n_star_path, n_star_table, regime, regime_text
from isobook.analysis.reuse import envelope_rates, reuse_runs
from isobook.config import Config, with_overrides
from isobook.tasks.metrics import Metric

METRIC = Metric("avg", 4)
SEEDS = SeedVariance(4.0, 8.0, 8, "test", forced=True)
IDS = [f"p{i}" for i in range(60)]


def test_halves_deal_every_problem_once_evenly_whatever_the_order() -> None:
    dealt = halves(IDS)
    assert sorted(dealt.index) == sorted(IDS)
    assert abs((dealt == "A").sum() - (dealt == "B").sum()) <= 1
    assert halves(IDS[::-1]).sort_index().equals(dealt.sort_index())
    assert halves(IDS[:7]).value_counts().tolist() == [4, 3]


def rate_table(score_of: dict[tuple[int, float], object], budgets=(512, 1024), seeds=(0, 1)) -> pd.DataFrame:
    """Counts in which (n, multiplier) solves problem i `correct(i)` times of 4 at every
    budget and seed, `score_of[(n, m)]` giving that function."""
    rows = []
    for (n, m), correct in score_of.items():
        for seed in seeds:
            for budget in budgets:
                rows += [{"set": "hard", "n": n, "multiplier": m, "lr": 1e-4 * m, "seed": seed, "rollouts": budget,
                          "id": pid, "correct": correct(i, pid), "samples": 4} for i, pid in enumerate(IDS)]
    return pd.DataFrame(rows)


def test_each_problem_scores_the_rate_chosen_on_the_other_half() -> None:
    half = halves(IDS)
    # n = 4: rate 0.5 solves every problem of half A and none of B, rate 2 the reverse, rate 1
    # three of four everywhere. Each half chooses its own winner, so each problem is scored by
    # the rate that won on the other half: 0 on A and 0 on B, though rate 1 is best overall.
    table = rate_table({
        (4, 0.5): lambda i, pid: 4 if half[pid] == "A" else 0,
        (4, 1.0): lambda i, pid: 3,
        (4, 2.0): lambda i, pid: 4 if half[pid] == "B" else 0,
        (8, 1.0): lambda i, pid: 2,
        (8, 2.0): lambda i, pid: 3,
    })
    envelope = lr_envelope(table, METRIC, [512, 1024])
    assert sorted(envelope.scores) == [512, 1024]
    scores = envelope.scores[1024]
    assert list(scores.columns) == [4, 8] and scores.shape[0] == 2 * len(IDS)
    assert scores[4].max() == 0.0  # never the in-sample winner
    assert (scores[8] == 0.75).all()  # both halves chose 2 for n = 8
    chosen = envelope.choices[envelope.choices["rollouts"] == 1024].set_index(["n", "half"])["multiplier"]
    assert chosen.to_dict() == {(4, "A"): 0.5, (4, "B"): 2.0, (8, "A"): 2.0, (8, "B"): 2.0}
    curves = envelope.curves[(envelope.curves["rollouts"] == 1024) & (envelope.curves["n"] == 4)]
    assert dict(zip(curves["multiplier"], curves["score"])) == pytest.approx(
        {0.5: (half == "A").mean(), 1.0: 0.75, 2.0: (half == "B").mean()})
    # On every problem (the reader's table, and the rate runs beyond the envelope take):
    preferred = preferred_rates(table, METRIC, 1024, SEEDS).set_index("n")
    assert preferred["best"].to_dict() == {4: 1.0, 8: 2.0}
    assert preferred.loc[8, "rule within noise"] == (1.0 in preferred.loc[8, "within noise"])
    assert preferred.loc[4, "lr"] == pytest.approx(1e-4)
    assert envelope_rates(envelope, 4096) == {4: 1.0, 8: 2.0}


def test_an_envelope_with_one_rate_per_n_is_the_grid_itself() -> None:
    rng = np.random.default_rng(3)
    correct = {n: rng.integers(0, 5, len(IDS)) for n in (4, 8)}
    table = rate_table({(n, 1.0): (lambda i, pid, n=n: int(correct[n][i])) for n in (4, 8)})
    envelope = lr_envelope(table, METRIC, [1024])
    grid = problem_scores(table.drop(columns="multiplier"), ["n"], METRIC, rollouts=1024)
    pd.testing.assert_frame_equal(envelope.scores[1024].sort_index(), grid.sort_index(), check_names=False)


def test_envelope_runs_bracket_every_n_and_share_coinciding_rates() -> None:
    config = Config()  # B_p = 8, n = 4 ... 32, two seeds, multipliers 0.25 ... 2
    runs = envelope_runs(config, "hard")
    by_key = {(r.train.seed, r.train.rollouts_per_problem, round(rate_multiplier(r, config), 6)): r for r in runs}
    assert len(by_key) == len(runs)  # no rate twice
    one_rate = {n: math.sqrt(32 / n) for n in (4, 8, 16, 32)}
    for n in (4, 8, 16, 32):
        wanted = {0.25, 0.5, 1.0, 2.0, round(one_rate[n], 6)}
        assert {m for (s, k, m) in by_key if s == 0 and k == n} == wanted
    # n = 32's one rate is its rule run; n = 8's x2 is the one-rate run (constant, as chapter 08 trains it).
    assert by_key[(0, 32, 1.0)].recipe.lr_scaling == "sqrt"
    assert by_key[(1, 8, 2.0)].recipe.lr_scaling == "constant"
    assert by_key[(1, 8, 2.0)].recipe.base_lr == pytest.approx(rule_peak(config, 256))
    assert len(runs) == 2 * (5 + 4 + 5 + 4)
    assert one_rate_changes(config, 256) == ["recipe.lr_scaling=constant", f"recipe.base_lr={rule_peak(config, 256)!r}"]


def test_a_bracket_grows_past_the_edge_its_best_rate_sits_on() -> None:
    config = Config()
    table = rate_table({(4, 0.5): lambda i, pid: 1, (4, 1.0): lambda i, pid: 2, (4, 2.0): lambda i, pid: 3,
                        (8, 0.5): lambda i, pid: 3, (8, 1.0): lambda i, pid: 2,
                        (16, 0.5): lambda i, pid: 1, (16, 1.0): lambda i, pid: 3, (16, 2.0): lambda i, pid: 2})
    new = edge_runs(config, "hard", table, METRIC, 1024)
    found = sorted((r.train.rollouts_per_problem, r.train.seed, rate_multiplier(r, config)) for r in new)
    assert found == [(4, 0, pytest.approx(4.0)), (4, 1, pytest.approx(4.0)),
                     (8, 0, pytest.approx(0.25)), (8, 1, pytest.approx(0.25))]


def test_reuse_runs_train_every_n_on_the_first_problems_at_its_rate() -> None:
    """On the confirmatory seeds (primaries.seeds), none of which chose the rates."""
    config = with_overrides(Config(), ["data_reuse.problems=64", "data_reuse.budget=8192", "primaries.seeds=[10, 11]"])
    runs = reuse_runs(config, {4: 0.5, 32: 2.0})
    assert [(r.train.rollouts_per_problem, r.train.seed) for r in runs] == [
        (n, s) for s in (10, 11) for n in (4, 8, 16, 32)]
    assert {r.train.data_size for r in runs} == {64} and {r.train.budget for r in runs} == {8192}
    assert [rate_multiplier(r, config) for r in runs[:4]] == pytest.approx([0.5, 1.0, 1.0, 2.0])


def test_confirmatory_runs_train_each_n_at_its_chosen_rate_on_seeds_that_chose_none() -> None:
    """The primary's runs: every n at the multiplier the selection seeds chose, on the
    confirmatory seeds; the envelope's own runs stop where the rates are chosen."""
    config = Config()
    runs = confirmatory_runs(config, "hard", {4: 0.5, 16: 2.0})
    assert [(r.train.rollouts_per_problem, r.train.seed) for r in runs] == [
        (n, s) for s in range(10, 18) for n in (4, 8, 16, 32)]
    assert [rate_multiplier(r, config) for r in runs[:4]] == pytest.approx([0.5, 1.0, 2.0, 1.0])
    assert not {r.train.seed for r in runs} & {r.train.seed for r in envelope_runs(config, "hard")}
    longer = with_overrides(config, ["sweep.budget=16384", "lr_envelope.choose_at=4096"])
    assert selection_budget(longer) == 4096 and {r.train.budget for r in envelope_runs(longer, "hard")} == {4096}
    assert {r.train.budget for r in confirmatory_runs(longer, "hard", {})} == {16384}


def test_n_star_tables_say_where_each_budget_sits() -> None:
    assert regime([512, 4096], problems=32, largest_batch=256).to_dict("list") == {"C/D": [16.0, 128.0],
                                                                                  "updates": [2, 16]}
    assert regime_text([512, 1024, 4096], 1031, 256) == "C/D 0.497-3.97, 2-16 updates of B = 256"
    rng = np.random.default_rng(5)
    index = pd.MultiIndex.from_product([[0, 1], IDS], names=["seed", "id"])
    by_budget = {b: pd.DataFrame({4: rng.random(len(index)) * 0.2, 32: 0.8 + rng.random(len(index)) * 0.2},
                                 index=index).rename_axis(columns="n") for b in (512, 1024)}
    table = n_star_table(by_budget, ["n"], SEEDS, problems=64, largest_batch=256)
    assert list(table.columns) == ["rollouts", "C/D", "updates", "n", "score", "within noise", "lead", "candidates"]
    assert table[["rollouts", "C/D", "updates", "n"]].values.tolist() == [[512, 8.0, 2, 32], [1024, 16.0, 4, 32]]
    assert n_star_path(table) == "32, 32"


def test_an_n_star_table_refuses_scores_keyed_by_more_columns_than_it_names() -> None:
    index = pd.MultiIndex.from_product([[0, 1], IDS], names=["seed", "id"])
    columns = pd.MultiIndex.from_tuples([(8, 4), (8, 32)], names=["batch_problems", "n"])
    by_budget = {512: pd.DataFrame(np.full((len(index), 2), 0.5), index=index, columns=columns)}
    with pytest.raises(ValueError, match=r"by: \['n'\] names 1 column levels; the scores have 2"):
        n_star_table(by_budget, ["n"], SEEDS, problems=64, largest_batch=256)
    assert n_star_table(by_budget, ["batch_problems", "n"], SEEDS, 64, 256)["n"].tolist() in ([4], [32])
    assert regime_text([], 32, 256) == ""
