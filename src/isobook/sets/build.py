"""The ground floor end to end: base model -> difficulty profile -> problem sets -> summary.

Everything lands in ``<outputs>/sets/<sets-id>/`` (a folder named from the config):

* ``profile.parquet``: one row per pool problem with its correct count under the base model
  (and under the earlier checkpoint, and the extra xhard samples where drawn);
* ``<set>/``: each non-empty set as a Hugging Face ``DatasetDict`` (``train``/``validation``),
  loadable with ``datasets.load_from_disk``;
* ``summary.json``: counts per set, the avg@16 histogram, the share of ``hard`` problems
  with pass@16 > 0, the stability correlation, the seconds each stage took, and, where the
  pool mixes the chain task's dialects (``task.chain.conflict`` > 0), each set's problems per dialect;
  where the task has misconceptions (``task.chain.misconceptions`` > 0), each set's problems
  per misconceived step kind. (How hard a set is, from samples that did not choose it:
  `sets.fresh`.)

Finished folders are reused as they are; an interrupted build resumes from the chunks in
``<sets-id>.partial/``.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import pandas as pd

from isobook.config import Config, ConfigError
from isobook.model.loading import checkpoint_parameter_count
from isobook.model.pretrain import build_threads, earlier_checkpoint_path, ensure_base_model
from isobook.model.tokenizer import load_tokenizer
from isobook.rollout import RolloutEngine, inference_engine
from isobook.sets.difficulty import profile_problems
from isobook.sets.rules import ProblemSet, build_sets, composition, histogram, misconception_report
from isobook.store.atomic import StoreError, atomic_folder, read_stored
from isobook.store.names import POOL_SEED_OFFSET, sets_built, sets_folder
from isobook.store.runs import settled_status
from isobook.tasks import Problem, Task, make_task
from isobook.tasks.metrics import best_at_k


@dataclass
class SetsResult:
    """Where the sets are and what their summary says."""

    folder: Path
    summary: dict[str, Any]
    cached: bool


def prepare_sets(config: Config) -> SetsResult:
    """Build (or reuse) the base model and every problem set `config` describes: the
    orchestrators' step (CLI, sweeps, chapters), before any run starts."""
    if sets_built(config):
        return stored_sets(config)
    folder = sets_folder(config)
    with build_threads():  # the profile too: the sets must not depend on system.threads
        return _build_sets(config, folder)


def stage(runs: list[Config]) -> None:
    """Build the base model and sets of every run in `runs` that the store does not already
    answer, once per sets folder: what an orchestrator does before its runs start, since a
    run only reads them (`stored_sets`, `stored_base_model`)."""
    pending = [run for run in runs if not sets_built(run) and not settled_status(run)]
    for staged in {sets_folder(run): run for run in pending}.values():
        prepare_sets(staged)


def stored_sets(config: Config) -> SetsResult:
    """The sets `config` describes, as `prepare_sets` stored them; a `StoreError` naming the
    command that builds them when they are missing (a run never builds them itself)."""
    folder = sets_folder(config)
    if not sets_built(config):
        raise StoreError(f"{folder}: no problem sets for this config; allowed: sets built first, by "
                         "`isobook sets --params <the same params and overrides>` (or a sweep or chapter)")
    summary = read_stored(folder / "summary.json", lambda p: json.loads(p.read_text()),
                          f"delete {folder} to rebuild the sets")
    return SetsResult(folder, summary, cached=True)


def _build_sets(config: Config, folder: Path) -> SetsResult:
    """Train (or reuse) the base model, profile its pool and write the sets to `folder`."""
    seconds: dict[str, float] = {}
    began = time.perf_counter()
    model_path = ensure_base_model(config)
    seconds["base_model"] = time.perf_counter() - began

    # Prompts are written once, here, and stored with the sets; drawing them (which reads a
    # math file) comes before the model loads, so a bad task field is said at once.
    task = make_task(config.task, load_tokenizer(model_path))
    pool = task.problems(config.sets.pool_size, seed=config.system.seed + POOL_SEED_OFFSET)
    engine, _ = inference_engine(config, model_path)
    work = folder.with_name(folder.name + ".partial")
    profile = _pool_table(pool)
    s = config.sets

    began = time.perf_counter()
    counts = profile_problems(engine, task, pool, s.samples, config.sampling, config.system.seed,
                              work / "final", desc=f"profile avg@{s.samples}", block=_block(config))
    profile["correct"], profile["samples"], profile["tokens"] = counts["correct"], s.samples, counts["tokens"]
    seconds["profile"] = time.perf_counter() - began

    began = time.perf_counter()
    _xhard(config, engine, task, pool, profile, work)
    seconds["xhard"] = time.perf_counter() - began
    # The final model's engine is done: xhard runs before the stability check because vLLM
    # keeps one engine per process, and the earlier checkpoint's engine closes this one.
    del engine

    began = time.perf_counter()
    stability = _stability(config, task, pool, profile, work)
    seconds["stability"] = time.perf_counter() - began
    seconds["total"] = sum(seconds.values())

    sets = build_sets(profile, s, config.system.seed)
    summary = _summary(config, model_path, checkpoint_parameter_count(model_path), profile, sets, stability, seconds)
    with atomic_folder(folder) as staging:
        profile.to_parquet(staging / "profile.parquet", index=False)
        datasets.disable_progress_bars()
        try:
            for problem_set in sets.values():
                if len(problem_set.train):
                    _dataset_dict(problem_set).save_to_disk(str(staging / problem_set.name))
        finally:
            datasets.enable_progress_bars()
        (staging / "summary.json").write_text(json.dumps(summary, indent=2))
    if work.exists():
        shutil.rmtree(work)
    return SetsResult(folder, summary, cached=False)


def load_set(sets: SetsResult, name: str) -> datasets.DatasetDict:
    """The problem set `name` of `sets`, with its ``train`` and ``validation`` splits.

    A set whose difficulty bin caught too few pool problems is saved without a split, or not
    at all; asking to train on it is a `ConfigError` naming the sets that can be trained on."""
    sizes = sets.summary["sets"]
    counts = sizes.get(name, {"train": 0, "validation": 0})
    if not (counts["train"] and counts["validation"]):
        usable = [n for n, c in sizes.items() if c["train"] and c["validation"]]
        raise ConfigError(f"train.set: {name!r} came out with {counts['train']} training and {counts['validation']} "
                          f"validation problems in {sets.folder}; allowed: {', '.join(usable) or 'none'} "
                          "(a larger sets.pool_size fills more sets)")
    return read_stored(sets.folder / name, lambda p: datasets.load_from_disk(str(p)),
                       f"delete {sets.folder} to rebuild the sets")


def _block(config: Config) -> int:
    """Profiling block size: the stability sample is exactly the first block, so the final
    and the earlier model see the same random numbers on it."""
    return config.sets.stability_problems or config.sets.pool_size


def _pool_table(pool: list[Problem]) -> pd.DataFrame:
    table = pd.DataFrame({"id": [p.id for p in pool], "prompt": [p.prompt for p in pool],
                          "answer": [p.answer for p in pool]})
    for key in pool[0].meta if pool else []:
        table[key] = [p.meta[key] for p in pool]
    return table


def _stability(config: Config, task: Task, pool: list[Problem], profile: pd.DataFrame,
               work: Path) -> dict[str, Any]:
    """avg@k under the 'shortly before' checkpoint and its Pearson correlation with the final.

    The sample is the pool's first block, which both profiles split into the same batches
    with the same seeds (common random numbers), so the correlation measures how much the
    checkpoints differ rather than the binomial noise of 16 samples, which alone would cap
    it near 0.9 on this pool.
    """
    earlier = earlier_checkpoint_path(config)
    count = min(config.sets.stability_problems, len(pool))
    if config.model.source != "isobook" or count < 2 or not earlier.is_dir():
        return {"problems": 0}
    engine, _ = inference_engine(config, earlier)
    counts = profile_problems(engine, task, pool[:count], config.sets.samples, config.sampling,
                              config.system.seed, work / "earlier", desc="profile earlier checkpoint",
                              block=_block(config))
    profile["correct_earlier"] = pd.array([*counts["correct"], *[pd.NA] * (len(pool) - count)], dtype="Int64")
    final = profile["correct"].to_numpy()[:count]
    pearson = float(np.corrcoef(final, counts["correct"].to_numpy())[0, 1])
    return {"problems": count, "checkpoint": earlier.name, "pearson": round(pearson, 4)}


def _xhard(config: Config, engine: RolloutEngine, task: Task, pool: list[Problem], profile: pd.DataFrame,
           work: Path) -> None:
    """Extra samples for problems with no correct answer, up to `xhard_samples` in all."""
    s = config.sets
    extra = s.xhard_samples - s.samples
    candidates = np.flatnonzero(profile["correct"].to_numpy() == 0)[: s.xhard_candidates]
    if extra <= 0 or len(candidates) == 0:
        return
    counts = profile_problems(engine, task, [pool[i] for i in candidates], extra, config.sampling,
                              config.system.seed + 1, work / "xhard", desc="profile xhard",
                              block=len(candidates))
    column = pd.array([pd.NA] * len(pool), dtype="Int64")
    column[candidates] = counts["correct"].to_numpy()
    profile["xhard_correct"] = column
    profile["xhard_samples"] = s.xhard_samples


def _dataset_dict(problem_set: ProblemSet) -> datasets.DatasetDict:
    """The set as train/validation `datasets`, with fixed fingerprints so bytes are reproducible.

    An empty split is left out (`datasets` cannot load a saved split with no rows)."""
    splits = {}
    for split_name in ("train", "validation"):
        table = getattr(problem_set, split_name)
        if table.empty:
            continue
        arrow = datasets.Dataset.from_pandas(table, preserve_index=False).data
        splits[split_name] = datasets.Dataset(arrow, fingerprint=f"{problem_set.name}-{split_name}")
    return datasets.DatasetDict(splits)


def _summary(config: Config, model_path: Path, parameters: int, profile: pd.DataFrame,
             sets: dict[str, ProblemSet], stability: dict[str, Any], seconds: dict[str, float]) -> dict[str, Any]:
    hard = pd.concat([sets["hard"].train, sets["hard"].validation])
    rollouts = int(profile["samples"].sum()) + stability["problems"] * config.sets.samples
    if "xhard_correct" in profile:
        rollouts += int(profile["xhard_correct"].notna().sum()) * (config.sets.xhard_samples - config.sets.samples)
    return {
        "base_model": str(model_path),
        "parameters": parameters,
        "task": config.task.family,
        "pool_size": len(profile),
        "samples": config.sets.samples,
        "sets": {name: {"train": len(s.train), "validation": len(s.validation)} for name, s in sets.items()},
        "histogram": histogram(profile)[["correct", "problems"]].to_dict(orient="list"),
        "hard_pass_at_k_positive": (round(float(best_at_k(hard["correct"], config.sets.samples,
                                                          config.sets.samples).mean()), 4) if len(hard) else None),
        "mean_completion_tokens": round(float(profile["tokens"].mean()), 2),
        "stability": stability,
        **({"dialects": {name: composition(s) for name, s in sets.items()}} if "dialect" in profile else {}),
        **({"misconceptions": misconception_report(sets)} if "misconceived" in profile else {}),
        "rollouts": rollouts,
        "seconds": {k: round(v, 1) for k, v in seconds.items()},
    }
