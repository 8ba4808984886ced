"""Problem families and their verifiers, looked up by name (``task.family``)."""

from __future__ import annotations

from collections.abc import Callable

from isobook.config import TaskConfig
from isobook.tasks.base import Problem, Task, score_rollouts
from isobook.tasks.chain import ChainArithmetic
from isobook.tasks.math_file import MathFile

_REGISTRY: dict[str, Callable[[TaskConfig], Task]] = {
    "chain": lambda c: ChainArithmetic(
        min_ops=c.min_ops, max_ops=c.max_ops, min_carries=c.min_carries, max_carries=c.max_carries,
        max_value=c.max_value, slip_carry=c.slip_carry, slip_plain=c.slip_plain,
    ),
    "math-file": lambda c: MathFile(
        path=str(c.path), question_field=c.question_field, answer_field=c.answer_field,
        prompt_template=c.prompt_template,
    ),
}


def make_task(config: TaskConfig) -> Task:
    """The task `config.family` names, built from its fields."""
    if config.family not in _REGISTRY:
        raise ValueError(f"task.family: {config.family!r} is unknown; allowed: {', '.join(_REGISTRY)}")
    return _REGISTRY[config.family](config)


__all__ = ["ChainArithmetic", "MathFile", "Problem", "Task", "make_task", "score_rollouts"]
