"""What a claim concludes: the `Verdict`, the `Finding` a chapter shows, and the rules
from a difference's interval (or a claim's parts, or two sets of optima) to a verdict.

A claim of a direction (one candidate above another, an advantage that grows) is decided
by its difference's 95% interval against zero and against a margin (`SCORE_MARGIN` for
pass rates, `SHARE_MARGIN` for shares of problems, `RELATIVE_MARGIN` for logged statistics):

* ``reproduced``: the claimed sign, the interval excluding zero;
* ``not reproduced``: the other sign, the interval excluding zero (or, for an optimum,
  the claimed order ruled out);
* ``equivalent``: the interval inside ``[-margin, +margin]``: whatever the difference is,
  it is smaller than the margin (a two one-sided test at 2.5% a side);
* ``unresolved``: the interval holds zero and reaches past the margin: the data cannot
  tell a difference that matters from none;
* ``partly``: a claim in several parts, some reproduced and none contradicted;
* ``mixed``: a claim in several parts, some reproduced and some contradicted: neither a
  confirmation nor a refutation;
* ``in the paper's direction, not reached``: a claim of growth whose trend is resolved
  in the claimed direction while its end point is still resolved on the other side (a
  large-n deficit that shrinks beyond noise but has not closed: the paper's law predicts
  exactly that below the crossing);
* ``not measured``: a run or a table the claim needs is missing.

A claim of no difference ("B_p matters little", "loses nothing") is reproduced when its
interval lies inside the margin (`equivalence`, `no_gain`) and not reproduced when it lies
beyond it.

Each finding carries the p-value of the test its verdict rests on, scaled so that a
verdict on one contrast is resolved exactly when p <= 0.05 (two-sided for a direction,
twice the larger one-sided p for an equivalence); a claim in parts combines its parts'
p-values (`combine`), conservatively, so its p may exceed 0.05 where its verdict is
resolved. `multiplicity.controlled` controls the error rate across a build's findings
with them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from isobook.analysis.findings.statistics import Interval

# A difference a reader of the paper would call negligible: the paper calls B_p's spread
# of 1.9 (easy) and 2.2 (hard) points of validation reward "little" and n's 9.2 and 3.8
# points "a lot" (Fig. 9). Pass rates (avg@k, best@k, worst@k) and shares of problems take
# this margin; their trends per doubling take it spread over the budgets measured.
SCORE_MARGIN = 0.03
SHARE_MARGIN = 0.05  # shares of training problems at pass@1 0 or 1 (8 samples each: steps of 1/8 per problem)
RELATIVE_MARGIN = 0.05  # logged statistics (entropy, length): 5% of the second run's mean
LEVEL = 0.05  # what a verdict's p-value must reach; the intervals are 95%
LLM, BANDIT = "llm", "bandit"  # families of findings (error control and agreement count them apart)


class Verdict(StrEnum):
    """A claim's verdict (the rules: this module's docstring)."""

    REPRODUCED = "reproduced"
    NOT_REACHED = "in the paper's direction, not reached"
    PARTLY = "partly"
    MIXED = "mixed"
    EQUIVALENT = "equivalent"
    UNRESOLVED = "unresolved"
    NOT_REPRODUCED = "not reproduced"
    NOT_MEASURED = "not measured"


RESOLVED = frozenset({Verdict.REPRODUCED, Verdict.NOT_REACHED, Verdict.PARTLY, Verdict.MIXED, Verdict.EQUIVALENT,
                      Verdict.NOT_REPRODUCED})


@dataclass(frozen=True)
class Decision:
    """A verdict and the p-value of the test it rests on (None: no test, e.g. an order of optima)."""

    verdict: Verdict
    p_value: float | None = None


@dataclass(frozen=True)
class Finding:
    """One row of a chapter's findings table."""

    claim: str  # the paper's claim, with its figure
    measured: str  # our numbers
    verdict: Verdict
    uncertainty: str  # the interval(s) that decided the verdict
    deciding: Interval | None = None  # the claim's deciding contrast (what two builds compare)
    p_value: float | None = None  # of the test the verdict rests on (`Decision`)
    family: str = LLM  # LLM runs or bandits (`LLM`, `BANDIT`)
    headline: bool = False  # one of the book's headline findings (the README's table, `headline`)
    primary: str | None = None  # the key of the pre-registered primary claim it decides (`primary`); else exploratory
    power: dict[str, float] | None = None  # a primary's design: effect, seeds, problems, power (`power.design_row`)

    @classmethod
    def decided(cls, claim: str, measured: str, decision: Decision, uncertainty: str,
                deciding: Interval | None = None, family: str = LLM) -> Finding:
        return cls(claim, measured, decision.verdict, uncertainty, deciding, decision.p_value, family)

    def row(self) -> dict[str, object]:
        row: dict[str, object] = {"claim": self.claim, "measured": self.measured, "verdict": str(self.verdict),
                                  "uncertainty": self.uncertainty, "family": self.family}
        if self.deciding is not None:
            row["deciding"] = [self.deciding.estimate, self.deciding.low, self.deciding.high]
        if self.p_value is not None:
            row["p"] = self.p_value
        if self.headline:
            row["headline"] = True
        if self.primary is not None:
            row["primary"] = self.primary
        if self.power is not None:
            row["power"] = dict(self.power)
        return row


def headline(finding: Finding) -> Finding:
    """`finding` marked as one of the book's headline findings: the README's table lists them."""
    return replace(finding, headline=True)


def primary(finding: Finding, key: str, claims: Sequence[str], power: dict[str, float] | None = None) -> Finding:
    """`finding` as the pre-registered primary claim `key` where `claims` (``primaries.claims``)
    names it, with its design's `power`; else as a headline finding, exploratory like every
    finding that is not a primary."""
    marked = headline(finding)
    return replace(marked, primary=key, power=power) if key in claims else marked


def not_measured(claim: str, what: str, family: str = LLM) -> Finding:
    """The finding of a claim that lacks `what` it needs (a run, a table)."""
    return Finding(claim, what, Verdict.NOT_MEASURED, "-", family=family)


# ---- verdict rules ---------------------------------------------------------------------------------


def _equivalence_p(interval: Interval, margin: float) -> float:
    """Twice the larger of the two one-sided p-values of |difference| >= margin."""
    return min(1.0, 2 * max(interval.p_value(-margin, side=+1), interval.p_value(margin, side=-1)))


def direction(interval: Interval, claimed: int = 1, margin: float = SCORE_MARGIN) -> Decision:
    """The decision on a claimed sign (+1: first above second) of a difference, with
    `margin` for equivalence."""
    two_sided = interval.p_value()
    if interval.sign != 0:
        return Decision(Verdict.REPRODUCED if interval.sign == claimed else Verdict.NOT_REPRODUCED, two_sided)
    equivalent = _equivalence_p(interval, margin)
    if -margin < interval.low and interval.high < margin:
        return Decision(Verdict.EQUIVALENT, equivalent)
    return Decision(Verdict.UNRESOLVED, min(two_sided, equivalent))


def equivalence(interval: Interval, margin: float = SCORE_MARGIN, refutes: bool = True) -> Decision:
    """The decision on a claim that a difference is negligible: reproduced when its
    interval lies inside ``(-margin, margin)``, not reproduced when it lies beyond it
    (unresolved instead where `refutes` is False: a statistic biased upwards, whose
    interval beyond the margin is no test)."""
    inside = _equivalence_p(interval, margin)
    beyond = min(1.0, 2 * min(interval.p_value(margin, side=+1), interval.p_value(-margin, side=-1)))
    if -margin < interval.low and interval.high < margin:
        return Decision(Verdict.REPRODUCED, inside)
    if refutes and (interval.low > margin or interval.high < -margin):
        return Decision(Verdict.NOT_REPRODUCED, beyond)
    return Decision(Verdict.UNRESOLVED, min(inside, beyond) if refutes else inside)


def no_gain(interval: Interval, margin: float = SCORE_MARGIN) -> Decision:
    """The decision on a claim that the first gains nothing over the second: reproduced
    when the interval's upper end lies below `margin`, not reproduced when its lower end
    lies above it."""
    below = min(1.0, 2 * interval.p_value(margin, side=-1))
    above = min(1.0, 2 * interval.p_value(margin, side=+1))
    if interval.high < margin:
        return Decision(Verdict.REPRODUCED, below)
    if interval.low > margin:
        return Decision(Verdict.NOT_REPRODUCED, above)
    return Decision(Verdict.UNRESOLVED, min(below, above))


def combine(parts: Sequence[Decision], any_refutes: bool = False) -> Decision:
    """One decision from those of a claim's parts. Reproduced (or equivalent) needs every
    part, so its p-value is the largest of theirs (an intersection-union test); not
    reproduced and partly need any one part, so theirs is the smallest of the parts that
    make it, times the number of parts (Bonferroni). Parts resolved both ways are
    ``mixed`` (its p the larger of the two sides' Bonferroni p-values: it asserts both),
    never a refutation, unless `any_refutes`: a claim about every part ("best against
    every other", "at every budget"), which one part against it refutes. Unresolved
    takes the largest (above 5%: some part is unresolved), so that it never ranks before a
    resolved finding under Holm's procedure."""
    parts = list(parts)
    verdicts = [p.verdict for p in parts]
    if not parts or Verdict.NOT_MEASURED in verdicts:
        return Decision(Verdict.NOT_MEASURED)

    def any_of(kinds: set[Verdict]) -> float | None:
        values = [p.p_value for p in parts if p.verdict in kinds and p.p_value is not None]
        return min(1.0, len(parts) * min(values)) if values else None

    def all_of() -> float | None:
        values = [p.p_value for p in parts]
        return None if None in values else max(values)

    supported = {Verdict.REPRODUCED, Verdict.PARTLY}
    if Verdict.NOT_REPRODUCED in verdicts and supported & set(verdicts) and not any_refutes:
        sides = [any_of({Verdict.NOT_REPRODUCED}), any_of(supported)]
        return Decision(Verdict.MIXED, None if None in sides else max(sides))
    if Verdict.NOT_REPRODUCED in verdicts:
        return Decision(Verdict.NOT_REPRODUCED, any_of({Verdict.NOT_REPRODUCED}))
    if all(v == Verdict.REPRODUCED for v in verdicts):
        return Decision(Verdict.REPRODUCED, all_of())
    if Verdict.REPRODUCED in verdicts or Verdict.PARTLY in verdicts:
        return Decision(Verdict.PARTLY, any_of({Verdict.REPRODUCED, Verdict.PARTLY}))
    if all(v == Verdict.EQUIVALENT for v in verdicts):
        return Decision(Verdict.EQUIVALENT, all_of())
    return Decision(Verdict.UNRESOLVED, all_of())


def order(lower: Sequence[float], upper: Sequence[float]) -> Decision:
    """Does `upper` (a set of optimal n within noise) lie above `lower`? Reproduced when
    every member of `upper` exceeds every member of `lower`; not reproduced when none
    of `upper` exceeds any of `lower`; unresolved when the sets leave it open."""
    if min(upper) > max(lower):
        return Decision(Verdict.REPRODUCED)
    return Decision(Verdict.NOT_REPRODUCED if max(upper) <= min(lower) else Verdict.UNRESOLVED)
