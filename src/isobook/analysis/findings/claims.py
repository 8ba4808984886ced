"""The paper's claims about LLM runs, one pure function each: per-problem scores (by seed,
`statistics.problem_scores`), counts or logged updates in, a `Finding` (claim, our
numbers, verdict, interval) out.

Each claim is decided by one contrast, fixed before the data (the chapters state it
beside the claim), whose interval holds problem and training-seed variance
(`statistics.Contrast.interval`, each contrast's own seed variance moderated by the
chapter's pooled `SeedVariance`), against zero and a margin (`verdicts`):

* a candidate beats another: their difference;
* n* grows with C: the every-n advantage S(C) (every larger n's mean logit score minus
  the smallest n's), its trend over log2 C and its value at the largest budget, read as
  the paper's law reads (`n_star_grows`);
* one optimum lies at a larger n than another (worst@k against best@k, easy against hard,
  one model against another): the difference of their large-n advantages at the budget;
* a knob matters little (B_p at fixed n): the mean change between runs that differ only
  in it, tested for equivalence.

The optima tables (`optima_by_budget`, `optimum_of`) are for the reader: the best
candidate and those within noise of it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from isobook.analysis.findings.statistics import (
    BLOCKS,
    VALIDATION,
    Contrast,
    Interval,
    Optimum,
    SeedVariance,
    Z,
    block_means,
    last_quarter,
    logit_scores,
    optimum,
    problem_scores,
    ratio_interval,
    welch_interval,
)
from isobook.analysis.findings.verdicts import (
    RELATIVE_MARGIN,
    SCORE_MARGIN,
    SHARE_MARGIN,
    Decision,
    Finding,
    Verdict,
    combine,
    direction,
    equivalence,
    no_gain,
    not_measured,
    order,
)
from isobook.tasks.metrics import Metric

# ---- how the findings write candidates and uncertainty --------------------------------------------


def _label(key: Hashable) -> str:
    """A candidate as the reader sees it: ``4``, ``0.0003`` (not 0.00030000000000000003), ``hard, 32``."""
    if isinstance(key, tuple):
        return ", ".join(_label(v) for v in key)
    return f"{key:g}" if isinstance(key, (float, np.floating)) else str(key)


def _levels(keys: Sequence[Hashable], columns: pd.Index, level: str) -> list[float]:
    """The `level` value (e.g. n) of each candidate key."""
    position = list(columns.names).index(level) if isinstance(columns, pd.MultiIndex) else None
    values = {k if position is None else k[position] for k in keys}
    return sorted(int(v) if float(v).is_integer() else float(v) for v in values)


def set_text(values: Sequence[float]) -> str:
    """A set of candidates as the findings write it: ``{4, 8}``."""
    return "{" + ", ".join(f"{v:g}" for v in values) + "}"


def design(contrast: Contrast, seeds: SeedVariance | None) -> str:
    """How an interval was made: ``95% over 2 seeds x 200 problems, own seed variance (1
    df) moderated by the pool (1.1 df)`` (the pool alone, borrowed, on one seed). The pool
    itself is stated once, in the chapter's design note."""
    count = len(contrast.seeds)
    text = f"95% over {count} seed{'s' if count != 1 else ''} x {contrast.problems} problems"
    if seeds is None:
        return text + f", seed variance of this contrast alone ({count - 1} df)"
    weight = seeds.weight(count - 1)
    if not np.isfinite(weight):
        return text + f", the pooled seed variance ({seeds.dof:.1f} df)"
    if count == 1:
        return text + f"; one seed: the pooled seed variance borrowed on {weight:.1f} df"
    return text + f", own seed variance ({count - 1} df) moderated by the pool ({weight:.1f} df)"


def _decide(contrast: Contrast, seeds: SeedVariance | None, claimed: int = 1,
            margin: float = SCORE_MARGIN) -> tuple[Interval, Decision]:
    interval = contrast.interval(seeds)
    return interval, direction(interval, claimed, margin)


# ---- claims ----------------------------------------------------------------------------------------


def best_candidate(scores: pd.DataFrame, claimed: Hashable, claim: str, metric: str,
                   seeds: SeedVariance | None) -> Finding:
    """Claim: `claimed` (a column of `problem_scores`) beats every other candidate.
    Reproduced if it leads each beyond noise, partly if it leads some and ties the rest, a
    tie if it leads none beyond noise, not reproduced if any candidate beats it beyond noise."""
    if claimed not in scores.columns or scores.shape[1] < 2:
        return not_measured(claim, f"needs {_label(claimed)} and another finished run")
    means = scores.mean()
    contrasts = {c: Contrast.difference(scores, claimed, c) for c in scores.columns if c != claimed}
    leads = {c: contrast.interval(seeds) for c, contrast in contrasts.items()}
    decision = combine([direction(lead) for lead in leads.values()], any_refutes=True)  # best against each
    measured = f"{metric}: " + ", ".join(f"{_label(c)} {means[c]:.3f}" for c in scores.columns)
    uncertainty = "; ".join(f"{_label(claimed)} - {_label(c)}: {lead}" for c, lead in leads.items())
    closest = min(leads.values(), key=lambda lead: lead.estimate)  # the lead over the strongest competitor
    return Finding.decided(claim, measured, decision,
                           f"{uncertainty} ({design(next(iter(contrasts.values())), seeds)})", closest)


def greater(scores: pd.DataFrame, first: Hashable, second: Hashable, claim: str, names: tuple[str, str],
            metric: str, seeds: SeedVariance | None, claimed: int = 1) -> Finding:
    """Claim: candidate `first` scores above `second` (`claimed` = -1: below), both
    columns of `problem_scores`, compared on the seeds and problems they share."""
    return _pair(scores, first, second, claim, names, metric, seeds, lambda i: direction(i, claimed))


def gains_nothing(scores: pd.DataFrame, first: Hashable, second: Hashable, claim: str, names: tuple[str, str],
                  metric: str, seeds: SeedVariance | None) -> Finding:
    """Claim: candidate `first` gains nothing over `second`: reproduced when the upper
    end of first minus second lies below `SCORE_MARGIN` (`verdicts.no_gain`)."""
    return _pair(scores, first, second, claim, names, metric, seeds, no_gain)


def _pair(scores: pd.DataFrame, first: Hashable, second: Hashable, claim: str, names: tuple[str, str],
          metric: str, seeds: SeedVariance | None, rule: Callable[[Interval], Decision]) -> Finding:
    """A claim about `first` minus `second` decided by `rule` on its interval."""
    if first not in scores.columns or second not in scores.columns:
        return not_measured(claim, "needs both policies scored on the same problems")
    contrast = Contrast.difference(scores, first, second)
    if not contrast.seeds:
        return not_measured(claim, "needs both policies scored on one seed")
    interval = contrast.interval(seeds)
    shared = scores.loc[contrast.seeds]
    measured = f"{metric}: {names[0]} {shared[first].mean():.3f} vs {names[1]} {shared[second].mean():.3f}"
    per_seed = contrast.per_seed()
    each = "" if len(per_seed) < 2 else "; by seed: " + ", ".join(f"{v:+.3f}" for v in per_seed)
    return Finding.decided(claim, measured, rule(interval),
                           f"{names[0]} - {names[1]}: {interval}{each} ({design(contrast, seeds)})", interval)


def training_statistic_rises(first: pd.DataFrame, second: pd.DataFrame, columns: Sequence[str], claim: str,
                             names: tuple[str, str], claimed: int = 1) -> Finding:
    """Claim: each logged statistic in `columns` (e.g. entropy, response length) is higher
    in the first run than in the second (`claimed` = -1: lower), over the updates of each
    run's last quarter. `first`, `second`: the runs' logged updates (`sweeps.run_history`),
    one seed each: the interval holds the noise within each run, not between seeds."""
    parts = {column: (last_quarter(first, column), last_quarter(second, column)) for column in columns}
    if not parts or any(len(a) == 0 or len(b) == 0 for a, b in parts.values()):
        return not_measured(claim, "needs both runs' logged updates")
    intervals = {name: welch_interval(block_means(a), block_means(b)) for name, (a, b) in parts.items()}
    decisions = [direction(intervals[name], claimed, RELATIVE_MARGIN * abs(np.mean(b)))
                 for name, (_, b) in parts.items()]
    measured = "; ".join(f"{name.replace('_', ' ')}: {np.mean(a):.3f} {names[0]} vs {np.mean(b):.3f} {names[1]}"
                         for name, (a, b) in parts.items())
    uncertainty = "; ".join(f"{name.replace('_', ' ')} {names[0]} - {names[1]}: {interval}"
                            for name, interval in intervals.items())
    updates = min(len(a) for a, _ in parts.values())
    return Finding.decided(claim, measured, combine(decisions),
                           f"{uncertainty} (95% Welch interval on {min(BLOCKS, updates)} block means of the last "
                           f"{updates} updates of one run each; equivalent within {RELATIVE_MARGIN:.0%} of "
                           f"{names[1]}'s mean)", next(iter(intervals.values())))


def gap_widens(history: pd.DataFrame, counts: pd.DataFrame, metric: Metric, claim: str,
               seeds: SeedVariance | None) -> Finding:
    """Claim (Figure 13): over the second half of a run, its training reward pulls away from
    its validation `metric` (the train-test gap widens: the training reward keeps rising
    where the validation score rises less or not at all). `history`: the run's logged
    updates (`sweeps.run_history`); `counts`: its per-problem validation counts; one run.

    Both halves of the gap are read at the same two points: the latest evaluation within
    half of the run's rollouts and the last one. The training reward there is the mean of
    the updates since the evaluation before it (`frontier.training_rewards`), and its rise
    gets a 95% Welch interval on block means; the validation rise is a contrast of the two
    evaluations with the (borrowed) seed variance. The widening is the first rise minus the
    second, its interval from the two intervals' standard errors (conservative: the Welch
    part, read as normal, is overstated)."""
    if "seed" in history and history["seed"].nunique() > 1:
        raise ValueError("history: one run's updates, got several seeds")
    scored = counts[counts["rollouts"] > 0]
    evaluated = np.sort(scored["rollouts"].unique())
    if len(evaluated) < 3:
        return not_measured(claim, "needs a finished run evaluated at least three times after its first update")
    final = evaluated[-1]
    within_half = evaluated[evaluated <= final / 2]
    if len(within_half) < 2:
        return not_measured(claim, "needs two evaluations within half of the run's rollouts")
    halfway = within_half[-1]
    updates = history[(history["step"] > 0) & history["reward"].notna()]
    # each point's window: the updates since the evaluation before it
    windows = {point: updates.loc[(updates["rollouts"] > start) & (updates["rollouts"] <= point), "reward"].to_numpy(float)
               for point, start in ((halfway, within_half[-2]), (final, evaluated[-2]))}
    if min(len(window) for window in windows.values()) < 2:
        return not_measured(claim, "needs at least two updates before each of the two evaluations compared")
    points = scored[scored["rollouts"].isin([halfway, final])].assign(point=lambda t: t["rollouts"])
    scores = problem_scores(points.assign(rollouts=1.0), ["point"], metric)  # each point as a candidate
    validation_contrast = Contrast.difference(scores, final, halfway)
    training = welch_interval(block_means(windows[final]), block_means(windows[halfway]))
    validation = validation_contrast.interval(seeds)
    if not np.isfinite([training.low, training.high]).all():
        return not_measured(claim, "needs at least two blocks of updates before each evaluation compared")
    spread = np.hypot((training.high - training.low) / (2 * Z), (validation.high - validation.low) / (2 * Z))
    widening = training.estimate - validation.estimate
    interval = Interval(widening, widening - Z * spread, widening + Z * spread)  # normal: infinite dof
    means = scores.mean()
    measured = (f"training reward {windows[halfway].mean():.3f} -> {windows[final].mean():.3f}, {metric} "
                f"{means[halfway]:.3f} -> {means[final]:.3f} ({halfway:,.0f} -> {final:,.0f} rollouts)")
    return Finding.decided(claim, measured, direction(interval),
                           f"gap widening: {interval} (training rise {training}, 95% Welch interval on block means "
                           f"of {len(windows[halfway])} and {len(windows[final])} updates; validation rise "
                           f"{validation}, {design(validation_contrast, seeds)})", interval)


def scores_by_budget(counts: pd.DataFrame, by: Sequence[str], metric: Metric,
                     budgets: Sequence[float]) -> dict[float, pd.DataFrame]:
    """`problem_scores` at each budget that has at least one candidate."""
    found = {budget: problem_scores(counts, by, metric, rollouts=budget) for budget in budgets}
    return {budget: scores for budget, scores in found.items() if scores.shape[1]}


def optima_by_budget(counts: pd.DataFrame, by: Sequence[str], metric: Metric, budgets: Sequence[float],
                     seeds: SeedVariance | None, level: str = "n") -> pd.DataFrame:
    """`optima_of_scores` of `scores_by_budget`."""
    return optima_of_scores(scores_by_budget(counts, by, metric, budgets), by, seeds, level)


def optima_of_scores(by_budget: Mapping[float, pd.DataFrame], by: Sequence[str], seeds: SeedVariance | None,
                     level: str = "n") -> pd.DataFrame:
    """At each budget of `by_budget` (per-problem scores, columns the `by` candidates), the
    best candidate and the `level` values within noise of it: columns ``rollouts``, the `by`
    columns of the best, ``score``, ``within noise`` (the set of `level` values, as a
    tuple), ``lead`` (the best's lead over the runner-up, an `Interval` or None) and
    ``candidates``. Budgets with fewer than two candidates are left out."""
    rows = []
    for budget, scores in by_budget.items():
        if scores.columns.nlevels != len(by):
            raise ValueError(f"by: {list(by)} names {len(by)} column levels; the scores have {scores.columns.nlevels}")
        if scores.shape[1] < 2:
            continue
        found = optimum(scores, seeds)
        best = found.best if isinstance(found.best, tuple) else (found.best,)
        rows.append({"rollouts": budget, **dict(zip(by, best)), "score": found.value,
                     "within noise": tuple(_levels(found.tied, scores.columns, level)), "lead": found.runner_up,
                     "candidates": scores.shape[1]})
    return pd.DataFrame(rows, columns=["rollouts", *by, "score", "within noise", "lead", "candidates"])


def _groups_by_level(columns: pd.MultiIndex, level: str) -> dict[tuple, list]:
    """The candidates of each value of the other levels (each B_p's n); where every group has
    one candidate (a fixed batch: one n per B_p), one group of them all (the splits)."""
    position = list(columns.names).index(level)
    groups: dict[tuple, list] = {}
    for key in columns:
        groups.setdefault(tuple(v for i, v in enumerate(key) if i != position), []).append(key)
    return {(): list(columns)} if all(len(keys) < 2 for keys in groups.values()) else groups


def large_n_advantage(scores: pd.DataFrame, level: str = "n", problems: str = "validation") -> Contrast | None:
    """Score of the largest `level` minus the smallest, as a `Contrast`. Where the columns
    are (B_p, n) pairs, the mean over the B_p with two or more n of that difference within
    each B_p (at a fixed batch, where each B_p has one n, the largest-n split minus the
    smallest). None where no candidate pair exists."""
    columns = scores.columns
    if not isinstance(columns, pd.MultiIndex):
        values = sorted(columns)
        return None if len(values) < 2 else Contrast.difference(scores, values[-1], values[0], problems)
    position = list(columns.names).index(level)
    groups = _groups_by_level(columns, level)
    pairs = [(max(keys, key=lambda k: k[position]), min(keys, key=lambda k: k[position]))
             for keys in groups.values() if len(keys) >= 2]
    if not pairs:
        return None
    weights: dict[Hashable, float] = {}
    for large, small in pairs:
        weights[large] = weights.get(large, 0.0) + 1 / len(pairs)
        weights[small] = weights.get(small, 0.0) - 1 / len(pairs)
    return Contrast.of(scores, weights, problems)


def every_n_advantage(scores: pd.DataFrame, level: str = "n", problems: str = VALIDATION) -> Contrast | None:
    """The every-n advantage: the mean score of every `level` above the smallest, minus
    the smallest's. With two candidates it is the large-n advantage; with more, n* moving
    from 4 to 8 raises it where the extremes alone need not move (a least-squares slope
    over log2 n would not: it weighs n = 8 below the centre of a grid 4 ... 32 negatively).
    Where the columns are (B_p, n) pairs, the mean over the B_p with two or more n of it
    within each (at a fixed batch, where each B_p has one n, over the splits). None where
    no two values of `level` exist."""
    columns = scores.columns
    position = list(columns.names).index(level) if isinstance(columns, pd.MultiIndex) else None

    def value(key: Hashable) -> float:
        return float(key if position is None else key[position])

    groups = _groups_by_level(columns, level) if position is not None else {(): list(columns)}
    fitted = [keys for keys in groups.values() if len({value(k) for k in keys}) >= 2]
    if not fitted:
        return None
    weights: dict[Hashable, float] = {}
    for keys in fitted:
        smallest = min(keys, key=value)
        above = [k for k in keys if value(k) > value(smallest)]
        for key, w in ((smallest, -1.0), *((k, 1 / len(above)) for k in above)):
            weights[key] = weights.get(key, 0.0) + w / len(fitted)
    return Contrast.of(scores, weights, problems)


def growth_advantages(by_budget: Mapping[float, pd.DataFrame], level: str = "n") -> dict[float, Contrast]:
    """The every-n advantage on the logit scale at each budget of `by_budget`
    (`scores_by_budget`) that has two values of `level` on a shared seed: S(C) of `n_star_grows`."""
    found = {budget: every_n_advantage(logit_scores(scores), level) for budget, scores in by_budget.items()}
    return {budget: contrast for budget, contrast in found.items() if contrast is not None and contrast.seeds}


def growth_trend(contrasts: Mapping[float, Contrast]) -> tuple[Contrast, Contrast, float]:
    """The least-squares line of `contrasts` over log2 of their budgets: (its slope per
    doubling, its level at the mean log2 budget, that mean)."""
    budgets = sorted(contrasts)
    x = np.log2(budgets)
    slope_weights = (x - x.mean()) / ((x - x.mean()) ** 2).sum()
    slope = sum((float(w) * contrasts[b] for w, b in zip(slope_weights[1:], budgets[1:])),
                float(slope_weights[0]) * contrasts[budgets[0]])
    level = sum((contrasts[b] for b in budgets[1:]), contrasts[budgets[0]])
    return slope, (1 / len(budgets)) * level, float(x.mean())


def logit_margin(scores: pd.DataFrame, margin: float = SCORE_MARGIN) -> float:
    """`margin` (a difference of pass rates) on the logit scale at the mean pass rate of
    `scores`: margin / (p (1 - p)), the same difference near the middle of the scale."""
    p = float(np.clip(np.nanmean(scores.to_numpy(float)), 0.01, 0.99))
    return margin / (p * (1 - p))


def n_star_grows(by_budget: Mapping[float, pd.DataFrame], claim: str, seeds: SeedVariance | None,
                 level: str = "n") -> Finding:
    """Claim: n* grows with compute, as the paper's law has it (small at small C, larger
    later, then saturating). `by_budget`: `scores_by_budget`, the same candidates at every
    budget used.

    The statistic, S(C), is the every-n advantage (`every_n_advantage`) on the logit scale
    (`statistics.logit_scores`): near the ceiling a deficit of pass rates shrinks because
    every n saturates, not because n* moves, and on the logit scale it does not. Two
    contrasts decide: the trend T of S over log2 C (per doubling) and S at the largest
    budget, F. Margins: `SCORE_MARGIN` at the grid's mean pass rate on the logit scale
    (`logit_margin`) for F, spread over the doublings measured for T.

    * reproduced: T resolved positive and F resolved positive or equivalent to zero (n*
      moved up: larger n gained beyond noise and are no longer behind);
    * in the paper's direction, not reached: T resolved positive, F resolved negative
      (the large-n deficit shrinks beyond noise but large n is still behind: what the law
      predicts below the crossing); the finding states where the fitted line of S crosses
      zero, extrapolated, with Fieller's interval;
    * partly: T resolved positive, F unresolved (whether larger n caught up is open);
    * not reproduced: growth resolved absent, T resolved negative or equivalent to zero;
      but a T equivalent to zero where S is resolved positive at both ends (n* above the
      smallest n throughout: the grid cannot show it move) stays unresolved;
    * else unresolved."""
    advantages = growth_advantages(by_budget, level)
    if len(advantages) < 2:
        return not_measured(claim, f"needs at least two values of {level} at two budgets")
    budgets = sorted(advantages)
    doublings = float(np.log2(budgets[-1]) - np.log2(budgets[0]))
    margin = logit_margin(by_budget[budgets[-1]])
    slope, centre, mean_x = growth_trend(advantages)
    trend, trend_decision = _decide(slope, seeds, margin=margin / doublings)
    final, final_decision = _decide(advantages[budgets[-1]], seeds, margin=margin)
    first = advantages[budgets[0]].interval(seeds)
    rising = trend_decision.verdict == Verdict.REPRODUCED
    both = max(trend_decision.p_value, final_decision.p_value)  # a verdict on both parts: both tests needed
    if rising and (final.sign > 0 or final_decision.verdict == Verdict.EQUIVALENT):
        decision = Decision(Verdict.REPRODUCED, both)
    elif rising:
        decision = (Decision(Verdict.NOT_REACHED, both) if final.sign < 0
                    else Decision(Verdict.PARTLY, trend_decision.p_value))
    elif trend_decision.verdict in (Verdict.NOT_REPRODUCED, Verdict.EQUIVALENT):
        pinned = trend_decision.verdict == Verdict.EQUIVALENT and first.sign > 0 and final.sign > 0
        decision = Decision(Verdict.UNRESOLVED if pinned else Verdict.NOT_REPRODUCED, trend_decision.p_value)
    else:
        decision = Decision(Verdict.UNRESOLVED, trend_decision.p_value)
    columns = by_budget[budgets[-1]].columns
    values = _levels(list(columns), columns, level)
    within = isinstance(columns, pd.MultiIndex) and len(columns) > len({key[list(columns.names).index(level)]
                                                                        for key in columns})
    what = (f"every {level} above each B_p's smallest minus it, logit, mean over B_p" if within else
            f"every {level} above {values[0]:g} minus {level} = {values[0]:g}, logit")
    measured = f"{what}: " + ", ".join(f"{b:,.0f}: {advantages[b].estimate:+.2f}" for b in budgets)
    uncertainty = (f"trend per doubling of C {trend} (equivalent within ±{margin / doublings:.3f}); at "
                   f"{budgets[-1]:,.0f}: {final} (equivalent within ±{margin:.3f}, {SCORE_MARGIN:g} of pass rate)")
    if decision.verdict in (Verdict.NOT_REACHED, Verdict.PARTLY) and final.estimate < 0:
        # The trend is resolved, so Fieller's interval is bounded; its ends may lie far out.
        crossing = ratio_interval(centre, slope, seeds)  # from the mean log2 C back to S = 0, in doublings
        at = [_rollouts(mean_x - r) for r in (crossing.estimate, crossing.high, crossing.low)]
        uncertainty += (f"; the fitted line reaches zero (larger {level} catch up) at C ~ {at[0]} rollouts, "
                        f"extrapolated, 95% [{at[1]}, {at[2]}]")
    elif decision.verdict == Verdict.UNRESOLVED and first.sign > 0 and final.sign > 0:
        uncertainty += f"; the larger {level} lead at both ends: n* cannot be seen to move within this grid"
    return Finding.decided(claim, measured, decision, f"{uncertainty} ({design(advantages[budgets[-1]], seeds)})",
                           trend)


def _rollouts(doublings: float) -> str:
    """2 ** `doublings` rollouts as the findings write them; past 2^40, "beyond 2^40"."""
    return f"{2.0 ** doublings:,.0f}" if doublings <= 40 else "beyond 2^40"


def optimum_at_larger_n(upper: tuple[str, pd.DataFrame, str], lower: tuple[str, pd.DataFrame, str], claim: str,
                        seeds: SeedVariance | None, level: str = "n") -> Finding:
    """Claim: the optimum named first lies at a larger n than the one named second. Each is
    (name, its `problem_scores` at the budget, the problem set they are scored on: equal
    names pair problems, as worst@k and best@k of the same runs do). The contrast: the
    first's large-n advantage minus the second's (`large_n_advantage`), claimed positive."""
    (upper_name, upper_scores, upper_set), (lower_name, lower_scores, lower_set) = upper, lower
    advantages = [large_n_advantage(s, level, problems) if s.shape[1] else None
                  for s, problems in ((upper_scores, upper_set), (lower_scores, lower_set))]
    if any(a is None or not a.seeds for a in advantages):
        return not_measured(claim, f"needs the largest and smallest {level} scored for {upper_name} and {lower_name}")
    contrast = advantages[0] - advantages[1]
    if not contrast.seeds:
        return not_measured(claim, "needs both optima measured on a common seed")
    interval, decision = _decide(contrast, seeds)
    best = {name: optimum(s, seeds) for name, s in ((upper_name, upper_scores), (lower_name, lower_scores))}
    measured = "; ".join(f"{name}: {level}* = {_label(o.best)} ({o.value:.3f}), large-{level} advantage "
                         f"{a.estimate:+.3f}" for (name, o), a in zip(best.items(), advantages))
    return Finding.decided(claim, measured, decision,
                           f"advantage {upper_name} - {lower_name}: {interval} ({design(contrast, seeds)})", interval)


def optimum_above(upper: tuple[str, Optimum | None, Sequence[float]],
                  lower: tuple[str, Optimum | None, Sequence[float]], claim: str, level: str = "n",
                  floor: float | None = None) -> Finding:
    """Claim: the optimum named first lies at a larger n than the one named second, where
    the two cannot share a contrast (an LLM against a bandit). Each is (name, its
    `Optimum` or None where no run finished, the n values within noise of it): reproduced
    when every n within noise of the first exceeds every n within noise of the second.

    `floor`: the smallest n tried. Where the first optimum is already at the floor and the
    second is there too, no grid could show the second below the first: unresolved
    (censored), not a contradiction."""
    (upper_name, upper_best, upper_set), (lower_name, lower_best, lower_set) = upper, lower
    if upper_best is None or lower_best is None:
        return not_measured(claim, f"no finished run for {upper_name if upper_best is None else lower_name}")
    measured = (f"{upper_name}: {level}* = {_label(upper_best.best)} ({upper_best.value:.3f}); "
                f"{lower_name}: {level}* = {_label(lower_best.best)} ({lower_best.value:.3f})")
    uncertainty = f"{level} within noise: {upper_name} {set_text(upper_set)}, {lower_name} {set_text(lower_set)}"
    decision = order(lower_set, upper_set)
    if decision.verdict == Verdict.NOT_REPRODUCED and floor is not None and max(upper_set) == floor == min(lower_set):
        decision = Decision(Verdict.UNRESOLVED)
        uncertainty += f"; both at the smallest {level} tried ({floor:g}): a smaller optimum cannot be seen"
    return Finding.decided(claim, measured, decision, uncertainty)


def optimum_of(scores: pd.DataFrame, seeds: SeedVariance | None,
               level: str = "n") -> tuple[Optimum | None, list[float]]:
    """The `optimum` of `problem_scores` and the `level` values (e.g. n) within noise of
    it; (None, []) when no run is there to choose from."""
    if scores.shape[1] == 0:
        return None, []
    found = optimum(scores, seeds)
    return found, _levels(found.tied, scores.columns, level)


def spread_comparison(scores: pd.DataFrame, claim: str, metric: str, seeds: SeedVariance | None) -> Finding:
    """Claim: varying n at fixed B_p moves the score more than varying B_p at fixed n
    (Figure 9). `scores`: `problem_scores` with columns (``batch_problems``, ``n``) at a
    common budget.

    The statistic is the mean absolute difference of score between two runs that differ
    only in n, minus the same for runs that differ only in B_p. (The paper reports ranges,
    max - min; a range grows with the number of runs it spans even under pure noise, and a
    grid rarely has as many n per B_p as B_p per n, so pairs keep the two sides
    comparable.) Its interval linearises the absolute values at the estimate (each pair's
    difference keeps its measured sign), which makes it a contrast of the candidates."""
    if scores.empty:
        return not_measured(claim, "no finished runs at the budget")
    if not isinstance(scores.columns, pd.MultiIndex) or list(scores.columns.names) != ["batch_problems", "n"]:
        raise ValueError("scores: columns must be (batch_problems, n)")
    columns = list(scores.columns)
    over_n, over_bp = [], []
    for i, j in itertools.combinations(range(len(columns)), 2):
        if columns[i][0] == columns[j][0]:
            over_n.append((i, j))
        elif columns[i][1] == columns[j][1]:
            over_bp.append((i, j))
    if not over_bp or not over_n:
        return not_measured(claim, "needs two B_p at one n and two n at one B_p, finished at one budget")
    means = scores.mean().to_numpy()
    weights: dict[Hashable, float] = {}
    for pairs, side in ((over_n, 1.0), (over_bp, -1.0)):
        for i, j in pairs:
            sign = side * np.sign(means[i] - means[j]) / len(pairs)
            weights[columns[i]] = weights.get(columns[i], 0.0) + sign
            weights[columns[j]] = weights.get(columns[j], 0.0) - sign
    contrast = Contrast.of(scores, weights)
    interval, decision = _decide(contrast, seeds)
    change_n = np.mean([abs(means[i] - means[j]) for i, j in over_n])
    change_bp = np.mean([abs(means[i] - means[j]) for i, j in over_bp])
    measured = (f"{metric} moves {change_bp:.3f} when only B_p changes ({len(over_bp)} pairs) vs {change_n:.3f} "
                f"when only n changes ({len(over_n)} pairs)")
    return Finding.decided(claim, measured, decision,
                           f"n-change minus B_p-change: {interval} ({design(contrast, seeds)})", interval)


def matters_little(scores: pd.DataFrame, claim: str, metric: str, seeds: SeedVariance | None,
                   level: str = "batch_problems", margin: float = SCORE_MARGIN) -> Finding:
    """Claim: changing `level` (B_p) at a fixed value of the other column moves the score
    by less than `margin` (Fig. 9, 11: "matters little"). `scores`: `problem_scores` with
    columns (``batch_problems``, ``n``) at a common budget. The statistic is the mean
    absolute change between two runs that differ only in `level`, linearised at the
    estimate as in `spread_comparison` (each pair's difference keeps its measured sign, so
    noise alone makes it positive: the test leans towards "matters"), tested for
    equivalence (`verdicts.equivalence`); for the same reason an interval beyond the
    margin does not refute the claim (unresolved, not "not reproduced")."""
    if scores.empty:
        return not_measured(claim, "no finished runs at the budget")
    if not isinstance(scores.columns, pd.MultiIndex) or list(scores.columns.names) != ["batch_problems", "n"]:
        raise ValueError("scores: columns must be (batch_problems, n)")
    position = list(scores.columns.names).index(level)
    columns = list(scores.columns)
    pairs = [(i, j) for i, j in itertools.combinations(range(len(columns)), 2)
             if columns[i][position] != columns[j][position]
             and all(a == b for k, (a, b) in enumerate(zip(columns[i], columns[j])) if k != position)]
    if not pairs:
        return not_measured(claim, f"needs two runs that differ only in {level}, finished at one budget")
    means = scores.mean().to_numpy()
    weights: dict[Hashable, float] = {}
    for i, j in pairs:
        sign = np.sign(means[i] - means[j]) / len(pairs)
        weights[columns[i]] = weights.get(columns[i], 0.0) + sign
        weights[columns[j]] = weights.get(columns[j], 0.0) - sign
    contrast = Contrast.of(scores, weights)
    interval = contrast.interval(seeds)
    shown = "B_p" if level == "batch_problems" else level
    measured = (f"{metric} moves {interval.estimate:.3f} on average when only {shown} changes "
                f"({len(pairs)} pair{'s' if len(pairs) != 1 else ''})")
    return Finding.decided(claim, measured, equivalence(interval, margin, refutes=False),
                           f"{shown}-change: {interval}, equivalent within ±{margin:g} "
                           f"({design(contrast, seeds)})", interval)


def piles_up(counts: pd.DataFrame, small_n: int, large_n: int, claim: str,
             seeds: SeedVariance | None, matched: str = "compute", problems: str = VALIDATION) -> Finding:
    """Claim (Figure 12): the smaller n leaves more problems at pass@1 = 0 and solves more
    to pass@1 = 1 than the larger n. `counts`: per-problem ``n``, ``rollouts``, ``id``,
    ``correct``, ``samples`` (and ``seed``) of one set's `problems`, compared problem by
    problem and seed by seed; a problem is at 0 when none of its samples is right and at 1
    when all are. Validation problems (`sweeps.run_counts`) are ones neither run trained
    on, so both n are read on problems they visited equally; training problems
    (`sweeps.run_train_pass`) are visited unequally by the two n.

    `matched`: ``compute`` compares both n at the largest rollout count both measured (the
    small n has made large_n / small_n times the updates and epochs, as the paper's Figure
    12 pairs n = 8 over 16 epochs with n = 128 over one); ``epochs`` compares the large n
    at the largest count R > 0 for which the small n was measured at R * small_n / large_n,
    where both have drawn the same number of training problems (R / n)."""
    if matched not in ("compute", "epochs"):
        raise ValueError(f"matched: {matched!r}; allowed: compute, epochs")
    measured_at = {n: set(counts.loc[counts["n"] == n, "rollouts"]) for n in (small_n, large_n)}
    if matched == "compute":
        pairs = [(r, r) for r in measured_at[small_n] & measured_at[large_n]]
    else:
        pairs = [(r * small_n / large_n, r) for r in measured_at[large_n] if r > 0
                 and r * small_n / large_n in measured_at[small_n]]
    if not pairs:
        return not_measured(claim, f"needs per-problem counts of n = {small_n} and n = {large_n} at matched "
                            f"{matched}")
    small_at, large_at = max(pairs, key=lambda pair: pair[1])
    at = counts[((counts["n"] == small_n) & (counts["rollouts"] == small_at))
                | ((counts["n"] == large_n) & (counts["rollouts"] == large_at))]
    at = at if "seed" in at else at.assign(seed=0)
    shares = at.assign(stuck=(at["correct"] == 0).astype(float), solved=(at["correct"] == at["samples"]).astype(float))
    contrasts, intervals = {}, {}
    for share in ("stuck", "solved"):
        table = shares.pivot_table(index=["seed", "id"], columns="n", values=share, aggfunc="mean")
        contrasts[share] = Contrast.difference(table, small_n, large_n, problems=problems)
        intervals[share] = contrasts[share].interval(seeds)
    decisions = [direction(interval, margin=SHARE_MARGIN) for interval in intervals.values()]
    mean = shares.groupby("n")[["stuck", "solved"]].mean()
    names = (f"n = {small_n}", f"n = {large_n}")
    samples = int(at["samples"].max())
    where = (f"{large_at:,.0f} rollouts" if small_at == large_at else
             f"{names[0]} at {small_at:,.0f} rollouts, {names[1]} at {large_at:,.0f} (the same problems drawn)")
    measured = (f"{where}, {problems} problems; none of {samples} right: {mean.loc[small_n, 'stuck']:.0%} "
                f"({names[0]}) vs {mean.loc[large_n, 'stuck']:.0%} ({names[1]}); all {samples}: "
                f"{mean.loc[small_n, 'solved']:.0%} vs {mean.loc[large_n, 'solved']:.0%}")
    return Finding.decided(claim, measured, combine(decisions),
                           f"share at 0, {names[0]} - {names[1]}: {intervals['stuck']}; at 1: {intervals['solved']}, "
                           f"equivalent within ±{SHARE_MARGIN:g} ({design(contrasts['stuck'], seeds)})",
                           intervals["stuck"])


def wins_on_most(contrasts: dict[str, Contrast | None], claim: str, names: tuple[str, str], metric: str,
                 seeds: SeedVariance | None) -> Finding:
    """Claim: the first policy beats the second on most sets. `contrasts`: set -> first
    minus second (None where one was not scored). Reproduced when it wins beyond noise on
    more than half the sets; not reproduced when it loses beyond noise on as many sets as
    it wins (at least one); equivalent when every set is; unresolved when it neither wins
    nor loses anywhere; partly when it wins on some, loses on fewer, and falls short of a
    majority. The p-value: of the majority's weakest win (reproduced; every win needed);
    the smallest of the sets that make it, times the number of sets (not reproduced,
    partly); the largest of the sets' (equivalent, unresolved)."""
    contrasts = {name: c for name, c in contrasts.items() if c is not None and c.seeds}
    if not contrasts:
        return not_measured(claim, "needs both policies scored on the validation sets")
    intervals = {name: c.interval(seeds) for name, c in contrasts.items()}
    decisions = [direction(i) for i in intervals.values()]
    wins = sorted(d.p_value for d in decisions if d.verdict == Verdict.REPRODUCED)
    losses = [d.p_value for d in decisions if d.verdict == Verdict.NOT_REPRODUCED]
    majority, sets = len(contrasts) // 2 + 1, len(contrasts)
    if len(wins) >= majority:
        decision = Decision(Verdict.REPRODUCED, wins[majority - 1])
    elif 0 < len(losses) >= len(wins):
        decision = Decision(Verdict.NOT_REPRODUCED, min(1.0, sets * min(losses)))
    elif all(d.verdict == Verdict.EQUIVALENT for d in decisions):
        decision = Decision(Verdict.EQUIVALENT, max(d.p_value for d in decisions))
    elif not wins:
        decision = Decision(Verdict.UNRESOLVED, max(d.p_value for d in decisions))
    else:
        decision = Decision(Verdict.PARTLY, min(1.0, sets * wins[0]))
    measured = (f"{metric}, {names[0]} - {names[1]}: "
                + ", ".join(f"{s} {c.estimate:+.3f}" for s, c in contrasts.items())
                + f"; wins beyond noise on {len(wins)} of {sets}, losses on {len(losses)}")
    return Finding.decided(claim, measured, decision, "; ".join(f"{s}: {i}" for s, i in intervals.items())
                           + f" ({design(next(iter(contrasts.values())), seeds)})")


def planner_regret(scores: pd.DataFrame, predicted: Hashable | None, claim: str, metric: str,
                   seeds: SeedVariance | None) -> Finding:
    """Claim: the planner's choice is as good as the best candidate at the budget, a claim
    of no loss: reproduced when every other candidate's lead over it lies below
    `SCORE_MARGIN` (`verdicts.no_gain` on each, all needed: the largest p), not reproduced
    when one lies above. The regret shown is the best's lead (picked from the same data, so
    it leans high; zero when the planner picked the best, which is why the verdict reads
    every candidate's lead rather than the best's alone). `scores`: `problem_scores` at the
    budget; `predicted` None when the planner could not be fitted."""
    if predicted is None or predicted not in scores.columns or scores.shape[1] < 2:
        return not_measured(claim, "the planner could not be fitted" if predicted is None else
                            f"needs the predicted {_label(predicted)} and another finished run at the budget")
    found = optimum(scores, seeds)
    leads = {c: Contrast.difference(scores, c, predicted) for c in scores.columns if c != predicted}
    intervals = {c: lead.interval(seeds) for c, lead in leads.items()}
    closest = max(intervals.values(), key=lambda interval: interval.high)  # the lead nearest the margin
    measured = (f"predicted {_label(predicted)} ({scores[predicted].mean():.3f} {metric}), "
                f"best {_label(found.best)} ({found.value:.3f}): regret {found.value - scores[predicted].mean():.3f}")
    uncertainty = "; ".join(f"{_label(c)} - {_label(predicted)}: {i}" for c, i in intervals.items())
    parts = [no_gain(i) for i in intervals.values()]
    verdicts = [part.verdict for part in parts]
    if all(v == Verdict.REPRODUCED for v in verdicts):
        decision = Decision(Verdict.REPRODUCED, max(part.p_value for part in parts))
    elif Verdict.NOT_REPRODUCED in verdicts:
        decision = Decision(Verdict.NOT_REPRODUCED, min(1.0, len(parts) * min(
            part.p_value for part in parts if part.verdict == Verdict.NOT_REPRODUCED)))
    else:  # "no loss against every candidate" has no part-way verdict
        decision = Decision(Verdict.UNRESOLVED, max(part.p_value for part in parts))
    return Finding.decided(claim, measured, decision, f"{uncertainty}; no loss below {SCORE_MARGIN:g} "
                           f"({design(next(iter(leads.values())), seeds)})", closest)
