"""Problem families and their verifiers, looked up by name (``task.family``), each built from its subsection."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from isobook.config import TaskConfig
from isobook.tasks.base import Problem, Task, score_rollouts
from isobook.tasks.chain import ChainArithmetic
from isobook.tasks.math_file import MathFile, answer_line_end
from isobook.tasks.prompts import uses_chat_template

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

_REGISTRY: dict[str, Callable[[TaskConfig, PreTrainedTokenizerBase | None], Task]] = {
    "chain": lambda c, tokenizer: ChainArithmetic(**dataclasses.asdict(c.chain)),
    "math-file": lambda c, tokenizer: MathFile(**dataclasses.asdict(c.math_file), tokenizer=tokenizer),
}
# Families whose prompts may be chat-template text (they read task.math_file.chat_template).
_CHAT_FAMILIES = ("math-file",)


def make_task(config: TaskConfig, tokenizer: PreTrainedTokenizerBase | None = None) -> Task:
    """The task `config.family` names, built from its fields. `tokenizer`: the policy's,
    whose chat template math-file prompts are written in (``task.math_file.chat_template``); only
    drawing such problems needs it, scoring does not."""
    if config.family not in _REGISTRY:
        raise ValueError(f"task.family: {config.family!r} is unknown; allowed: {', '.join(_REGISTRY)}")
    return _REGISTRY[config.family](config, tokenizer)


def chat_prompts(config: TaskConfig, tokenizer: PreTrainedTokenizerBase) -> bool:
    """Whether the prompts `config`'s task writes for a model with `tokenizer` are chat-template
    text, which the rollout engines tokenize without adding special tokens (`isobook.tasks.prompts`)."""
    return config.family in _CHAT_FAMILIES and uses_chat_template(config.math_file.chat_template, tokenizer)


def completion_end(config: TaskConfig) -> Callable[[str], int | None] | None:
    """Where a completion of `config`'s task ends before its eos, as a function of its text
    (`isobook.rollout.base.cut_completions`), or None: at eos or the token limit only."""
    if config.family == "math-file" and config.math_file.stop_after_answer:
        return answer_line_end
    return None


__all__ = ["ChainArithmetic", "MathFile", "Problem", "Task", "chat_prompts", "completion_end", "make_task", "score_rollouts"]
