"""How hard a built set is for its base model, from samples that did not choose it.

A set is binned from the profile's own samples (avg@16 in [0, 0.0625] for hard), so the
same samples, read back on the set, are biased towards its bin: a hard problem is in the
set partly because its 16 draws happened to fail. Fresh draws from another seed, and the
greedy answer (temperature 0), say how hard the set is.

    greedy = greedy_pass(config)                       # per pool problem: 1 if the greedy answer is right
    counts = fresh_counts(config, "hard", samples=16)  # the hard set, 16 new samples per problem

Both are kept in ``<sets folder>/fresh/`` and reused; an interrupted draw resumes from its
finished chunks (`difficulty.profile_problems`).
"""

from __future__ import annotations

import shutil
from dataclasses import replace

import pandas as pd

from isobook.config import Config
from isobook.model.pretrain import build_threads, stored_base_model
from isobook.model.tokenizer import load_tokenizer
from isobook.rollout import inference_engine
from isobook.sets.build import load_set, prepare_sets
from isobook.sets.difficulty import profile_problems
from isobook.store.atomic import cached_parquet, read_stored
from isobook.store.names import sets_folder
from isobook.tasks import Problem, make_task

GREEDY_SEED_OFFSET = 2  # after the profile (0) and xhard (1) draws (temperature 0 draws nothing)
FRESH_SEED_OFFSET = 3


def greedy_pass(config: Config) -> pd.Series:
    """1 where the base model's greedy answer (temperature 0) to a pool problem is right,
    else 0, indexed by problem ``id``: every pool problem, so any set (mixtures too) reads
    its rate by its ids. # [pool problems]"""
    folder = prepare_sets(config).folder
    pool = read_stored(folder / "profile.parquet", pd.read_parquet, f"delete {folder} to rebuild the sets")
    counts = _counts(config, pool, 1, 0.0, config.system.seed + GREEDY_SEED_OFFSET, "greedy-pool")
    return counts.set_index("id")["correct"].rename("greedy")


def greedy_by_set(config: Config) -> pd.DataFrame:
    """Every set with problems: its ``train`` and ``validation`` sizes and the base
    model's greedy pass rate over both splits (`greedy_pass`). # [sets, 4]"""
    sets, greedy = prepare_sets(config), greedy_pass(config)
    rows = []
    for name, sizes in sets.summary["sets"].items():
        if not (sizes["train"] and sizes["validation"]):
            continue
        splits = load_set(sets, name)
        ids = [*splits["train"]["id"], *splits["validation"]["id"]]
        rows.append({"set": name, "train": sizes["train"], "validation": sizes["validation"],
                     "greedy pass rate": float(greedy.loc[ids].mean())})
    return pd.DataFrame(rows, columns=["set", "train", "validation", "greedy pass rate"])


def fresh_counts(config: Config, set_name: str, samples: int) -> pd.DataFrame:
    """`samples` new rollouts at the sampling temperature for every problem of `set_name`
    (train and validation): columns ``id``, ``split``, ``correct``, ``samples``."""
    splits = load_set(prepare_sets(config), set_name)
    rows = pd.concat([splits[split].to_pandas().assign(split=split) for split in ("train", "validation")],
                     ignore_index=True)
    counts = _counts(config, rows, samples, config.sampling.temperature,
                     config.system.seed + FRESH_SEED_OFFSET, f"{set_name}-{samples}")
    return counts.assign(split=rows["split"].to_numpy())[["id", "split", "correct", "samples"]]


def _counts(config: Config, rows: pd.DataFrame, samples: int, temperature: float, seed: int,
            name: str) -> pd.DataFrame:
    """Correct counts of `samples` draws at `temperature` for each problem of `rows` (its
    ``id``, ``prompt``, ``answer``), kept as ``fresh/<name>-t<temperature>.parquet``."""
    folder = sets_folder(config) / "fresh"
    target = folder / f"{name}-t{temperature:g}.parquet"

    def draw() -> pd.DataFrame:
        model = stored_base_model(config)
        task = make_task(config.task, load_tokenizer(model))
        problems = [Problem(row.id, row.prompt, row.answer) for row in rows.itertuples()]
        work = folder / f"{target.stem}.partial"
        with build_threads():  # as the profile: the counts must not depend on system.threads
            engine, _ = inference_engine(config, model)
            counts = profile_problems(engine, task, problems, samples, replace(config.sampling, temperature=temperature),
                                      seed, work, desc=f"base model on {name}", block=len(problems))
        shutil.rmtree(work, ignore_errors=True)
        return counts[["id", "correct", "samples"]]

    return cached_parquet(target, draw)
