"""Advantage estimators pinned on hand computations."""

import math

import pytest
import torch

from isobook.config import ConfigError, load_config
from isobook.grpo.advantages import ESTIMATORS, decoupled_rows, group_advantages, zero_variance_groups

REWARDS = torch.tensor([[1.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]])  # [G=3, n=4]


def test_grpo_divides_by_the_groups_population_std() -> None:
    scaled = group_advantages(REWARDS, "grpo")
    # population std: 0.5 for the first group, sqrt(3)/4 for the second
    assert scaled[0].tolist() == pytest.approx([1.0, -1.0, -1.0, 1.0], abs=1e-5)
    assert scaled[1].tolist() == pytest.approx([3 / math.sqrt(3)] + [-1 / math.sqrt(3)] * 3, abs=1e-5)
    assert scaled[2].tolist() == [0.0] * 4  # zero variance: no signal, no NaN


def test_dr_grpo_only_centres() -> None:
    assert group_advantages(REWARDS, "drgrpo").tolist() == [[0.5, -0.5, -0.5, 0.5], [0.75, -0.25, -0.25, -0.25],
                                                           [0.0] * 4]


def test_rloo_subtracts_the_mean_of_the_other_rollouts() -> None:
    # group 2, rollout 0: 1 - (0 + 0 + 0) / 3 = 1; rollout 1: 0 - (1 + 0 + 0) / 3 = -1/3
    assert group_advantages(REWARDS, "rloo").flatten().tolist() == pytest.approx(
        [2 / 3, -2 / 3, -2 / 3, 2 / 3, 1.0, -1 / 3, -1 / 3, -1 / 3, 0.0, 0.0, 0.0, 0.0])
    rewards = torch.tensor([[0.2, 0.5, 0.9]])
    by_hand = [0.2 - 0.7, 0.5 - 0.55, 0.9 - 0.35]
    assert group_advantages(rewards, "rloo")[0].tolist() == pytest.approx(by_hand)
    # leave-one-out is centring scaled by n / (n - 1)
    assert group_advantages(rewards, "rloo")[0].tolist() == pytest.approx((group_advantages(rewards, "drgrpo")[0] * 1.5).tolist())


def test_equal_rewards_are_zero_variance_whatever_rounding_does() -> None:
    rewards = torch.full((2, 1024), 0.1)  # 0.1 is not exact in binary: the mean is not 0.1 to the last bit
    rewards[1, 0] = 0.2
    assert zero_variance_groups(rewards).tolist() == [True, False]
    for name in ESTIMATORS:
        advantages = group_advantages(rewards, name)
        assert advantages[0].eq(0.0).all(), name  # exactly zero, not 1e-9 / 1e-6
        assert advantages[1, 0] > 0, name


def test_unknown_estimators_name_the_field() -> None:
    with pytest.raises(ValueError, match="recipe.advantage: 'ppo' is unknown; allowed: grpo, drgrpo, rloo"):
        group_advantages(REWARDS, "ppo")
    with pytest.raises(ConfigError, match="recipe.advantage: 'ppo' is not allowed; allowed: grpo, drgrpo, rloo"):
        load_config(None, ["recipe.advantage=ppo"])
    with pytest.raises(ConfigError, match=r"recipe.normalize_std: replaced; allowed: recipe.advantage \(true: grpo"):
        load_config(None, ["recipe.normalize_std=false"])


def test_decoupled_rows_pick_distinct_rollouts_of_each_group() -> None:
    index = decoupled_rows(groups=5, n=8, n_train=3, generator=torch.Generator().manual_seed(0))
    assert index.shape == (5, 3) and all(len(set(row.tolist())) == 3 for row in index)
    assert int(index.min()) >= 0 and int(index.max()) < 8
    with pytest.raises(ValueError, match=r"train.n_train: must lie in \[1, n=8\], got 9"):
        decoupled_rows(groups=1, n=8, n_train=9, generator=torch.Generator())
