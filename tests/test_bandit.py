"""The tabular softmax bandit base case (paper Figure 12) on numbers we can check."""

import numpy as np
import pytest

from isobook.bandit import BanditSetup, best_n, initial_logits, suboptimality_curves, train_bandits


def test_initial_logits_give_each_problem_its_start_pass_rate() -> None:
    setup = BanditSetup(start_pass=np.array([0.3, 0.03, 0.9]), actions=8)
    logits = initial_logits(setup)
    policy = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    assert policy[:, 0] == pytest.approx([0.3, 0.03, 0.9])
    assert policy[0, 1:] == pytest.approx([0.7 / 7] * 7)  # the wrong arms share the rest evenly


def test_no_update_leaves_the_start_and_training_moves_toward_the_correct_arm() -> None:
    setup = BanditSetup(start_pass=np.array([0.3]), seeds=64)
    curve = train_bandits(setup, n=8, updates=50, record_every=10, rng=np.random.default_rng(0))
    assert curve["update"].tolist() == [0, 10, 20, 30, 40, 50]
    assert curve["rollouts"].tolist() == [0, 80, 160, 240, 320, 400]
    assert curve["suboptimality"].iloc[0] == pytest.approx(0.7)
    assert curve["suboptimality"].is_monotonic_decreasing and curve["suboptimality"].iloc[-1] < 0.05


def test_groups_with_equal_rewards_do_not_move_the_policy() -> None:
    # At pass@1 1e-9 every group of 2 is all wrong: zero advantage, no update (GRPO's blind spot
    # on hard problems, which larger n escapes).
    setup = BanditSetup(start_pass=np.array([1e-9, 1e-9]), batch_problems=2, seeds=8)
    curve = train_bandits(setup, n=2, updates=20, record_every=20, rng=np.random.default_rng(1))
    assert curve["suboptimality"].tolist() == pytest.approx([1 - 1e-9, 1 - 1e-9], abs=1e-12)


def test_at_a_fixed_budget_the_smallest_group_wins_without_interference() -> None:
    curves = suboptimality_curves(BanditSetup(start_pass=np.array([0.45]), seeds=128), [2, 8, 32], budget=1024)
    final = curves.sort_values("rollouts").groupby("n")["suboptimality"].last()
    assert final[2] < final[8] < final[32]
    assert best_n(curves, [256, 1024])["n"].tolist() == [2, 2]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"start_pass": np.array([0.0])}, "start_pass"),
    ({"start_pass": np.array([0.5]), "batch_problems": 2}, r"batch_problems: must be in \[1, 1\]"),
    ({"actions": 1}, "actions: must be >= 2"),
])
def test_bad_setups_fail_naming_the_field(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        BanditSetup(**kwargs)
