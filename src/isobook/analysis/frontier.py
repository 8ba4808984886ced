"""From reward-versus-compute curves to the compute-optimal frontier (paper Figures 5-6).

Input is a table of evaluation points, one row per (run, evaluation): the run's
hyperparameters (``batch_problems``, ``n``, ...), ``rollouts`` spent and a metric column.
The steps, each a pure function:

1. `record_breaking`: bucketise a run's metric and keep the first point of each new best
   bucket (noise cannot make a curve dip, and the running best is unchanged);
2. `fit_curves`: a monotone sigmoid of the metric versus log2 rollouts per curve, fitted
   on its record-breaking points and valid over the compute range the curve was measured on;
3. `frontier`: the upper envelope of the fitted curves over a compute grid, with the
   curve (e.g. the n) attaining it; each curve only competes inside the compute range it
   was measured on;
4. `fit_optimal`: a sigmoid of log2 n* versus log2 rollouts along the frontier
   (`measured_frontier` gives the same envelope from the raw running bests, as a check);
5. `pass_summary`: how per-problem pass@1 spreads over training (paper Figure 12);
6. `training_rewards`: the training reward beside the validation curve (the train-test
   gap, paper Figure 13).

`analyse_frontier` runs steps 2-4 for a chapter in one call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from isobook.analysis.fits import SigmoidFit, fit_sigmoid


def record_breaking(metric: Sequence[float], bucket: float) -> np.ndarray:
    """True at each point (in order of compute) whose bucket beats every earlier point's. # [points]"""
    if bucket <= 0:
        raise ValueError(f"bucket: must be > 0, got {bucket}")
    levels = np.floor(np.asarray(metric, dtype=float) / bucket + 1e-9)
    running_best = np.maximum.accumulate(levels)
    earlier_best = np.concatenate([[-np.inf], running_best[:-1]])
    return levels > earlier_best


def fit_curves(points: pd.DataFrame, by: Sequence[str], metric: str, bucket: float = 0.01) -> dict[tuple, SigmoidFit]:
    """A sigmoid fit per curve (the rows sharing the `by` columns), on its record-breaking
    points with rollouts > 0 (the base model's point has no log compute)."""
    fits = {}
    for key, curve in points.groupby(list(by), sort=True):
        curve = curve[curve["rollouts"] > 0].sort_values("rollouts")
        kept = curve[record_breaking(curve[metric].to_numpy(), bucket)]
        if len(kept) >= 2:
            fit = fit_sigmoid(np.log2(kept["rollouts"]), kept[metric])
            # The curve was measured over all its points, records or not.
            span = np.log2(curve["rollouts"])
            fits[key if isinstance(key, tuple) else (key,)] = replace(fit, x_min=float(span.min()),
                                                                     x_max=float(span.max()))
    return fits


def frontier(fits: dict[tuple, SigmoidFit], log2_rollouts: Sequence[float], by: Sequence[str]) -> pd.DataFrame:
    """The upper envelope of `fits` at each point of `log2_rollouts`: columns
    ``log2_rollouts``, ``rollouts``, ``reward`` and the `by` columns of the best curve.
    Points no curve covers are left out."""
    rows = []
    for x in log2_rollouts:
        covering = {key: float(fit(x)) for key, fit in fits.items() if fit.x_min - 1e-9 <= x <= fit.x_max + 1e-9}
        if not covering:
            continue
        key = max(covering, key=covering.get)
        rows.append({"log2_rollouts": float(x), "rollouts": 2.0 ** x, "reward": covering[key], **dict(zip(by, key))})
    return pd.DataFrame(rows, columns=["log2_rollouts", "rollouts", "reward", *by])


def measured_frontier(points: pd.DataFrame, log2_rollouts: Sequence[float], by: Sequence[str],
                      metric: str) -> pd.DataFrame:
    """The frontier without fits: at each compute, the best running-best `metric` any curve
    had reached by then (each curve counted only up to the compute it was run to); same
    columns as `frontier`. A check on the fitted frontier where curves lie close."""
    curves = []
    for key, curve in points.groupby(list(by), sort=True):
        curve = curve.sort_values("rollouts")
        curves.append((key if isinstance(key, tuple) else (key,), curve["rollouts"].to_numpy(),
                       np.maximum.accumulate(curve[metric].to_numpy())))
    rows = []
    for x in log2_rollouts:
        compute = 2.0 ** x
        reached = {key: float(best[rollouts <= compute * (1 + 1e-9)][-1]) for key, rollouts, best in curves
                   if rollouts[0] <= compute * (1 + 1e-9) <= rollouts[-1] * (1 + 1e-9)}
        if reached:
            key = max(reached, key=reached.get)
            rows.append({"log2_rollouts": float(x), "rollouts": compute, "reward": reached[key], **dict(zip(by, key))})
    return pd.DataFrame(rows, columns=["log2_rollouts", "rollouts", "reward", *by])


def fit_optimal(frontier_points: pd.DataFrame, column: str = "n") -> SigmoidFit:
    """A sigmoid of log2 of the frontier's `column` (n* by default) versus log2 rollouts."""
    return fit_sigmoid(frontier_points["log2_rollouts"], np.log2(frontier_points[column].astype(float)))


def pass_summary(train_pass: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """How training problems' pass@1 spreads at each measurement (paper Figure 12): per
    `by` group and ``rollouts``, the share of problems at pass@1 = 0 (``stuck``), at 1
    (``solved``), the mean and the standard deviation of pass@1 over problems.

    `train_pass`: one row per problem per measurement with ``correct`` and ``samples``."""
    table = train_pass.assign(pass_at_1=train_pass["correct"] / train_pass["samples"])
    grouped = table.groupby([*by, "rollouts"])["pass_at_1"]
    return pd.DataFrame({"stuck": grouped.apply(lambda p: float((p == 0).mean())),
                         "solved": grouped.apply(lambda p: float((p == 1).mean())),
                         "mean": grouped.mean(), "std": grouped.std(ddof=0)}).reset_index()


def training_rewards(history: pd.DataFrame, by: Sequence[str], metric: str) -> pd.DataFrame:
    """Mean training reward of the updates since the previous evaluation of each run, at
    each evaluation's ``rollouts``, so that it sits beside the validation `metric` (paper
    Figure 13). `history`: logged rows (`sweeps.run_history`) with ``step``, ``rollouts``,
    ``reward``, `metric` (NaN where no evaluation was made) and the `by` columns (and
    ``seed``, kept apart). Returns columns `by` (, ``seed``), ``rollouts``, ``reward``."""
    keys = [*by, "seed"] if "seed" in history and "seed" not in by else list(by)
    rows = []
    for key, run in history.groupby(keys, sort=False):
        evaluated = np.sort(run.loc[run[metric].notna() & (run["rollouts"] > 0), "rollouts"].unique())
        updates = run[(run["step"] > 0) & run["reward"].notna()]
        slot = np.searchsorted(evaluated, updates["rollouts"].to_numpy(), side="left")  # the next evaluation
        kept = slot < len(evaluated)  # updates after the last evaluation have no point to sit at
        means = updates[kept].groupby(evaluated[slot[kept]])["reward"].mean()
        values = key if isinstance(key, tuple) else (key,)
        rows += [{**dict(zip(keys, values)), "rollouts": float(at), "reward": float(mean)}
                 for at, mean in means.items()]
    return pd.DataFrame(rows, columns=[*keys, "rollouts", "reward"])


@dataclass(frozen=True)
class FrontierAnalysis:
    """Fits, their frontier and the n* sigmoid of one set of curves (`analyse_frontier`)."""

    fits: dict[tuple, SigmoidFit]  # one per curve, keyed by its `by` values
    fitted: pd.DataFrame  # the envelope of the fits (`frontier`)
    n_star: SigmoidFit | None  # log2 n* versus log2 rollouts along `fitted`
    why_no_fit: str | None  # when `n_star` is None: why, as a sentence for the reader


def analyse_frontier(points: pd.DataFrame, by: Sequence[str], metric: str, budget: float, step: float = 0.25,
                     key: str = "n") -> FrontierAnalysis:
    """Fit every curve, take their frontier on a grid from the first
    evaluated compute to `budget` (`step` in log2 rollouts), and fit the sigmoid of log2
    `key`* (n* by default) on the fitted frontier when it changes along it."""
    trained = points.loc[points["rollouts"] > 0, "rollouts"]
    if trained.empty:
        empty = pd.DataFrame(columns=["log2_rollouts", "rollouts", "reward", *by])
        return FrontierAnalysis({}, empty, None, "No run has finished an update yet: there is no frontier.")
    compute = np.arange(np.log2(trained.min()), np.log2(budget) + 1e-9, step)
    fits = fit_curves(points, by, metric)
    fitted = frontier(fits, compute, by)
    values = sorted(fitted[key].unique()) if not fitted.empty else []
    if len(values) == 1:
        return FrontierAnalysis(fits, fitted, None,
                                f"{key}* = {values[0]} at every budget from {fitted['rollouts'].min():,.0f} to "
                                f"{fitted['rollouts'].max():,.0f} rollouts: there is no rise to fit a sigmoid to.")
    if len(fitted) < 3:
        return FrontierAnalysis(fits, fitted, None,
                                "Fewer than three frontier points: too few to fit the sigmoid of n*.")
    return FrontierAnalysis(fits, fitted, fit_optimal(fitted, key), None)
