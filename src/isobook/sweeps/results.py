"""Reading a grid's results back from the run store: evaluation points, every logged
update, per-problem counts. Runs not finished are left out; each run is read up to the
budget its config asks for (a longer stored run serves a shorter request).

    from isobook.sweeps import run_counts, run_points, sweep_points
    points = sweep_points(config)                 # every evaluation point of the sweep's runs
    counts = run_counts(configs, "validation")    # per-problem counts behind the val_* scores
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pandas as pd

from isobook.config import Config
from isobook.store.names import run_folder
from isobook.store.runs import COUNT_COLUMNS, read_counts, read_metrics, read_status
from isobook.sweeps.grid import GRID_COLUMNS, grid_row, sweep_configs
from isobook.tasks.metrics import Metric


def sweep_points(config: Config) -> pd.DataFrame:
    """Every evaluation point (row 0, the base model, included) of every finished run of
    the sweep: the grid columns, ``rollouts``, ``tokens``, ``step`` and the ``val_*`` scores."""
    return run_points(sweep_configs(config), config.evaluation.k)


def run_points(configs: list[Config], k: int, labels: Sequence[dict[str, object]] | None = None) -> pd.DataFrame:
    """`sweep_points` for any list of run configs (with `labels` columns as in
    `run_history`); runs not finished are left out."""
    history = run_history(configs, labels)
    fixed = (*GRID_COLUMNS, *(labels or [{}])[0], "step", "rollouts", "tokens")
    keep = [c for c in history.columns if c in fixed or c.startswith("val_")]
    if Metric("avg", k) in history:
        history = history.dropna(subset=[Metric("avg", k)])
    return history[keep].reset_index(drop=True)


def run_history(configs: list[Config], labels: Sequence[dict[str, object]] | None = None) -> pd.DataFrame:
    """Every logged row (row 0, the base model, and one per update, up to each run's
    budget) of every finished run in `configs`: the grid columns, then one column per key
    of `labels` (one dict per config, e.g. the recipe variant), then the metrics."""
    frames = list(_finished_tables(configs, labels, read_metrics))
    front = [*GRID_COLUMNS, *(labels or [{}])[0]]
    if not frames:
        return pd.DataFrame(columns=[*front, "step", "rollouts", "tokens"])
    history = pd.concat(frames, ignore_index=True)
    return history[[*front, *[c for c in history.columns if c not in front]]]


def run_counts(configs: list[Config], split: str, labels: Sequence[dict[str, object]] | None = None) -> pd.DataFrame:
    """Per-problem correct counts of every finished run in `configs` up to its budget:
    `split` ``validation`` (every evaluation, the data behind ``val_*``) or ``train_pass``
    (the training problems at `evaluation.train_pass_rollouts`). Columns: the grid
    columns, the `labels` columns (as in `run_history`), then ``step``, ``rollouts``,
    ``id``, ``correct``, ``samples``."""
    frames = list(_finished_tables(configs, labels, lambda folder: read_counts(folder, split)))
    columns = [*GRID_COLUMNS, *(labels or [{}])[0], *COUNT_COLUMNS]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


def _finished_tables(configs: list[Config], labels: Sequence[dict[str, object]] | None,
                     read: Callable[[Path], pd.DataFrame]) -> Iterator[pd.DataFrame]:
    """`read` of each finished run's folder, its rows up to the run's budget, with the grid
    columns and the run's `labels` (one dict per config) assigned."""
    labels = labels or [{} for _ in configs]
    if len(labels) != len(configs):
        raise ValueError(f"labels: one per config ({len(configs)}), got {len(labels)}")
    for run, label in zip(configs, labels):
        folder = run_folder(run)
        status = read_status(folder)
        if status and status["status"] == "finished":
            table = read(folder)
            yield table[table["rollouts"] <= run.train.budget].assign(**grid_row(run), **label)


def run_train_pass(configs: list[Config], labels: Sequence[dict[str, object]] | None = None) -> pd.DataFrame:
    """`run_counts` of the training problems (the interference histograms), with
    ``pass_at_1`` = correct / samples (and the `labels` columns, as in `run_history`)."""
    table = run_counts(configs, "train_pass", labels)
    return table.drop(columns="step").assign(pass_at_1=table["correct"] / table["samples"])


def mean_over_seeds(points: pd.DataFrame) -> pd.DataFrame:
    """`sweep_points` (or `run_points`) averaged over seeds at each evaluation of each grid
    point and label: one curve per (set, B_p, n, labels), ``seeds`` the number averaged."""
    values = [c for c in points.columns if c == "tokens" or c.startswith("val_")]
    keys = [c for c in points.columns if c not in (*values, "seed", "step")]
    grouped = points.groupby(keys, as_index=False, sort=False)
    return grouped[values].mean().merge(grouped["seed"].nunique().rename(columns={"seed": "seeds"}), on=keys)
