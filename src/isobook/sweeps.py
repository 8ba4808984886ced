"""Sweeps: a grid of GRPO runs, executed on this machine or on a Ray cluster.

    from isobook.config import load_config
    from isobook.sweeps import run_sweep, sweep_points
    config = load_config("params/cpu.yaml", ["sweep.rollouts_per_problem=[4, 8, 16]"])
    outcomes = run_sweep(config)         # one row per run: its folder, status, reason
    points = sweep_points(config)        # every evaluation point of every finished run
    subset = [c for c in sweep_configs(config) if c.train.batch_rollouts == 128]
    run_configs(subset, config); run_points(subset, config.evaluation.k)   # part of a grid

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

import pandas as pd
from tqdm.auto import tqdm

from isobook.config import Config
from isobook.pipeline import prepare_sets
from isobook.run_store import read_metrics, read_status, run_folder
from isobook.runs import run_grpo

GRID_COLUMNS = ["set", "batch_problems", "n", "seed"]


def sweep_configs(config: Config) -> list[Config]:
    """One config per grid point with B_p * n <= max_batch, each run to the sweep's budget,
    with the sweep's threads per run and an absolute outputs folder (workers may start
    elsewhere)."""
    s = config.sweep
    system = replace(config.system, threads=s.threads_per_worker, outputs=str(Path(config.system.outputs).resolve()))
    configs = []
    for set_name, batch_problems, n, seed in itertools.product(s.sets, s.batch_problems, s.rollouts_per_problem,
                                                               s.seeds):
        if batch_problems * n > s.max_batch:
            continue
        train = replace(config.train, set=set_name, batch_problems=batch_problems, rollouts_per_problem=n,
                        seed=seed, budget=s.budget)
        configs.append(replace(config, train=train, system=system))
    return configs


def run_sweep(config: Config, show_progress: bool = True) -> pd.DataFrame:
    """Execute the sweep `config.sweep` describes; one row per run (grid columns, ``folder``,
    ``status``: finished / failed / error, ``reason``)."""
    return run_configs(sweep_configs(config), config, show_progress)


def run_configs(configs: list[Config], config: Config, show_progress: bool = True) -> pd.DataFrame:
    """Execute `configs` (e.g. a subset of `sweep_configs`) with `config.sweep`'s executor."""
    prepare_sets(config)
    execute = _run_locally if config.sweep.executor == "local" else _run_on_ray
    outcomes = execute(configs, config, show_progress) if configs else []
    rows = [{**_grid_row(c), "folder": str(run_folder(c)), **outcome} for c, outcome in zip(configs, outcomes)]
    return pd.DataFrame(rows, columns=[*GRID_COLUMNS, "folder", "status", "reason"])


def sweep_points(config: Config) -> pd.DataFrame:
    """Every evaluation point (row 0, the base model, included) of every finished run of
    the sweep: the grid columns, ``rollouts``, ``tokens``, ``step`` and the ``val_*`` scores."""
    return run_points(sweep_configs(config), config.evaluation.k)


def run_points(configs: list[Config], k: int) -> pd.DataFrame:
    """`sweep_points` for any list of run configs; runs not finished are left out."""
    frames = []
    for run in configs:
        folder = run_folder(run)
        status = read_status(folder)
        if not status or status["status"] != "finished":
            continue
        metrics = read_metrics(folder)
        evaluated = metrics.dropna(subset=[f"val_avg@{k}"])
        evaluated = evaluated[evaluated["rollouts"] <= run.train.budget]
        columns = ["step", "rollouts", "tokens", *[c for c in metrics.columns if c.startswith("val_")]]
        frames.append(evaluated[columns].assign(**_grid_row(run)))
    if not frames:
        return pd.DataFrame(columns=[*GRID_COLUMNS, "step", "rollouts", "tokens"])
    points = pd.concat(frames, ignore_index=True)
    return points[[*GRID_COLUMNS, *[c for c in points.columns if c not in GRID_COLUMNS]]]


def execute_run(config: Config) -> dict[str, str | None]:
    """One run, never raising: its status and, if it did not finish, why."""
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
