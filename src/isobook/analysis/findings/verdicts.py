"""What a claim concludes: the `Verdict`, the `Finding` a chapter shows, and the rules
from a difference's interval (or a claim's parts, or two sets of optima) to a verdict.

A claim names a direction; its difference and interval decide:

* ``reproduced``: the claimed sign, with the interval excluding zero;
* ``not reproduced``: the other sign, with the interval excluding zero (or, for an
  optimum, the claimed order is ruled out);
* ``tie``: the interval holds zero: the data cannot tell. Claims of no gain (very easy
  data, the planner's regret) predict a tie, and the verdict still says ``tie``;
* ``partly``: a claim in several parts, some reproduced and none contradicted;
* ``not measured``: a run or a table the claim needs is missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from isobook.analysis.findings.statistics import Interval


class Verdict(StrEnum):
    """A claim's verdict (the rules: this module's docstring)."""

    REPRODUCED = "reproduced"
    PARTLY = "partly"
    TIE = "tie"
    NOT_REPRODUCED = "not reproduced"
    NOT_MEASURED = "not measured"


@dataclass(frozen=True)
class Finding:
    """One row of a chapter's findings table."""

    claim: str  # the paper's claim, with its figure
    measured: str  # our numbers
    verdict: Verdict
    uncertainty: str  # the interval(s) that decided the verdict
    deciding: Interval | None = None  # the claim's deciding contrast (what two builds compare)

    def row(self) -> dict[str, object]:
        row: dict[str, object] = {"claim": self.claim, "measured": self.measured, "verdict": str(self.verdict),
                                  "uncertainty": self.uncertainty}
        if self.deciding is not None:
            row["deciding"] = [self.deciding.estimate, self.deciding.low, self.deciding.high]
        return row


def not_measured(claim: str, what: str) -> Finding:
    """The finding of a claim that lacks `what` it needs (a run, a table)."""
    return Finding(claim, what, Verdict.NOT_MEASURED, "-")


# ---- verdict rules ---------------------------------------------------------------------------------


def direction(interval: Interval, claimed: int = 1) -> Verdict:
    """The verdict on a claimed sign (+1: first above second) of a difference."""
    return Verdict.TIE if interval.sign == 0 else Verdict.REPRODUCED if interval.sign == claimed \
        else Verdict.NOT_REPRODUCED


def combine(parts: Sequence[Verdict]) -> Verdict:
    """One verdict from the verdicts of a claim's parts."""
    parts = list(parts)
    if not parts or Verdict.NOT_MEASURED in parts:
        return Verdict.NOT_MEASURED
    if Verdict.NOT_REPRODUCED in parts:
        return Verdict.NOT_REPRODUCED
    if all(p == Verdict.REPRODUCED for p in parts):
        return Verdict.REPRODUCED
    return Verdict.TIE if all(p == Verdict.TIE for p in parts) else Verdict.PARTLY


def order(lower: Sequence[float], upper: Sequence[float]) -> Verdict:
    """Does `upper` (a set of optimal n within noise) lie above `lower`? Reproduced when
    every member of `upper` exceeds every member of `lower`; not reproduced when none
    of `upper` exceeds any of `lower`; a tie when the sets leave it open."""
    if min(upper) > max(lower):
        return Verdict.REPRODUCED
    return Verdict.NOT_REPRODUCED if max(upper) <= min(lower) else Verdict.TIE
