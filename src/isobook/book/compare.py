"""Two builds of the book, finding by finding: do their verdicts agree, and are their
estimates of each claim's deciding contrast consistent with their intervals?

    isobook compare outputs/book book/findings.json     # a build against the README's

A row is consistent when the two estimates differ by less than the 95% interval of their
difference, the two half-widths added in quadrature (the builds are independent: another
seed of every run, or another base model). Opposite: one build reproduced a claim that the
other resolved against. The LLM rows and the bandit rows are counted apart: a rebuild on
shifted seeds (``sweep.seed_shift``) draws its bandits anew (`analysis.bandit.bandit_seed`), and rows
whose draws did not change (builds from before that) agree by construction and are
flagged as not replicated.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from isobook.analysis.findings.verdicts import BANDIT, LLM
from isobook.book.findings_file import read_findings

OPPOSITE = {frozenset({"reproduced", "not reproduced"})}


def findings_frame(rows: list[dict]) -> pd.DataFrame:
    """A build's findings (`findings_file.read_findings` rows) as a table: columns
    ``chapter``, ``claim``, ``family`` (``llm`` or ``bandit``), ``verdict``, ``measured``,
    ``estimate``, ``half_width`` (NaN where the finding names no deciding contrast)."""
    table = []
    for finding in rows:
        estimate, low, high = finding.get("deciding") or (np.nan, np.nan, np.nan)
        table.append({"chapter": finding["chapter"], "claim": finding["claim"], "family": finding.get("family", LLM),
                      "verdict": finding["verdict"], "measured": finding["measured"],
                      "uncertainty": finding["uncertainty"], "estimate": estimate, "half_width": (high - low) / 2})
    return pd.DataFrame(table)


def compare_builds(first: Path, second: Path) -> pd.DataFrame:
    """`compare_findings` of the books built in `first` and `second`."""
    return compare_findings(read_findings(first), read_findings(second))


def compare_findings(first: list[dict], second: list[dict]) -> pd.DataFrame:
    """The findings both builds hold (matched by chapter and claim), side by side, with
    ``agree`` (the same verdict), ``consistent`` (the estimates' difference within the
    quadrature sum of the half-widths; NaN without a deciding contrast), ``opposite`` and
    ``replicated`` (False for a bandit row whose numbers and intervals are the same to the
    last printed digit in both builds: its draws did not change, so it agrees by construction)."""
    both = findings_frame(first).merge(findings_frame(second).drop(columns="family"), on=["chapter", "claim"],
                                       suffixes=("_1", "_2"))
    both["agree"] = both["verdict_1"] == both["verdict_2"]
    allowed = np.hypot(both["half_width_1"], both["half_width_2"])
    difference = (both["estimate_1"] - both["estimate_2"]).abs()
    both["consistent"] = (difference < allowed).where(difference.notna() & allowed.notna())
    both["opposite"] = [frozenset({a, b}) in OPPOSITE for a, b in zip(both["verdict_1"], both["verdict_2"])]
    same = (both["measured_1"] == both["measured_2"]) & (both["uncertainty_1"] == both["uncertainty_2"])
    both["replicated"] = ~((both["family"] == BANDIT) & same)
    return both


def summary(comparison: pd.DataFrame) -> str:
    """Two lines, LLM and bandit rows apart: how many verdicts agree, how many deciding
    contrasts are consistent, how many are resolved in opposite directions (and, for the
    bandits, how many were not replicated)."""
    lines = []
    for family, label in ((LLM, "LLM"), (BANDIT, "bandit")):
        part = comparison[comparison["family"] == family]
        if part.empty:
            continue
        fresh = part[part["replicated"]]
        measured = fresh["consistent"].dropna()
        line = f"{label} rows: {int(fresh['agree'].sum())} of {len(fresh)} verdicts agree"
        if len(measured):
            line += f"; deciding contrasts consistent on {int(measured.sum())} of {len(measured)} ({measured.mean():.0%})"
        line += f"; {int(fresh['opposite'].sum())} resolved in opposite directions"
        if len(fresh) < len(part):
            line += f"; {len(part) - len(fresh)} not replicated (the same draws in both builds)"
        lines.append(line)
    return "\n".join(lines)
