"""The playbook as a function: (n, B_p, M) for a budget, and a held-out check of it.

The paper's workflow (Figures 10-11): take n from the fitted sigmoid of log2 n* versus
log2 C at the budget, set B_p to a moderate value (it matters little), and give M the
rest. `held_out_check` tests the rule honestly: fit n* on budgets up to C/4 only, predict
n at C, and compare the reward of that choice with the measured frontier at C.

Beyond the compute its sigmoid was fitted on, n* is a guess: fitted on a frontier that
ends while n* still climbs, the sigmoid keeps climbing, whereas the paper's n* saturates.
There `plan` flags the plan, warns (`ExtrapolationWarning`) and, unless told not to, caps
n at the largest n* the frontier measured. The cap bets that n* saturates at the measured
top: it removes the overshoot when it does, and costs reward when n* would have kept
rising (tests/test_frontier.py measures both).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from isobook.analysis.fits import SigmoidFit
from isobook.analysis.frontier import fit_optimal, frontier


class ExtrapolationWarning(UserWarning):
    """`plan` was asked for a budget beyond the compute its n* sigmoid was fitted on."""


@dataclass(frozen=True)
class Plan:
    """How to spend `budget` rollouts: M updates of B_p problems x n rollouts."""

    budget: int
    n: int
    batch_problems: int
    steps: int
    extrapolated: bool  # budget beyond the n* fit's compute range: n capped there unless cap=False


def plan(budget: int, n_star: SigmoidFit, batch_problems: int, n_values: Sequence[int], *,
         largest_measured_n: int, cap: bool = True) -> Plan:
    """The allocation for `budget` rollouts: n from `n_star` (log2 n* vs log2 rollouts),
    rounded to the nearest of `n_values` in log space; B_p as given; M = budget // (B_p n).

    `largest_measured_n`: the largest n* on the frontier `n_star` was fitted on (for
    `analyse_frontier`'s result, ``analysis.fitted["n"].max()``). Above the fit's range,
    ``log2 budget > n_star.x_max``, the plan is `extrapolated`, an `ExtrapolationWarning`
    names the budget, the range and the n chosen, and with `cap` n is at most
    `largest_measured_n`. Budgets below the range are not flagged: the playbook
    extrapolates upward, planning a large run from small ones."""
    log2_budget = math.log2(budget)
    wanted = _nearest(n_values, float(n_star(log2_budget)))
    extrapolated = log2_budget > n_star.x_max + 1e-9
    n = min(wanted, largest_measured_n) if extrapolated and cap else wanted
    steps = budget // (batch_problems * n)
    if steps < 1:
        raise ValueError(f"budget: {budget} rollouts buy no update at B_p={batch_problems}, n={n}")
    if extrapolated:
        chosen = (f"n = {wanted} extrapolated, not capped (cap=False)" if not cap
                  else f"n capped from {wanted} to {n}" if n < wanted else f"n = {n} as the sigmoid asks")
        warnings.warn(f"plan: budget {budget:,} rollouts (2^{log2_budget:.2f}) lies beyond the n* fit's range "
                      f"2^{n_star.x_min:.2f} to 2^{n_star.x_max:.2f} rollouts; {chosen}; the largest n* "
                      f"measured is {largest_measured_n}", ExtrapolationWarning, stacklevel=2)
    return Plan(budget, n, batch_problems, steps, extrapolated)


def held_out_check(fits: dict[tuple, SigmoidFit], budget: float, points_per_doubling: int = 4,
                   cap: bool = True) -> dict[str, float]:
    """Fit n* on the frontier up to budget / 4, predict n at `budget` by `plan`'s rule
    (capped, with `cap`, at the largest n* on that frontier), and compare.

    `fits`: sigmoid fits keyed by ``(n,)``. Returns the n the sigmoid asks for, the
    predicted (after the cap) and the measured n*, the frontier reward at `budget`, the
    reward of the predicted n's curve there, and the regret (frontier minus predicted,
    >= 0 up to fit noise)."""
    top = math.log2(budget)
    bottom = min(fit.x_min for fit in fits.values())
    grid = np.arange(bottom, top - 2 + 1e-9, 1.0 / points_per_doubling)
    early = frontier(fits, grid, by=["n"])
    if len(early) < 3:
        raise ValueError(f"budget: too little frontier below {budget / 4:.0f} rollouts to fit n* (need 3 points)")
    n_values = sorted(key[0] for key in fits)
    wanted = _nearest(n_values, float(fit_optimal(early)(top)))
    # `budget` lies 4x beyond the fit by construction, so the cap applies as in `plan`.
    predicted = min(wanted, int(early["n"].max())) if cap else wanted
    at_budget = frontier(fits, [top], by=["n"])
    if at_budget.empty or (predicted,) not in fits:
        raise ValueError(f"budget: no measured curve reaches {budget:.0f} rollouts")
    predicted_reward = float(fits[(predicted,)](top)) if fits[(predicted,)].x_max >= top - 1e-9 else float("nan")
    frontier_reward = float(at_budget["reward"].iloc[0])
    return {"budget": float(budget), "sigmoid_n": float(wanted), "predicted_n": float(predicted),
            "measured_n": float(at_budget["n"].iloc[0]), "frontier_reward": frontier_reward,
            "predicted_reward": predicted_reward, "regret": frontier_reward - predicted_reward}


def _nearest(n_values: Sequence[int], log2_n: float) -> int:
    """The value of `n_values` nearest to 2^`log2_n` in log space."""
    return min(n_values, key=lambda value: abs(math.log2(value) - log2_n))
