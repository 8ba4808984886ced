"""Executing runs: on this machine (worker processes) or on a Ray cluster.

    from isobook.sweeps import run_configs, run_sweep
    outcomes = run_sweep(config)               # one row per run: its folder, status, reason
    run_configs(subset, config)                # any list of run configs

Every run goes through the run store (`runs.run_grpo`), so a rerun reuses finished runs
and a larger ``sweep.budget`` extends them. The base model and the sets are built once,
before any worker starts. A run that raises is recorded with its error and the others go
on.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from isobook.config import Config
from isobook.device import resolve_placement, usable_cpus
from isobook.store.locks import end_with_parent
from isobook.store.names import run_folder, sets_built
from isobook.store.runs import rollouts_left, settled_status
from isobook.sweeps.grid import GRID_COLUMNS, grid_row, sweep_configs


def run_sweep(config: Config, show_progress: bool = True) -> pd.DataFrame:
    """Execute the sweep `config.sweep` describes; one row per run (grid columns, ``folder``,
    ``status``: finished / failed / error, ``reason``)."""
    return run_configs(sweep_configs(config), config, show_progress)


def run_configs(configs: list[Config], config: Config, show_progress: bool = True) -> pd.DataFrame:
    """Execute `configs` (e.g. a subset of `sweep_configs`) with `config.sweep`'s executor.
    Configs naming the same run (one folder) execute once, to the largest budget asked.

    A chapter whose runs are all stored reads their status and never imports the training
    stack (datasets, the pipeline, the base model, the trainer): a second or more of every
    cached chapter's start."""
    unique: dict[Path, Config] = {}
    for run in configs:
        kept = unique.get(run_folder(run))
        if kept is None or run.train.budget > kept.train.budget:
            unique[run_folder(run)] = run
    if not sets_built(config) or not all(sets_built(run) for run in unique.values()):
        from isobook.sets.build import stage

        stage([config, *unique.values()])  # once, here, before any worker starts
    done, pending = {}, {}  # runs already settled answer from their status, without starting any worker
    for folder, run in unique.items():
        status = settled_status(run)
        if status:
            done[folder] = {"status": status["status"], "reason": status["reason"]}
        else:
            pending[folder] = run
    if pending:
        # Longest first, so that a sweep ends on short runs rather than one worker finishing a
        # long one alone; equal runs keep the grid's order.
        order = sorted(pending, key=lambda folder: -rollouts_left(pending[folder]))
        execute = _run_locally if config.sweep.executor == "local" else _run_on_ray
        done.update(zip(order, execute([pending[folder] for folder in order], config, show_progress)))
    rows = [{**grid_row(c), "folder": str(run_folder(c)), **done[run_folder(c)]} for c in configs]
    return pd.DataFrame(rows, columns=[*GRID_COLUMNS, "folder", "status", "reason"])


def execute_run(config: Config) -> dict[str, str | None]:
    """One run, never raising: its status and, if it did not finish, why. Meant for a
    worker process: it turns off the transformers and datasets progress bars there."""
    import datasets
    import transformers

    from isobook.grpo.run import run_grpo

    transformers.utils.logging.disable_progress_bar()
    datasets.disable_progress_bars()
    try:
        result = run_grpo(config, show_progress=False)
        return {"status": result.status, "reason": result.reason}
    except Exception as error:  # noqa: BLE001 - a sweep records any failure and goes on
        return {"status": "error", "reason": f"{type(error).__name__}: {error}"}


def local_workers(config: Config) -> int:
    """Runs at a time with ``sweep.executor: local``: `sweep.workers`, or by default as many
    as the CPUs this process may use hold at `sweep.threads_per_worker` each; one where runs
    go to a CUDA GPU (local workers would all share its first device: ``executor: ray``
    places one run per GPU)."""
    if config.sweep.workers is not None:
        return config.sweep.workers
    if resolve_placement(config.system).device.type == "cuda":
        return 1
    return max(1, usable_cpus() // config.sweep.threads_per_worker)


def _run_locally(configs: list[Config], config: Config, show_progress: bool) -> list[dict[str, str | None]]:
    """`local_workers` processes (spawned: torch and fork do not mix), each run in one.
    Workers end when this process dies, even by SIGKILL (`locks.end_with_parent`)."""
    outcomes: list[dict[str, str | None]] = [{}] * len(configs)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=local_workers(config), mp_context=context, initializer=end_with_parent,
                             initargs=(os.getpid(),)) as pool, \
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
