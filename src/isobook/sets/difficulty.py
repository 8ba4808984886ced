"""Difficulty profiling: how many of `samples` rollouts solve each problem under a model.

Problems are taken in blocks of `block` (in the order given); within a block they are
sorted by prompt length, so each engine call holds problems of one length and finishes
together. Work is done in chunks; every finished chunk is saved at once, so a killed
profile resumes where it stopped. Chunk ``c`` of block ``b`` is seeded from
``(seed, b, c)``: the same model, problems and seed give the same counts, resumed or not,
and two models profiled on the same first block draw the same random numbers there.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from isobook.config import SamplingConfig
from isobook.store.atomic import atomic_write_parquet
from isobook.tasks import Problem, Task, score_rollouts

if TYPE_CHECKING:  # a type only: importing the engines would load transformers
    from isobook.rollout import RolloutEngine


def profile_problems(engine: RolloutEngine, task: Task, problems: list[Problem], samples: int,
                     sampling: SamplingConfig, seed: int, work_dir: Path, desc: str,
                     block: int) -> pd.DataFrame:
    """Correct counts per problem, in the order given: columns ``id``, ``correct``,
    ``samples``, ``tokens`` (mean completion length in tokens over the samples)."""
    chunk = max(1, sampling.batch_rollouts // samples) * 4
    correct = np.zeros(len(problems), dtype=np.int64)
    tokens = np.zeros(len(problems), dtype=np.float64)
    with tqdm(total=len(problems) * samples, desc=desc, unit="rollout", unit_scale=True) as progress:
        for block_index, block_start in enumerate(range(0, len(problems), block)):
            members = range(block_start, min(block_start + block, len(problems)))
            ordered = sorted(members, key=lambda i: len(problems[i].prompt))
            for chunk_index, chunk_start in enumerate(range(0, len(ordered), chunk)):
                indices = ordered[chunk_start : chunk_start + chunk]
                part_file = work_dir / f"block-{block_index:04d}-chunk-{chunk_index:04d}.parquet"
                if part_file.is_file():
                    frame = pd.read_parquet(part_file)
                    progress.update(len(indices) * samples)
                else:
                    generator_seed = np.random.default_rng([seed, block_index, chunk_index]).integers(2**62)
                    torch.manual_seed(int(generator_seed))
                    frame = count_correct(engine, task, [problems[i] for i in indices], samples, sampling,
                                          progress=progress.update)
                    atomic_write_parquet(frame, part_file)
                correct[indices] = frame["correct"].to_numpy()
                tokens[indices] = frame["tokens"].to_numpy()
    return pd.DataFrame({"id": [p.id for p in problems], "correct": correct, "samples": samples,
                         "tokens": tokens})


def count_correct(engine: RolloutEngine, task: Task, part: list[Problem], samples: int,
                  sampling: SamplingConfig, progress: Callable[[int], None] | None = None) -> pd.DataFrame:
    """`samples` rollouts for each problem of `part`: columns ``id``, ``correct``, ``samples``,
    ``tokens`` (mean completion length). Draws from torch's global generator; `progress`
    hears of rollouts as the engine finishes them."""
    rollouts = engine.generate([p.prompt for p in part], samples, sampling, progress=progress)
    rewards = score_rollouts(task, part, rollouts.texts, samples)  # [problems, samples]
    lengths = rollouts.lengths.numpy().reshape(len(part), samples)
    return pd.DataFrame({"id": [p.id for p in part], "correct": (rewards > 0).sum(1),
                         "samples": samples, "tokens": lengths.mean(1)})
