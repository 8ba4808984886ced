"""What every problem family provides: problems with reference answers and a verifier."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np


@dataclass(frozen=True)
class Problem:
    """One verifiable problem.

    `prompt` is exactly what the policy sees; `answer` is the reference final answer as
    text; `meta` holds family-specific facts (chain length, carries, source row, ...).
    """

    id: str
    prompt: str
    answer: str
    meta: dict[str, Any] = field(default_factory=dict)


class Task(Protocol):
    """A problem family: a source of problems and the verifier that scores completions."""

    name: str

    def problems(self, count: int, seed: int) -> list[Problem]:
        """`count` problems, the same ones for the same `seed`."""
        ...

    def reward(self, completion: str, answer: str) -> float:
        """1.0 when the completion's final answer equals `answer`, else 0.0."""
        ...


def score_rollouts(task: Task, problems: list[Problem], texts: list[str], n: int) -> np.ndarray:
    """The reward of every rollout, `n` consecutive `texts` per problem (the engines'
    order), for training and profiling alike. # [problems, n]"""
    if len(texts) != len(problems) * n:
        raise ValueError(f"texts: expected {len(problems)} problems x {n} rollouts, got {len(texts)}")
    return np.array([task.reward(text, problems[i // n].answer) for i, text in enumerate(texts)],
                    dtype=np.float64).reshape(len(problems), n)
