"""Sweeps: a grid of GRPO runs, executed on this machine or on a Ray cluster.

    from isobook.config import load_config
    from isobook.sweeps import run_sweep, sweep_points
    config = load_config("params/cpu.yaml", ["sweep.rollouts_per_problem=[4, 8, 16]"])
    outcomes = run_sweep(config)         # one row per run: its folder, status, reason
    points = sweep_points(config)        # every evaluation point of every finished run
    subset = [c for c in sweep_configs(config) if c.train.batch_rollouts == 128]
    run_configs(subset, config); run_points(subset, config.evaluation.k)   # part of a grid
    ablation = [grid_run(config, "easy", 8, 16, ["recipe.regularisers=none"])]   # off the grid
    run_configs(ablation, config); run_history(ablation, [{"recipe": "none"}])  # every update

Every run goes through the run store (`runs.run_grpo`), so a rerun reuses finished runs
and a larger ``sweep.budget`` extends them. The base model and the sets are built once,
before any worker starts. A run that raises is recorded with its error and the others go
on.
"""

from __future__ import annotations

import itertools
import multiprocessing
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path
from typing import Sequence

import datasets
import pandas as pd
import transformers
from tqdm import tqdm

from isobook.config import Config, with_overrides
from isobook.pipeline import prepare_sets
from isobook.run_store import COUNT_COLUMNS, read_counts, read_metrics, read_status, run_folder
from isobook.runs import run_grpo, settled_status

GRID_COLUMNS = ["set", "batch_problems", "n", "seed"]


def sweep_configs(config: Config) -> list[Config]:
    """One config per grid point with B_p * n <= max_batch, each run to the sweep's budget,
    with the sweep's threads per run and an absolute outputs folder (workers may start
    elsewhere)."""
    s = config.sweep
    return [_sweep_run(config, set_name, batch_problems, n, seed, s.budget)
            for set_name, batch_problems, n, seed in itertools.product(s.sets, s.batch_problems,
                                                                       s.rollouts_per_problem, s.seeds)
            if batch_problems * n <= s.max_batch]


def grid_run(config: Config, set_name: str, batch_problems: int, n: int, changes: Sequence[str] = (),
             budget: int | None = None) -> Config:
    """One run like the sweep's, but anywhere: `changes` are ``section.field=value``
    overrides (e.g. a recipe variant), `budget` defaults to the sweep's, the seed is the
    sweep's first. Whatever coincides with a grid point is the same run in the store."""
    varied = with_overrides(config, changes)
    return _sweep_run(varied, set_name, batch_problems, n, config.sweep.seeds[0], budget or config.sweep.budget)


def _sweep_run(config: Config, set_name: str, batch_problems: int, n: int, seed: int, budget: int) -> Config:
    system = replace(config.system, threads=config.sweep.threads_per_worker,
                     outputs=str(Path(config.system.outputs).resolve()))
    train = replace(config.train, set=set_name, batch_problems=batch_problems, rollouts_per_problem=n,
                    seed=seed, budget=budget)
    return replace(config, train=train, system=system)


def run_sweep(config: Config, show_progress: bool = True) -> pd.DataFrame:
    """Execute the sweep `config.sweep` describes; one row per run (grid columns, ``folder``,
    ``status``: finished / failed / error, ``reason``)."""
    return run_configs(sweep_configs(config), config, show_progress)


def run_configs(configs: list[Config], config: Config, show_progress: bool = True) -> pd.DataFrame:
    """Execute `configs` (e.g. a subset of `sweep_configs`) with `config.sweep`'s executor.
    Configs naming the same run (one folder) execute once, to the largest budget asked."""
    prepare_sets(config)
    unique: dict[Path, Config] = {}
    for run in configs:
        kept = unique.get(run_folder(run))
        if kept is None or run.train.budget > kept.train.budget:
            unique[run_folder(run)] = run
    done, pending = {}, {}  # runs already settled answer from their status, without starting any worker
    for folder, run in unique.items():
        status = settled_status(run)
        if status:
            done[folder] = {"status": status["status"], "reason": status["reason"]}
        else:
            pending[folder] = run
    if pending:
        execute = _run_locally if config.sweep.executor == "local" else _run_on_ray
        done.update(zip(pending, execute(list(pending.values()), config, show_progress)))
    rows = [{**_grid_row(c), "folder": str(run_folder(c)), **done[run_folder(c)]} for c in configs]
    return pd.DataFrame(rows, columns=[*GRID_COLUMNS, "folder", "status", "reason"])


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
    if f"val_avg@{k}" in history:
        history = history.dropna(subset=[f"val_avg@{k}"])
    return history[keep].reset_index(drop=True)


def run_history(configs: list[Config], labels: Sequence[dict[str, object]] | None = None) -> pd.DataFrame:
    """Every logged row (row 0, the base model, and one per update, up to each run's
    budget) of every finished run in `configs`: the grid columns, then one column per key
    of `labels` (one dict per config, e.g. the recipe variant), then the metrics."""
    labels = labels or [{} for _ in configs]
    if len(labels) != len(configs):
        raise ValueError(f"labels: one per config ({len(configs)}), got {len(labels)}")
    frames = []
    for run, label in zip(configs, labels):
        folder = run_folder(run)
        status = read_status(folder)
        if not status or status["status"] != "finished":
            continue
        metrics = read_metrics(folder)
        frames.append(metrics[metrics["rollouts"] <= run.train.budget].assign(**_grid_row(run), **label))
    front = [*GRID_COLUMNS, *labels[0]] if labels else GRID_COLUMNS
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
    labels = labels or [{} for _ in configs]
    frames = []
    for run, label in zip(configs, labels):
        folder = run_folder(run)
        status = read_status(folder)
        if status and status["status"] == "finished":
            table = read_counts(folder, split)
            frames.append(table[table["rollouts"] <= run.train.budget].assign(**_grid_row(run), **label))
    columns = [*GRID_COLUMNS, *labels[0], *COUNT_COLUMNS] if labels else [*GRID_COLUMNS, *COUNT_COLUMNS]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


def run_train_pass(configs: list[Config]) -> pd.DataFrame:
    """`run_counts` of the training problems (the interference histograms), with
    ``pass_at_1`` = correct / samples."""
    table = run_counts(configs, "train_pass")
    return table.drop(columns="step").assign(pass_at_1=table["correct"] / table["samples"])


def execute_run(config: Config) -> dict[str, str | None]:
    """One run, never raising: its status and, if it did not finish, why. Meant for a
    worker process: it turns off the transformers and datasets progress bars there."""
    transformers.utils.logging.disable_progress_bar()
    datasets.disable_progress_bars()
    try:
        result = run_grpo(config, show_progress=False)
        return {"status": result.status, "reason": result.reason}
    except Exception as error:  # noqa: BLE001 - a sweep records any failure and goes on
        return {"status": "error", "reason": f"{type(error).__name__}: {error}"}


def _grid_row(config: Config) -> dict[str, object]:
    t = config.train
    return {"set": t.set, "batch_problems": t.batch_problems, "n": t.rollouts_per_problem, "seed": t.seed}


def _run_locally(configs: list[Config], config: Config, show_progress: bool) -> list[dict[str, str | None]]:
    """`sweep.workers` processes (spawned: torch and fork do not mix), each run in one."""
    outcomes: list[dict[str, str | None]] = [{}] * len(configs)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=config.sweep.workers, mp_context=context) as pool, \
            tqdm(total=len(configs), desc="sweep", unit="run", disable=not show_progress) as progress:
        futures = {pool.submit(execute_run, c): i for i, c in enumerate(configs)}
        for future in as_completed(futures):
            outcomes[futures[future]] = future.result()
            progress.update(1)
    return outcomes


def _run_on_ray(configs: list[Config], config: Config, show_progress: bool) -> list[dict[str, str | None]]:
    """Each run a Ray task asking for its threads as CPUs (and `gpus_per_run` GPUs)."""
    import ray

    if not ray.is_initialized():
        ray.init(address=config.sweep.ray_address, ignore_reinit_error=True, log_to_driver=False)
    task = ray.remote(num_cpus=config.sweep.threads_per_worker, num_gpus=config.sweep.gpus_per_run)(execute_run)
    pending = {task.remote(c): i for i, c in enumerate(configs)}
    outcomes: list[dict[str, str | None]] = [{}] * len(configs)
    with tqdm(total=len(configs), desc="sweep (ray)", unit="run", disable=not show_progress) as progress:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                outcomes[pending.pop(ref)] = ray.get(ref)
                progress.update(1)
    return outcomes
