"""The playbook as a function: (n, B_p, M) for a budget, and a held-out check of it.

The paper's workflow (Figures 10-11): take n from the fitted sigmoid of log2 n* versus
log2 C at the budget, set B_p to a moderate value (it matters little), and give M the
rest. `held_out_check` tests the rule honestly: fit n* on budgets up to C/4 only, predict
n at C, and compare the reward of that choice with the measured frontier at C.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from isobook.fits import SigmoidFit
from isobook.frontier import fit_optimal, frontier


@dataclass(frozen=True)
class Plan:
    """How to spend `budget` rollouts: M updates of B_p problems x n rollouts."""

    budget: int
    n: int
    batch_problems: int
    steps: int


def plan(budget: int, n_star: SigmoidFit, batch_problems: int, n_values: list[int]) -> Plan:
    """The allocation for `budget` rollouts: n from `n_star` (log2 n* vs log2 rollouts),
    rounded to the nearest of `n_values` in log space; B_p as given; M = budget // (B_p n)."""
    wanted = float(n_star(math.log2(budget)))
    n = min(n_values, key=lambda value: abs(math.log2(value) - wanted))
    steps = budget // (batch_problems * n)
    if steps < 1:
        raise ValueError(f"budget: {budget} rollouts buy no update at B_p={batch_problems}, n={n}")
    return Plan(budget, n, batch_problems, steps)


def held_out_check(fits: dict[tuple, SigmoidFit], budget: float, points_per_doubling: int = 4) -> dict[str, float]:
    """Fit n* on the frontier up to budget / 4, predict n at `budget`, and compare.

    `fits`: sigmoid fits keyed by ``(n,)``. Returns the predicted and the measured n*, the
    frontier reward at `budget`, the reward of the predicted n's curve there, and the
    regret (frontier minus predicted, >= 0 up to fit noise)."""
    top = math.log2(budget)
    bottom = min(fit.x_min for fit in fits.values())
    grid = np.arange(bottom, top - 2 + 1e-9, 1.0 / points_per_doubling)
    early = frontier(fits, grid, by=["n"])
    if len(early) < 3:
        raise ValueError(f"budget: too little frontier below {budget / 4:.0f} rollouts to fit n* (need 3 points)")
    n_values = sorted(key[0] for key in fits)
    fitted = fit_optimal(early)
    predicted = min(n_values, key=lambda value: abs(math.log2(value) - float(fitted(top))))
    at_budget = frontier(fits, [top], by=["n"])
    if at_budget.empty or (predicted,) not in fits:
        raise ValueError(f"budget: no measured curve reaches {budget:.0f} rollouts")
    predicted_reward = float(fits[(predicted,)](top)) if fits[(predicted,)].x_max >= top - 1e-9 else float("nan")
    frontier_reward = float(at_budget["reward"].iloc[0])
    return {"budget": float(budget), "predicted_n": float(predicted), "measured_n": float(at_budget["n"].iloc[0]),
            "frontier_reward": frontier_reward, "predicted_reward": predicted_reward,
            "regret": frontier_reward - predicted_reward}
