"""Two builds of the book, finding by finding: do their verdicts agree, and are their
estimates of each claim's deciding contrast consistent with their intervals?

    isobook compare outputs/book outputs/book-replicate

A row is consistent when the two estimates differ by less than the 95% interval of their
difference, the two half-widths added in quadrature (the builds are independent: another
seed of every run, or another base model). Opposite: one build reproduced a claim that the
other resolved against.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from isobook.book.pages import findings_of_notebook
from isobook.store.errors import StoreError

OPPOSITE = {frozenset({"reproduced", "not reproduced"})}


def build_findings(book: Path) -> pd.DataFrame:
    """Every finding of a built book's executed chapters (``<book>/notebooks/*.ipynb``):
    columns ``chapter``, ``claim``, ``verdict``, ``estimate``, ``half_width`` (NaN where the
    finding names no deciding contrast)."""
    notebooks = sorted((book / "notebooks").glob("*.ipynb"))
    if not notebooks:
        raise StoreError(f"{book}: no executed chapters in {book / 'notebooks'}; allowed: a book folder that "
                         "`isobook book` built (system.outputs/book.folder)")
    rows = []
    for notebook in notebooks:
        for block in findings_of_notebook(json.loads(notebook.read_text())):
            for finding in block["findings"]:
                estimate, low, high = finding.get("deciding") or (np.nan, np.nan, np.nan)
                rows.append({"chapter": block["chapter"], "claim": finding["claim"], "verdict": finding["verdict"],
                             "estimate": estimate, "half_width": (high - low) / 2})
    return pd.DataFrame(rows)


def compare_builds(first: Path, second: Path) -> pd.DataFrame:
    """The findings both builds hold (matched by chapter and claim), side by side, with
    ``agree`` (the same verdict), ``consistent`` (the estimates' difference within the
    quadrature sum of the half-widths; NaN without a deciding contrast) and ``opposite``."""
    both = build_findings(first).merge(build_findings(second), on=["chapter", "claim"], suffixes=("_1", "_2"))
    both["agree"] = both["verdict_1"] == both["verdict_2"]
    allowed = np.hypot(both["half_width_1"], both["half_width_2"])
    difference = (both["estimate_1"] - both["estimate_2"]).abs()
    both["consistent"] = (difference < allowed).where(difference.notna() & allowed.notna())
    both["opposite"] = [frozenset({a, b}) in OPPOSITE for a, b in zip(both["verdict_1"], both["verdict_2"])]
    return both


def summary(comparison: pd.DataFrame) -> str:
    """One line: how many verdicts agree, how many deciding contrasts are consistent, how many opposite."""
    measured = comparison["consistent"].dropna()
    return (f"{int(comparison['agree'].sum())} of {len(comparison)} verdicts agree; deciding contrasts consistent "
            f"on {int(measured.sum())} of {len(measured)} ({measured.mean():.0%}); "
            f"{int(comparison['opposite'].sum())} resolved in opposite directions")
