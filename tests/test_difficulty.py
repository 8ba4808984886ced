"""Profiling resumes from saved chunks and gives the first block the same random numbers."""

import dataclasses
from pathlib import Path

import torch

from isobook.config import SamplingConfig
from isobook.rollout import Rollouts
from isobook.sets.difficulty import profile_problems
from isobook.tasks import ChainArithmetic


class SeedEcho:
    """A fake engine: each completion answers with the draw of a seeded generator, so
    results depend on the seed each call runs under; it records the prompts of each call."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def generate(self, prompts: list[str], n: int, sampling: SamplingConfig, progress=None) -> Rollouts:
        self.calls.append(list(prompts))
        draws = torch.randint(0, 3, (len(prompts) * n,))
        texts = [f"#{int(d)}" for d in draws]
        mask = torch.ones(len(texts), 2)
        return Rollouts(n=n, prompt_ids=[[0]] * len(prompts),
                        completion_ids=torch.zeros(len(texts), 2, dtype=torch.long),
                        completion_mask=mask, logprobs=torch.zeros(len(texts), 2), texts=texts)


SAMPLING = SamplingConfig(batch_rollouts=16)  # 4 samples -> 4 prompts a call, 16 a chunk


def test_a_killed_profile_resumes_from_its_chunks(tmp_path: Path) -> None:
    task = ChainArithmetic(min_ops=1, max_ops=3, min_carries=0, max_carries=0)
    # the fake engine answers 0, 1 or 2
    problems = [dataclasses.replace(p, answer="1") for p in task.problems(40, seed=0)]
    first = SeedEcho()
    whole = profile_problems(first, task, problems, 4, SAMPLING, seed=3, work_dir=tmp_path, desc="t", block=40)
    chunks = sorted(tmp_path.glob("*.parquet"))
    assert len(chunks) == 3 and len(first.calls) == 3
    chunks[1].unlink()  # as if killed while the second chunk was being sampled
    second = SeedEcho()
    resumed = profile_problems(second, task, problems, 4, SAMPLING, seed=3, work_dir=tmp_path, desc="t", block=40)
    assert second.calls == [first.calls[1]]  # only the missing chunk is sampled again
    assert resumed.equals(whole)
    assert whole["id"].tolist() == [p.id for p in problems]  # back in the order given
    assert 0 < whole["correct"].sum() < 40 * 4


def test_the_first_block_sees_the_same_batches_and_seeds(tmp_path: Path) -> None:
    task = ChainArithmetic(min_ops=1, max_ops=6, min_carries=0, max_carries=1)
    problems = task.problems(48, seed=1)
    pool, sample = SeedEcho(), SeedEcho()
    full = profile_problems(pool, task, problems, 4, SAMPLING, seed=0, work_dir=tmp_path / "a", desc="t", block=16)
    first = profile_problems(sample, task, problems[:16], 4, SAMPLING, seed=0, work_dir=tmp_path / "b", desc="t",
                             block=16)
    assert sample.calls == pool.calls[: len(sample.calls)]
    assert first["correct"].tolist() == full["correct"].tolist()[:16]
    lengths = [len(p) for call in pool.calls[:1] for p in call]
    assert lengths == sorted(lengths)  # a block is sampled shortest prompts first
