"""n* tables: the best n at each power-of-two budget, with where each budget sits against
the paper's regime (chapters 02, 03, 06, 07, 08).

    by_budget = scores_by_budget(counts, ["n"], avg, budgets)
    n_star_table(by_budget, ["n"], seeds, problems=1031, largest_batch=256)
    # rollouts, C/D, updates, n, score, within noise, lead, candidates

C/D is rollouts per training problem (how often a problem has been drawn), ``updates`` the
gradient steps the largest batch (B_p x the largest n) has taken by then: the paper's hard
runs reach C/D of several hundred and hundreds of updates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from isobook.analysis.findings.claims import optima_of_scores
from isobook.analysis.findings.seed_variance import SeedVariance


def regime(rollouts: Sequence[float] | pd.Series, problems: int, largest_batch: int) -> pd.DataFrame:
    """Columns ``C/D`` (rollouts over `problems` training problems) and ``updates`` (whole
    updates of `largest_batch` rollouts) of each budget in `rollouts`."""
    values = pd.Series(rollouts, dtype=float).reset_index(drop=True)
    return pd.DataFrame({"C/D": values / problems, "updates": (values // largest_batch).astype(int)})


def with_regime(table: pd.DataFrame, problems: int, largest_batch: int, column: str = "rollouts") -> pd.DataFrame:
    """`table` with ``C/D`` and ``updates`` (`regime` of its `column`) inserted after `column`."""
    at = list(table.columns).index(column) + 1
    found = regime(table[column], problems, largest_batch).set_axis(table.index)
    return pd.concat([table.iloc[:, :at], found, table.iloc[:, at:]], axis=1)


def regime_text(budgets: Sequence[float], problems: int, largest_batch: int) -> str:
    """Where `budgets` sit, for a chart's title: ``C/D 0.5-4, 2-16 updates of B = 256``
    (empty without budgets)."""
    found = regime(budgets, problems, largest_batch)
    if found.empty:
        return ""
    span = (lambda column, fmt: f"{fmt(found[column].min())}-{fmt(found[column].max())}"
            if len(found) > 1 else fmt(found[column].iloc[0]))
    return f"C/D {span('C/D', lambda v: f'{v:.3g}')}, {span('updates', str)} updates of B = {largest_batch}"


def n_star_table(by_budget: Mapping[float, pd.DataFrame], by: Sequence[str], seeds: SeedVariance | None,
                 problems: int, largest_batch: int, level: str = "n") -> pd.DataFrame:
    """`optima_of_scores` with the regime of each budget beside its rollouts: columns
    ``rollouts``, ``C/D``, ``updates``, the `by` columns, ``score``, ``within noise``,
    ``lead``, ``candidates``."""
    optima = optima_of_scores(by_budget, by, seeds, level)
    return pd.concat([optima[["rollouts"]], regime(optima["rollouts"], problems, largest_batch),
                      optima.drop(columns="rollouts")], axis=1)


def n_star_path(table: pd.DataFrame, level: str = "n") -> str:
    """n* at each budget of an n* table, as ``4, 4, 8``."""
    return ", ".join(str(value) for value in table[level])
