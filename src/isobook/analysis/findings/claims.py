"""The paper's claims about LLM runs, one pure function each: per-problem counts, scores
or logged updates in, a `Finding` (claim, our numbers, verdict, interval) out.

The optima the n* claims compare come from here too (`optima_by_budget`, `optimum_of`),
with the candidate labels and sets the findings write.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from isobook.analysis.findings.statistics import (
    BLOCKS,
    CONFIDENCE,
    RESAMPLES,
    Interval,
    Optimum,
    Z,
    block_means,
    last_quarter,
    optimum,
    paired_interval,
    problem_scores,
    welch_interval,
)
from isobook.analysis.findings.verdicts import (
    Finding,
    Verdict,
    combine,
    direction,
    not_measured,
    order,
)
from isobook.tasks.metrics import Metric

# ---- how the findings write candidates ------------------------------------------------------------


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


def _over(problems: int) -> str:
    """How an uncertainty names a paired bootstrap over `problems` problems."""
    return f"95% paired bootstrap over {problems} problems"


# ---- claims ----------------------------------------------------------------------------------------


def best_candidate(scores: pd.DataFrame, claimed: Hashable, claim: str, metric: str) -> Finding:
    """Claim: `claimed` (a column of `scores`) beats every other candidate. Reproduced if
    it leads each beyond noise, partly if it leads some and ties the rest, a tie if it
    leads none beyond noise, not reproduced if any candidate beats it beyond noise."""
    if claimed not in scores.columns or scores.shape[1] < 2:
        return not_measured(claim, f"needs {_label(claimed)} and another finished run")
    means = scores.mean()
    leads = {c: paired_interval(scores[claimed], scores[c]) for c in scores.columns if c != claimed}
    verdict = combine([direction(lead) for lead in leads.values()])
    measured = f"{metric}: " + ", ".join(f"{_label(c)} {means[c]:.3f}" for c in scores.columns)
    uncertainty = "; ".join(f"{_label(claimed)} - {_label(c)}: {lead}" for c, lead in leads.items())
    return Finding(claim, measured, verdict, f"{uncertainty} ({_over(len(scores))})")


def greater(first: np.ndarray | None, second: np.ndarray | None, claim: str, names: tuple[str, str], metric: str,
            claimed: int = 1, per_seed: dict[int, tuple[np.ndarray, np.ndarray]] | None = None) -> Finding:
    """Claim: `first` scores above `second` (`claimed` = -1: below), problem by problem;
    None for a policy that was not scored.

    `per_seed`: each seed's own (first, second) scores, where `first` and `second` average
    several seeds. The paired interval holds the evaluation noise only, so a seed whose own
    interval resolves the opposite sign makes the claim a tie (as in `n_star_grows`)."""
    if first is None or second is None or len(first) == 0 or len(first) != len(second):
        return not_measured(claim, "needs both policies scored on the same problems")
    interval = paired_interval(first, second)
    verdict = direction(interval, claimed)
    measured = f"{metric}: {names[0]} {np.mean(first):.3f} vs {names[1]} {np.mean(second):.3f}"
    uncertainty = f"{names[0]} - {names[1]}: {interval} ({_over(len(first))})"
    if per_seed:
        own = {seed: paired_interval(a, b) for seed, (a, b) in per_seed.items()}
        uncertainty += "; each seed alone: " + ", ".join(f"{seed} {lead}" for seed, lead in own.items())
        if verdict != Verdict.TIE and any(lead.sign == -interval.sign for lead in own.values()):
            verdict = Verdict.TIE
    return Finding(claim, measured, verdict, uncertainty)


def training_statistic_rises(first: pd.DataFrame, second: pd.DataFrame, columns: Sequence[str], claim: str,
                             names: tuple[str, str], claimed: int = 1) -> Finding:
    """Claim: each logged statistic in `columns` (e.g. entropy, response length) is higher
    in the first run than in the second (`claimed` = -1: lower), over the updates of each
    run's last quarter. `first`, `second`: the runs' logged updates (`sweeps.run_history`)."""
    parts = {column: (last_quarter(first, column), last_quarter(second, column)) for column in columns}
    if not parts or any(len(a) == 0 or len(b) == 0 for a, b in parts.values()):
        return not_measured(claim, "needs both runs' logged updates")
    intervals = {name: welch_interval(block_means(a), block_means(b)) for name, (a, b) in parts.items()}
    measured = "; ".join(f"{name.replace('_', ' ')}: {np.mean(a):.3f} {names[0]} vs {np.mean(b):.3f} {names[1]}"
                         for name, (a, b) in parts.items())
    uncertainty = "; ".join(f"{name.replace('_', ' ')} {names[0]} - {names[1]}: {interval}"
                            for name, interval in intervals.items())
    updates = min(len(a) for a, _ in parts.values())
    return Finding(claim, measured, combine([direction(i, claimed) for i in intervals.values()]),
                   f"{uncertainty} (95% Welch interval on {min(BLOCKS, updates)} block means of the last "
                   f"{updates} updates)")


def gap_widens(history: pd.DataFrame, counts: pd.DataFrame, metric: Metric, claim: str) -> Finding:
    """Claim (Figure 13): over the second half of a run, its training reward pulls away from
    its validation `metric` (the train-test gap widens: the training reward keeps rising
    where the validation score rises less or not at all). `history`: the run's logged
    updates (`sweeps.run_history`); `counts`: its per-problem validation counts; one run.

    Both halves of the gap are read at the same two points: the latest evaluation within
    half of the run's rollouts and the last one. The training reward there is the mean of
    the updates since the evaluation before it (`frontier.training_rewards`), and its rise
    gets a 95% Welch interval on block means; the validation rise a paired bootstrap over
    problems. The widening is the first rise minus the second, its interval from the two
    intervals' standard errors (the two are independent; the Welch part's, read as normal,
    is overstated, so the interval is conservative)."""
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
    at = {r: scored[scored["rollouts"] == r].set_index("id").sort_index() for r in (halfway, final)}
    problems = at[halfway].index.intersection(at[final].index)
    score = {r: metric.per_problem(table.loc[problems, "correct"].to_numpy(), int(table["samples"].iloc[0]))
             for r, table in at.items()}
    training = welch_interval(block_means(windows[final]), block_means(windows[halfway]))
    validation = paired_interval(score[final], score[halfway])
    if not np.isfinite([training.low, training.high]).all():
        return not_measured(claim, "needs at least two blocks of updates before each evaluation compared")
    spread = np.hypot((training.high - training.low) / (2 * Z), (validation.high - validation.low) / (2 * Z))
    widening = training.estimate - validation.estimate
    interval = Interval(widening, widening - Z * spread, widening + Z * spread)
    measured = (f"training reward {windows[halfway].mean():.3f} -> {windows[final].mean():.3f}, {metric} "
                f"{score[halfway].mean():.3f} -> {score[final].mean():.3f} ({halfway:,.0f} -> {final:,.0f} rollouts)")
    return Finding(claim, measured, direction(interval),
                   f"gap widening: {interval} (training rise {training}, 95% Welch interval on block means of "
                   f"{len(windows[halfway])} and {len(windows[final])} updates; validation rise {validation}, "
                   f"{_over(len(problems))})")


def optima_by_budget(counts: pd.DataFrame, by: Sequence[str], metric: Metric, budgets: Sequence[float],
                     level: str = "n") -> pd.DataFrame:
    """At each budget, the best candidate and the `level` values within noise of it:
    columns ``rollouts``, the `by` columns of the best, ``score``, ``within noise`` (the
    set of `level` values, as a tuple), ``lead`` (the best's lead over the runner-up,
    an `Interval` or None) and ``candidates``. Budgets with fewer than two candidates are
    left out."""
    rows = []
    for budget in budgets:
        scores = problem_scores(counts, by, metric, rollouts=budget)
        if scores.shape[1] < 2:
            continue
        found = optimum(scores)
        best = found.best if isinstance(found.best, tuple) else (found.best,)
        rows.append({"rollouts": budget, **dict(zip(by, best)), "score": found.value,
                     "within noise": tuple(_levels(found.tied, scores.columns, level)), "lead": found.runner_up,
                     "candidates": scores.shape[1]})
    return pd.DataFrame(rows, columns=["rollouts", *by, "score", "within noise", "lead", "candidates"])


def n_star_grows(optima: pd.DataFrame, claim: str, level: str = "n",
                 per_seed: dict[int, pd.DataFrame] | None = None) -> Finding:
    """Claim: n* grows with compute. `optima`: `optima_by_budget`. Reproduced when every n
    within noise of the optimum at the largest budget exceeds every n within noise at the
    smallest. (The paper's n* then saturates; that half is not decided here: at a scale
    where n* barely moves, a flat end is no evidence of saturation. The n within noise at
    the last two budgets are in the uncertainty column for the reader.)

    `per_seed`: the same optima from each seed's runs alone (`optima` then averages each
    problem's score over the seeds). The paired interval holds the evaluation noise, not
    the training noise of a seed, so a seed whose own verdict contradicts the pooled one
    (reproduced against not reproduced) makes the claim a tie: another trained policy says
    otherwise."""
    if len(optima) < 2:
        return not_measured(claim, "needs two budgets with at least two finished runs each")
    first, last = optima.iloc[0], optima.iloc[-1]
    measured = f"{level}* by budget: " + ", ".join(f"{r:,.0f}: {v:g}" for r, v in zip(optima["rollouts"],
                                                                                    optima[level]))
    sets = [f"{set_text(row['within noise'])} at {row['rollouts']:,.0f}"
            for row in ([first] if len(optima) == 2 else [first, optima.iloc[-2]]) + [last]]
    lead = last["lead"]
    uncertainty = (f"{level} within noise of {level}*: " + ", ".join(sets)
                   + (f"; lead over the runner-up at {last['rollouts']:,.0f}: {lead}" if lead else ""))
    verdict = order(first["within noise"], last["within noise"])
    if per_seed:
        seeds = {seed: seed_optima for seed, seed_optima in per_seed.items() if len(seed_optima) >= 2}
        own = {seed: order(o.iloc[0]["within noise"], o.iloc[-1]["within noise"]) for seed, o in seeds.items()}
        measured += "; per seed " + ", ".join(f"{seed}: {o.iloc[0][level]:g} -> {o.iloc[-1][level]:g}"
                                               for seed, o in seeds.items())
        uncertainty += "; each seed alone: " + ", ".join(f"{seed} {v}" for seed, v in own.items())
        opposite = {Verdict.REPRODUCED: Verdict.NOT_REPRODUCED, Verdict.NOT_REPRODUCED: Verdict.REPRODUCED}
        if verdict in opposite and opposite[verdict] in own.values():
            verdict = Verdict.TIE
    return Finding(claim, measured, verdict, uncertainty)


def optimum_above(upper: tuple[str, Optimum | None, Sequence[float]],
                  lower: tuple[str, Optimum | None, Sequence[float]], claim: str, level: str = "n",
                  floor: float | None = None) -> Finding:
    """Claim: the optimum named first lies at a larger n than the one named second. Each is
    (name, its `Optimum` or None where no run finished, the n values within noise of it).

    `floor`: the smallest n tried. Where the first optimum is already at the floor and the
    second is there too, no grid could show the second below the first: a tie (censored),
    not a contradiction."""
    (upper_name, upper_best, upper_set), (lower_name, lower_best, lower_set) = upper, lower
    if upper_best is None or lower_best is None:
        return not_measured(claim, f"no finished run for {upper_name if upper_best is None else lower_name}")
    measured = (f"{upper_name}: {level}* = {_label(upper_best.best)} ({upper_best.value:.3f}); "
                f"{lower_name}: {level}* = {_label(lower_best.best)} ({lower_best.value:.3f})")
    uncertainty = f"{level} within noise: {upper_name} {set_text(upper_set)}, {lower_name} {set_text(lower_set)}"
    verdict = order(lower_set, upper_set)
    if verdict == Verdict.NOT_REPRODUCED and floor is not None and max(upper_set) == floor == min(lower_set):
        verdict = Verdict.TIE
        uncertainty += f"; both at the smallest {level} tried ({floor:g}): a smaller optimum cannot be seen"
    return Finding(claim, measured, verdict, uncertainty)


def optimum_of(counts: pd.DataFrame, by: Sequence[str], metric: Metric, rollouts: float | None = None,
               level: str = "n") -> tuple[Optimum | None, list[float]]:
    """The `optimum` of `problem_scores` (each run at its last evaluation, or within
    `rollouts`) and the `level` values (e.g. n) within noise of it; (None, []) when no
    run is there to choose from."""
    scores = problem_scores(counts, by, metric, rollouts)
    if scores.shape[1] == 0:
        return None, []
    found = optimum(scores)
    return found, _levels(found.tied, scores.columns, level)


def spread_comparison(scores: pd.DataFrame, claim: str, metric: str) -> Finding:
    """Claim: varying n at fixed B_p moves the score more than varying B_p at fixed n
    (Figure 9). `scores`: `problem_scores` with columns (``batch_problems``, ``n``) at a
    common budget.

    The statistic is the mean absolute difference of final score between two runs that
    differ only in n, minus the same for runs that differ only in B_p, bootstrapped over
    problems. (The paper reports ranges, max - min; a range grows with the number of runs
    it spans even under pure noise, and a grid rarely has as many n per B_p as B_p per n,
    so pairs keep the two sides comparable.)"""
    if scores.empty:
        return not_measured(claim, "no finished runs at the budget")
    if not isinstance(scores.columns, pd.MultiIndex) or list(scores.columns.names) != ["batch_problems", "n"]:
        raise ValueError("scores: columns must be (batch_problems, n)")
    columns = list(scores.columns)
    pairs = itertools.combinations(range(len(columns)), 2)
    over_n, over_bp = [], []
    for i, j in pairs:
        if columns[i][0] == columns[j][0]:
            over_n.append((i, j))
        elif columns[i][1] == columns[j][1]:
            over_bp.append((i, j))
    if not over_bp or not over_n:
        return not_measured(claim, "needs two B_p at one n and two n at one B_p, finished at one budget")

    def mean_change(means: np.ndarray, chosen: list[tuple[int, int]]) -> np.ndarray:
        return np.mean([np.abs(means[i] - means[j]) for i, j in chosen], axis=0)

    def statistic(*samples: np.ndarray, axis: int = -1) -> np.ndarray:
        means = np.stack([sample.mean(axis=axis) for sample in samples])  # [candidates, ...]
        return mean_change(means, over_n) - mean_change(means, over_bp)

    means = scores.mean().to_numpy()
    change_n, change_bp = float(mean_change(means, over_n)), float(mean_change(means, over_bp))
    data = tuple(scores[c].to_numpy() for c in columns)
    result = stats.bootstrap(data, statistic, paired=True, vectorized=True, n_resamples=RESAMPLES,
                             confidence_level=CONFIDENCE, method="percentile", rng=np.random.default_rng(0))
    interval = Interval(change_n - change_bp, float(result.confidence_interval.low),
                        float(result.confidence_interval.high))
    measured = (f"{metric} moves {change_bp:.3f} when only B_p changes ({len(over_bp)} pairs) vs {change_n:.3f} "
                f"when only n changes ({len(over_n)} pairs)")
    return Finding(claim, measured, direction(interval),
                   f"n-change minus B_p-change: {interval} ({_over(len(scores))})")


def piles_up(train_pass: pd.DataFrame, small_n: int, large_n: int, claim: str) -> Finding:
    """Claim (Figure 12): at matched compute, the smaller n leaves more training problems
    at pass@1 = 0 and solves more to pass@1 = 1 than the larger n. `train_pass`:
    per-problem ``n``, ``rollouts``, ``id``, ``correct``, ``samples`` (and ``seed``) of one
    set's training problems, from `sweeps.run_train_pass`; compared at the largest compute
    both n measured, problem by problem, each problem's shares averaged over seeds."""
    both = set(train_pass.loc[train_pass["n"] == small_n, "rollouts"]) & set(
        train_pass.loc[train_pass["n"] == large_n, "rollouts"])
    if not both:
        return not_measured(claim, f"needs training-set pass counts of n = {small_n} and n = {large_n} at one compute")
    compute = max(both)
    at = train_pass[train_pass["rollouts"] == compute]
    shares = at.assign(stuck=(at["correct"] == 0).astype(float), solved=(at["correct"] == at["samples"]).astype(float))
    per_problem_shares = shares.groupby(["n", "id"])[["stuck", "solved"]].mean()
    paired = per_problem_shares.loc[small_n].merge(per_problem_shares.loc[large_n], left_index=True, right_index=True,
                                                   suffixes=("_small", "_large"))
    at_zero = paired_interval(paired["stuck_small"], paired["stuck_large"])
    at_one = paired_interval(paired["solved_small"], paired["solved_large"])
    names = (f"n = {small_n}", f"n = {large_n}")
    measured = (f"{compute:,.0f} rollouts; at pass@1 = 0: {paired['stuck_small'].mean():.0%} ({names[0]}) vs "
                f"{paired['stuck_large'].mean():.0%} ({names[1]}); at 1: {paired['solved_small'].mean():.0%} vs "
                f"{paired['solved_large'].mean():.0%}")
    return Finding(claim, measured, combine([direction(at_zero), direction(at_one)]),
                   f"share at 0, {names[0]} - {names[1]}: {at_zero}; at 1: {at_one} ({_over(len(paired))})")


def wins_on_most(pairs: dict[str, tuple[np.ndarray, np.ndarray]], claim: str, names: tuple[str, str],
                 metric: str) -> Finding:
    """Claim: the first policy beats the second on most sets. `pairs`: set -> (first's,
    second's per-problem scores). Reproduced when it wins beyond noise on more than half
    the sets; not reproduced when it loses beyond noise on as many sets as it wins (at
    least one); a tie when every set is a tie; partly when it wins on some, loses on
    fewer, and falls short of a majority."""
    if not pairs:
        return not_measured(claim, "needs both policies scored on the validation sets")
    intervals = {name: paired_interval(a, b) for name, (a, b) in pairs.items()}
    wins = sum(i.sign > 0 for i in intervals.values())
    losses = sum(i.sign < 0 for i in intervals.values())
    verdict = (Verdict.REPRODUCED if 2 * wins > len(pairs) else Verdict.NOT_REPRODUCED if 0 < losses >= wins
               else Verdict.TIE if wins == losses == 0 else Verdict.PARTLY)
    measured = (f"{metric}, {names[0]} vs {names[1]}: "
                + ", ".join(f"{s} {np.mean(a):.3f} vs {np.mean(b):.3f}" for s, (a, b) in pairs.items())
                + f"; wins beyond noise on {wins} of {len(pairs)}, losses on {losses}")
    sizes = sorted({len(a) for a, _ in pairs.values()})
    return Finding(claim, measured, verdict, "; ".join(f"{s}: {i}" for s, i in intervals.items())
                   + f" ({_over(sizes[0]) if len(sizes) == 1 else '95% paired bootstrap over each set'})")


def planner_regret(scores: pd.DataFrame, predicted: Hashable | None, claim: str, metric: str) -> Finding:
    """Claim: the planner's choice is as good as the best candidate at the budget, a claim
    of no loss: a tie when the best's lead over it (the regret) is within noise, which it
    is by construction when the planner picked the best; not reproduced when the regret
    is resolved. (The best is picked from the same data, so the regret leans high.)
    `scores`: `problem_scores` at the budget; `predicted` None when the planner could
    not be fitted."""
    if predicted is None or predicted not in scores.columns or scores.shape[1] < 2:
        return not_measured(claim, "the planner could not be fitted" if predicted is None else
                            f"needs the predicted {_label(predicted)} and another finished run at the budget")
    found = optimum(scores)
    regret = paired_interval(scores[found.best], scores[predicted])
    measured = (f"predicted {_label(predicted)} ({scores[predicted].mean():.3f} {metric}), "
                f"best {_label(found.best)} ({found.value:.3f}): regret {regret.estimate:.3f}")
    return Finding(claim, measured, direction(regret, claimed=-1), f"regret {regret} ({_over(len(scores))})")
