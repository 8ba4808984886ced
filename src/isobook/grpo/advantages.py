"""Advantage estimators: a batch's rewards, one group of n rollouts per problem, turned into
one advantage per rollout, chosen by ``recipe.advantage``.

    advantages = group_advantages(rewards, "grpo")   # [G, n] -> [G, n]

* ``grpo``: reward minus the group mean, over the group's (population) standard deviation
  (Shao et al. 2024, DeepSeekMath); the paper's recipe and isobook's default.
* ``drgrpo``: reward minus the group mean, not divided by the std (Liu et al. 2025,
  "Understanding R1-Zero-like Training"), so a group whose rewards barely differ is not
  amplified. Only its advantage is taken here; the loss keeps its token-mean aggregation.
* ``rloo``: reward minus the mean of the *other* n - 1 rewards (Ahmadian et al. 2024,
  "Back to Basics"), an unbiased leave-one-out baseline; equal to ``drgrpo`` times n / (n - 1).

Every estimator gives exactly zero to a group whose rewards are all equal (its "zero
variance": no signal), whatever float rounding does to its mean. The decoupled baseline
(paper Appendix C) is a variant of any of them: advantages from all n rollouts, gradient on
a random `n_train` of them (`decoupled_rows`).

Adding an estimator is one function of ``rewards # [G, n]`` below and one line in
`ESTIMATORS`, its key added to ``config.ADVANTAGE_ESTIMATORS`` (the allowed values of
``recipe.advantage``).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from isobook.config import ADVANTAGE_ESTIMATORS

STD_EPS = 1e-6  # keeps the division finite; equal-reward groups never reach it (zeroed first)


def grpo(rewards: torch.Tensor) -> torch.Tensor:
    """(r - mean) / (std + eps) within each group. # [G, n] -> [G, n]"""
    return dr_grpo(rewards) / (rewards.std(dim=1, unbiased=False, keepdim=True) + STD_EPS)


def dr_grpo(rewards: torch.Tensor) -> torch.Tensor:
    """r - mean within each group. # [G, n] -> [G, n]"""
    return rewards - rewards.mean(dim=1, keepdim=True)


def rloo(rewards: torch.Tensor) -> torch.Tensor:
    """r_i - mean of the group's other rewards. # [G, n] -> [G, n] (n >= 2)"""
    n = rewards.shape[1]
    others = (rewards.sum(dim=1, keepdim=True) - rewards) / (n - 1)  # [G, n]
    return rewards - others


ESTIMATORS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "grpo": grpo,
    "drgrpo": dr_grpo,
    "rloo": rloo,
}
assert tuple(ESTIMATORS) == ADVANTAGE_ESTIMATORS, "config.ADVANTAGE_ESTIMATORS names the allowed values"


def zero_variance_groups(rewards: torch.Tensor) -> torch.Tensor:
    """True for groups whose rewards are all equal (compared exactly, not through a std
    threshold that rounding defeats). # [G, n] -> [G]"""
    return (rewards == rewards[:, :1]).all(dim=1)


def group_advantages(rewards: torch.Tensor, estimator: str) -> torch.Tensor:
    """The `estimator`'s advantages, exactly 0 in zero-variance groups. # [G, n] -> [G, n]"""
    if estimator not in ESTIMATORS:
        raise ValueError(f"recipe.advantage: {estimator!r} is unknown; allowed: {', '.join(ESTIMATORS)}")
    advantages = ESTIMATORS[estimator](rewards)  # [G, n]
    return advantages.masked_fill(zero_variance_groups(rewards)[:, None], 0.0)


def decoupled_rows(groups: int, n: int, n_train: int, generator: torch.Generator) -> torch.Tensor:
    """The decoupled baseline's training rollouts: a random `n_train` of each group's `n`,
    as indices within the group. # [G, n_train]"""
    if not 1 <= n_train <= n:
        raise ValueError(f"train.n_train: must lie in [1, n={n}], got {n_train}")
    return torch.stack([torch.randperm(n, generator=generator)[:n_train] for _ in range(groups)])
