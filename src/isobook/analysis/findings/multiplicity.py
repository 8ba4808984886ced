"""The error rate of a build's verdicts, controlled: Holm's step-down procedure over the
p-values of its primary findings (statsmodels' `multipletests`).

The primaries are the claims a params file names before any result (``primaries.claims``);
a chapter marks the finding that decides each (`verdicts.primary`). Each finding's p-value
belongs to the test its verdict rests on (`verdicts.Decision`), scaled so that a verdict on
one contrast is resolved exactly when p <= 0.05 (a claim in parts combines its parts'
conservatively). Holm's procedure keeps the probability of any wrongly resolved verdict
among the primaries at 5% whatever their dependence; a primary whose adjusted p-value
exceeds 5% becomes ``unresolved``. Every other finding is exploratory: its verdict stands
on its own 95% interval, outside the family (over 40 findings a family would need
|t| >= ~22 of a two-seed contrast: out of reach by design, not by data).

    rows = controlled(rows)        # each row gains "holm p" and "holm verdict"
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from statsmodels.stats.multitest import multipletests

from isobook.analysis.findings.verdicts import LEVEL, RESOLVED, Verdict

METHOD = "holm"


def controlled(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """`rows` (`Finding.row` dicts) with ``holm p`` (the Holm-adjusted p-value over the
    primary rows that carry a ``p``; None elsewhere) and ``holm verdict`` (a primary's
    verdict, or ``unresolved`` where a resolved verdict's adjusted p-value exceeds `LEVEL`;
    an exploratory row's own verdict)."""
    tested = [i for i, row in enumerate(rows) if row.get("primary") is not None and row.get("p") is not None]
    adjusted = multipletests([rows[i]["p"] for i in tested], alpha=LEVEL, method=METHOD)[1] if tested else []
    out = [{**row, "holm p": None, "holm verdict": row["verdict"]} for row in rows]
    for i, p in zip(tested, adjusted):
        out[i]["holm p"] = float(p)
        if Verdict(rows[i]["verdict"]) in RESOLVED and p > LEVEL:
            out[i]["holm verdict"] = str(Verdict.UNRESOLVED)
    return out


def changed(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The `controlled` rows whose verdict Holm's procedure changes."""
    return [row for row in rows if row["holm verdict"] != row["verdict"]]
