"""The learning-rate envelope: every n at its own best peak learning rate (chapter 02).

    runs = envelope_runs(config, "hard")                   # the bracket of every n, on every seed
    run_configs(runs, config)
    runs += edge_runs(config, "hard", rate_counts(runs, config), avg, budget)   # past an edge
    envelope = lr_envelope(rate_counts(runs, config), avg, budgets)
    envelope.scores[4096]   # [seeds * problems, n]: each problem at the rate chosen on the other half

A rate is named by its multiplier: the run's peak learning rate over the sqrt(B) rule's at
the same batch B = B_p x n (`rate_multiplier`), so that the rule's own run is 1 and the
largest n's rate given to n = 4 at n = 32 (chapter 08's one-rate arm) is sqrt(8).

The envelope's own scores are honest about problems, not about seeds: a rate is chosen on
one half of the validation problems and the n's score is read on the other half (and the
other way round), so no problem scores the rate it chose; but the seeds are shared by both
halves, so a rate whose runs were lucky on their seeds keeps that luck in the score. They
are exploratory. The primary claim reads each n at the rate chosen on these selection seeds
(``lr_envelope.seeds``, every problem) in runs on other seeds, the confirmatory ones
(`confirmatory_runs`, ``primaries.seeds``), so no selection luck enters its interval.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from isobook.analysis.findings.seed_variance import SeedVariance
from isobook.analysis.findings.statistics import optimum, problem_scores
from isobook.config import Config
from isobook.grpo.recipe import LrScaling, scaled_lr
from isobook.sweeps import grid_run, n_grid, run_counts
from isobook.tasks.metrics import Metric

HALVES = ("A", "B")


def rule_peak(config: Config, batch: int) -> float:
    """The peak learning rate `config`'s rule (``recipe.lr_scaling``) gives a batch of `batch` rollouts."""
    r = config.recipe
    return scaled_lr(r.base_lr, r.reference_batch, batch, LrScaling(r.lr_scaling))


def rate_multiplier(run: Config, config: Config) -> float:
    """`run`'s peak learning rate over the one `config`'s rule gives its batch (1: the rule's own)."""
    batch = run.train.batch_problems * run.train.rollouts_per_problem
    return rule_peak(run, batch) / rule_peak(config, batch)


def one_rate_changes(config: Config, batch: int) -> list[str]:
    """Overrides that give every n the peak learning rate the rule gives `batch` rollouts
    (chapter 08's one-rate arm: the largest n's rate, constant)."""
    return [f"recipe.lr_scaling={LrScaling.CONSTANT.value}", f"recipe.base_lr={rule_peak(config, batch)!r}"]


def at_multiplier(config: Config, multiplier: float) -> list[str]:
    """Overrides that train at `multiplier` times the rule's peak rate (none at 1: the rule's own run)."""
    return [] if multiplier == 1 else [f"recipe.base_lr={float(config.recipe.base_lr * multiplier)!r}"]


def selection_budget(config: Config) -> int:
    """Rollouts at which each n's rate is chosen, and to which the envelope's runs train:
    ``lr_envelope.choose_at``, else the sweep's budget."""
    return config.lr_envelope.choose_at or config.sweep.budget


def envelope_runs(config: Config, set_name: str, multipliers: Sequence[float] | None = None) -> list[Config]:
    """Every n of the sweep at its first B_p on `set_name`, on every seed of ``lr_envelope.seeds``,
    to `selection_budget`: at the rule's rate times each of `multipliers` (default
    ``lr_envelope.multipliers``) and at the largest n's rate (the one-rate arm). A rate two
    arms share is one run: the rule's own
    where the multiplier is 1, else the one-rate arm's."""
    batch_problems, n_values, _ = n_grid(config)
    one_rate = one_rate_changes(config, batch_problems * max(n_values))
    budget = selection_budget(config)
    runs: dict[tuple[int, int, float], Config] = {}
    for seed in config.lr_envelope.seeds:
        for n in n_values:
            candidates = [grid_run(config, set_name, batch_problems, n, budget=budget, seed=seed),
                          grid_run(config, set_name, batch_problems, n, one_rate, budget=budget, seed=seed),
                          *(grid_run(config, set_name, batch_problems, n, at_multiplier(config, m), budget=budget,
                                     seed=seed)
                            for m in (multipliers or config.lr_envelope.multipliers))]
            for run in candidates:
                runs.setdefault((seed, n, round(rate_multiplier(run, config), 9)), run)
    return list(runs.values())


def confirmatory_runs(config: Config, set_name: str, rates: Mapping[int, float]) -> list[Config]:
    """Every n of the sweep at its first B_p on `set_name`, at its multiplier in `rates`
    (chosen on the selection seeds, `reuse.envelope_rates`; 1, the rule's, where absent), on
    every confirmatory seed (``primaries.seeds``), to the sweep's budget: the runs that
    decide the primary "every n at its own best rate"."""
    batch_problems, n_values, _ = n_grid(config)
    return [grid_run(config, set_name, batch_problems, n, at_multiplier(config, rates.get(n, 1.0)), seed=seed)
            for seed in config.primaries.seeds for n in n_values]


def rate_counts(runs: Sequence[Config], config: Config) -> pd.DataFrame:
    """`run_counts` of the validation problems of `runs`, with each run's ``multiplier`` and peak ``lr``."""
    labels = [{"multiplier": round(rate_multiplier(run, config), 9),
               "lr": rule_peak(run, run.train.batch_problems * run.train.rollouts_per_problem)} for run in runs]
    return run_counts(list(runs), "validation", labels)


def _mean_by_rate(counts: pd.DataFrame, metric: Metric, budget: float) -> pd.DataFrame:
    """Mean `metric` over seeds and problems of each (set, n, multiplier) at `budget`: columns
    ``set``, ``n``, ``multiplier``, ``score``."""
    rows = []
    for set_name, part in counts.groupby("set"):
        scores = problem_scores(part, ["n", "multiplier"], metric, rollouts=budget)
        if scores.shape[1]:
            rows.append(scores.mean().rename("score").reset_index().assign(set=set_name))
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=["set", "n", "multiplier", "score"])


def edge_runs(config: Config, set_name: str, counts: pd.DataFrame, metric: Metric, budget: float) -> list[Config]:
    """The runs one factor-2 step past an edge of a bracket: for each n whose best rate at
    `budget` (mean over seeds and every validation problem) is its largest or smallest tried,
    the rate twice or half that, on every seed. Empty where every best sits inside."""
    means = _mean_by_rate(counts[counts["set"] == set_name], metric, budget)
    batch_problems = config.sweep.batch_problems[0]
    runs = []
    for n, part in means.groupby("n"):
        tried = part.set_index("multiplier")["score"]
        best = float(tried.idxmax())
        step = 2.0 if best == tried.index.max() else 0.5 if best == tried.index.min() else None
        if step is not None and len(tried) > 1:
            runs += [grid_run(config, set_name, batch_problems, int(n), at_multiplier(config, best * step),
                              budget=selection_budget(config), seed=seed) for seed in config.lr_envelope.seeds]
    return runs


def halves(ids: Sequence[str]) -> pd.Series:
    """Each problem id's half (``A`` or ``B``): ids ordered by their SHA-256 and dealt
    alternately, so the halves differ in size by at most one and do not depend on the order
    or the naming of the ids."""
    ordered = sorted(set(ids), key=lambda i: hashlib.sha256(str(i).encode()).hexdigest())
    return pd.Series([HALVES[k % 2] for k in range(len(ordered))], index=pd.Index(ordered, name="id"), name="half")


@dataclass(frozen=True)
class Envelope:
    """Every n at its own best rate, at each budget, chosen on one half of the problems and
    read on the other (`lr_envelope`)."""

    scores: dict[float, pd.DataFrame]  # budget -> [seeds * problems, n]; rows (seed, id), columns n
    choices: pd.DataFrame  # rollouts, n, half (the half that chose), multiplier, lr: one row per choice
    curves: pd.DataFrame  # rollouts, n, multiplier, lr, score: every tried rate (mean over seeds and problems)


def lr_envelope(counts: pd.DataFrame, metric: Metric, budgets: Sequence[float]) -> Envelope:
    """The envelope of `counts` (one set's `rate_counts`): at each budget and n, the multiplier
    with the best mean `metric` on half A of the problems scores half B, and the one best on
    half B scores half A. Budgets where no run has an evaluation are left out; an n without
    a run at a budget has no column there."""
    scores, choices, curves = {}, [], []
    lr_of = counts.groupby(["n", "multiplier"])["lr"].first()
    for budget in budgets:
        matrix = problem_scores(counts, ["n", "multiplier"], metric, rollouts=budget)
        if not matrix.shape[1]:
            continue
        half = halves(matrix.index.get_level_values("id")).reindex(matrix.index.get_level_values("id")).to_numpy()
        columns = {}
        for n in sorted(matrix.columns.get_level_values("n").unique()):
            own = matrix[n]
            picked = {h: own[half == h].mean().idxmax() for h in HALVES}
            columns[n] = pd.Series(np.where(half == "A", own[picked["B"]], own[picked["A"]]), index=matrix.index)
            choices += [{"rollouts": budget, "n": n, "half": h, "multiplier": m, "lr": lr_of[(n, m)]}
                        for h, m in picked.items()]
            curves += [{"rollouts": budget, "n": n, "multiplier": m, "lr": lr_of[(n, m)], "score": value}
                       for m, value in own.mean().items()]
        scores[budget] = pd.DataFrame(columns).rename_axis(columns="n")
    return Envelope(scores, pd.DataFrame(choices, columns=["rollouts", "n", "half", "multiplier", "lr"]),
                    pd.DataFrame(curves, columns=["rollouts", "n", "multiplier", "lr", "score"]))


def preferred_rates(counts: pd.DataFrame, metric: Metric, budget: float, seeds: SeedVariance | None) -> pd.DataFrame:
    """Each n's best multiplier at `budget` on every problem (mean over seeds), the
    multipliers within noise of it, and whether the rule's own rate (1) is among them:
    columns ``n``, ``best``, ``lr``, ``within noise`` (a tuple), ``rule within noise``."""
    matrix = problem_scores(counts, ["n", "multiplier"], metric, rollouts=budget)
    lr_of = counts.groupby(["n", "multiplier"])["lr"].first()
    rows = []
    for n in sorted(matrix.columns.get_level_values("n").unique()):
        found = optimum(matrix[n], seeds)
        rows.append({"n": n, "best": found.best, "lr": lr_of[(n, found.best)], "within noise": found.tied,
                     "rule within noise": 1.0 in found.tied})
    return pd.DataFrame(rows, columns=["n", "best", "lr", "within noise", "rule within noise"])
