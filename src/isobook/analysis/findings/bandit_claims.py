"""The tabular bandit's n* by budget, within noise from standard errors over seeds
(`bandit_optimum`, `bandit_optima`), and its claim that the smallest n wins."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from isobook.analysis.bandit import curves_at
from isobook.analysis.findings.statistics import Interval, Optimum, seeds_dof, seeds_multiplier
from isobook.analysis.findings.verdicts import BANDIT, Finding, combine, direction, not_measured, order


def bandit_optimum(curves: pd.DataFrame, budget: float) -> Optimum:
    """The bandit's n* at `budget` (lowest mean suboptimality, each curve at its last
    point within the budget), with the n within noise of it (their gap to the best within
    `seeds_multiplier` standard errors over seeds; every n when a single seed gives no
    error) as `Optimum.tied`; its value is the mean pass@1."""
    return _optimum_within(curves_at(curves, budget), seeds_multiplier(curves))


def _optimum_within(within: pd.DataFrame, multiplier: float) -> Optimum:
    """`bandit_optimum` of curves already read at a budget (`curves_at`)."""
    best = within["suboptimality"].idxmin()
    se = np.hypot(within["suboptimality_se"], within.loc[best, "suboptimality_se"]).fillna(np.inf)
    gap = within["suboptimality"] - within.loc[best, "suboptimality"]
    tied = tuple(sorted({int(best), *(int(n) for n in within.index[gap <= multiplier * se])}))
    return Optimum(int(best), 1 - float(within.loc[best, "suboptimality"]), tied, None)


def _lead(within: pd.DataFrame, leader: int, other: int, multiplier: float, dof: float) -> Interval:
    """`leader`'s pass@1 lead over `other` (curves read at a budget) and its interval of
    `multiplier` standard errors over seeds, a t on `dof` (unbounded without standard errors)."""
    gap = float(within.loc[other, "suboptimality"] - within.loc[leader, "suboptimality"])
    se = float(np.hypot(within.loc[leader, "suboptimality_se"], within.loc[other, "suboptimality_se"]))
    half = multiplier * se if np.isfinite(se) else np.inf
    return Interval(gap, gap - half, gap + half, dof)


def bandit_optima(curves: pd.DataFrame, budgets: Sequence[float]) -> pd.DataFrame:
    """`bandit_optimum` at each budget, as `claims.optima_by_budget` lays it out for `bandit_n_star_grows`:
    columns ``rollouts``, ``n``, ``score`` (pass@1), ``within noise``, ``lead`` (the best's
    pass@1 lead over the runner-up, 95% from standard errors over seeds) and ``candidates``.
    Budgets that fewer than two curves reach are left out."""
    trained, multiplier, rows = curves[curves["rollouts"] > 0], seeds_multiplier(curves), []
    for budget in budgets:
        within = curves_at(trained, budget)
        if len(within) < 2:
            continue
        found = _optimum_within(within, multiplier)
        runner = within.drop(index=found.best)["suboptimality"].idxmin()
        rows.append({"rollouts": budget, "n": found.best, "score": found.value, "within noise": found.tied,
                     "lead": _lead(within, found.best, runner, multiplier, seeds_dof(curves)),
                     "candidates": len(within)})
    return pd.DataFrame(rows, columns=["rollouts", "n", "score", "within noise", "lead", "candidates"])


def smallest_n_wins(curves: pd.DataFrame, budgets: Sequence[float], claim: str) -> Finding:
    """Claim (tabular bandit): the smallest n has the lowest suboptimality at every budget.
    Each budget is a part: reproduced where it leads the next best n beyond
    `seeds_multiplier` standard errors over seeds, unresolved where not (no margin: a
    bandit's suboptimality has no scale a reader would call negligible), not reproduced
    where another n leads beyond them."""
    smallest, multiplier = int(curves["n"].min()), seeds_multiplier(curves)
    parts, winners, gaps = [], [], []
    for budget in budgets:
        within = curves_at(curves, budget)
        others = within.drop(index=smallest)
        if others.empty:
            continue
        lead = _lead(within, smallest, others["suboptimality"].idxmin(), multiplier, seeds_dof(curves))
        parts.append(direction(lead, margin=0.0))
        winners.append(f"{budget:,.0f}: {within['suboptimality'].idxmin()}")
        gaps.append(f"{budget:,.0f}: {lead.estimate:+.4f} ± {lead.high - lead.estimate:.4f}")
    if not parts:
        return not_measured(claim, "needs two n values within a budget", BANDIT)
    return Finding.decided(claim, "bandit n* by budget: " + ", ".join(winners), combine(parts, any_refutes=True),
                           f"next best n's suboptimality minus n = {smallest}'s (95%, standard errors over seeds): "
                           + ", ".join(gaps), family=BANDIT)


def bandit_n_star_grows(optima: pd.DataFrame, claim: str, level: str = "n") -> Finding:
    """Claim: the bandit's n* grows with compute. `optima`: `bandit_optima`. Reproduced when
    every n within noise of the optimum at the largest budget exceeds every n within noise
    at the smallest (the bandit averages many seeds, so its sets are about the policy, not
    one run). The n within noise at the last two budgets are in the uncertainty column."""
    if len(optima) < 2:
        return not_measured(claim, "needs two budgets with at least two curves each", BANDIT)
    first, last = optima.iloc[0], optima.iloc[-1]
    measured = f"{level}* by budget: " + ", ".join(f"{r:,.0f}: {v:g}" for r, v in zip(optima["rollouts"],
                                                                                    optima[level]))
    sets = [f"{set_text(row['within noise'])} at {row['rollouts']:,.0f}"
            for row in ([first] if len(optima) == 2 else [first, optima.iloc[-2]]) + [last]]
    lead = last["lead"]
    uncertainty = (f"{level} within noise of {level}*: " + ", ".join(sets)
                   + (f"; lead over the runner-up at {last['rollouts']:,.0f}: {lead}" if lead else ""))
    return Finding.decided(claim, measured, order(first["within noise"], last["within noise"]), uncertainty,
                           family=BANDIT)


def set_text(values: Sequence[float]) -> str:
    """A set of candidates as the findings write it: ``{4, 8}``."""
    return "{" + ", ".join(f"{v:g}" for v in values) + "}"
