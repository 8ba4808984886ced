"""The book's verdicts: one pure function per claim of the paper, with the uncertainty that decided it.

Each claim function takes tables a chapter already has (per-problem counts from
`sweeps.run_counts` or `transfer.transfer_counts`, a run's logged updates, bandit curves)
and returns a `Finding`: the paper's claim, our numbers, a `Verdict` and the interval
that decided it. Chapters only display findings; no verdict is decided in ``book/``.

    statistics.py     per-problem scores, paired-bootstrap and Welch intervals, optima within
                      noise, block means of logged updates (how uncertainty is measured)
    verdicts.py       `Verdict`, `Finding` and the rules from intervals to a verdict
    claims.py         the claims about LLM runs (best cell, n* by budget, spread, gap, ...)
    bandit_claims.py  the bandit's n* by budget and its claim that the smallest n wins
"""

from isobook.analysis.findings.bandit_claims import (
    bandit_optima,
    bandit_optimum,
    smallest_n_wins,
)
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
    set_text,
    spread_comparison,
    training_statistic_rises,
    wins_on_most,
)
from isobook.analysis.findings.statistics import (
    Interval,
    Optimum,
    last_quarter,
    optimum,
    paired_interval,
    problem_scores,
    seeds_multiplier,
)
from isobook.analysis.findings.verdicts import Finding, Verdict, combine

__all__ = ["Finding", "Interval", "Optimum", "Verdict", "bandit_optima", "bandit_optimum", "best_candidate",
           "combine", "gap_widens", "greater", "last_quarter", "n_star_grows", "optima_by_budget", "optimum",
           "optimum_above", "optimum_of", "paired_interval", "piles_up", "planner_regret",
           "problem_scores", "seeds_multiplier", "set_text", "smallest_n_wins", "spread_comparison",
           "training_statistic_rises", "wins_on_most"]
