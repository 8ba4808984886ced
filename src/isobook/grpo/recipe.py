"""The healthy recipe as numbers: loss weights per set and the learning rate per batch size.

Paper (section "What constitutes a healthy RL recipe", Figures 3-4): KL + entropy on easy
sets, neither on hard sets and mixtures; AdamW with linear warm-up then a constant LR,
``base_lr`` at a reference batch scaled to the batch B = B_p * n by the square root of
B / reference (linear was unstable at large B, constant converged slower). The anchor itself is model-specific; isobook's was found with
the paper's Figure 4 grid and is recorded in ``params/lr-anchor.yaml``.
"""

from __future__ import annotations

import math
from enum import Enum

from isobook.config import RecipeConfig, regularised
from isobook.grpo.loss import LossWeights, ZeroVarianceFilter


class LrScaling(str, Enum):
    """How the learning rate follows the rollout batch B = B_p * n."""

    CONSTANT = "constant"
    LINEAR = "linear"
    SQRT = "sqrt"


def scaled_lr(base_lr: float, reference_batch: int, batch: int, rule: LrScaling) -> float:
    """The peak learning rate at `batch` rollouts per update."""
    ratio = batch / reference_batch
    factor = {LrScaling.CONSTANT: 1.0, LrScaling.LINEAR: ratio, LrScaling.SQRT: math.sqrt(ratio)}[rule]
    return base_lr * factor


def lr_at(step: int, peak: float, batch: int, warmup_rollouts: int) -> float:
    """The learning rate of update `step` (0-based) of `batch` gradient rollouts: a linear
    warm-up in rollouts, ``peak * (step + 1) * batch / warmup_rollouts`` until that
    reaches `peak`, then `peak`. Counted in rollouts, the warm-up is the same share of a
    budget at every batch size (with 512 rollouts: 16 updates at B = 32, 2 at B = 256).

    Constant afterwards, so the schedule does not depend on the budget and a run extended
    to a larger budget follows the same learning rates as one asked for it at once."""
    if warmup_rollouts <= 0:
        return peak
    return peak * min(1.0, (step + 1) * batch / warmup_rollouts)


def loss_weights(recipe: RecipeConfig, set_name: str) -> LossWeights:
    """The loss coefficients a run on `set_name` uses under `recipe`."""
    on = regularised(recipe, set_name)
    return LossWeights(clip=recipe.clip, tis_cap=recipe.tis_cap, kl=recipe.kl if on else 0.0,
                       entropy=recipe.entropy if on else 0.0,
                       zero_variance=ZeroVarianceFilter(recipe.zero_variance))
