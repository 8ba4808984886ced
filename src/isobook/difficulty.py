"""Difficulty profiling: how many of `samples` rollouts solve each problem under a model.

Work is done in chunks of problems; every finished chunk is saved at once, so a killed
profile resumes where it stopped. Sampling in chunk ``i`` is seeded from ``(seed, i)``:
the same model, problems and seed give the same counts, resumed or not.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from isobook.config import SamplingConfig
from isobook.rollout import RolloutEngine
from isobook.storage import atomic_write_parquet
from isobook.tasks import Problem, Task


def profile_problems(engine: RolloutEngine, task: Task, problems: list[Problem], samples: int,
                     sampling: SamplingConfig, seed: int, work_dir: Path, desc: str) -> pd.DataFrame:
    """Correct counts per problem: columns ``id``, ``correct``, ``samples``, ``tokens``.

    ``tokens`` is the mean completion length in tokens over the samples.
    """
    chunk = max(1, sampling.batch_rollouts // samples) * 4
    starts = range(0, len(problems), chunk)
    frames = []
    with tqdm(total=len(problems) * samples, desc=desc, unit="rollout", unit_scale=True) as progress:
        for index, start in enumerate(starts):
            part_file = work_dir / f"chunk-{index:05d}.parquet"
            part = problems[start : start + chunk]
            if part_file.is_file():
                frames.append(pd.read_parquet(part_file))
            else:
                torch.manual_seed(int(np.random.default_rng([seed, index]).integers(2**62)))
                rollouts = engine.generate([p.prompt for p in part], samples, sampling)
                rewards = np.array([task.reward(text, part[i // samples].answer)
                                    for i, text in enumerate(rollouts.texts)]).reshape(len(part), samples)
                lengths = rollouts.lengths.numpy().reshape(len(part), samples)
                frame = pd.DataFrame({"id": [p.id for p in part], "correct": (rewards > 0).sum(1),
                                      "samples": samples, "tokens": lengths.mean(1)})
                atomic_write_parquet(frame, part_file)
                frames.append(frame)
            progress.update(len(part) * samples)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["id", "correct", "samples", "tokens"])
