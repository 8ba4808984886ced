"""Real math problems from a local file (GSM8K- or MATH-style), verified with math-verify.

The file is read with `datasets` (``.jsonl``/``.json`` or ``.parquet``). The answer column
may hold a bare final answer (``72``, ``\\frac{1}{2}``), a GSM8K solution ending in
``#### 72``, or a MATH solution with a ``\\boxed{...}`` answer; the final answer is
extracted once when the file is read. A completion is correct when math-verify judges its
answer equivalent to the reference.

`datasets` and `math_verify` are imported when first used, so that importing
`isobook.tasks` (the trainer does) works where they are not installed: the chain task and
`benchmarks/gpu_check.py` need neither, and the lent GPU machine has no `datasets`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from isobook.config import ConfigError
from isobook.tasks.base import Problem
from isobook.tasks.prompts import chat_prompt, uses_chat_template

if TYPE_CHECKING:
    import datasets
    from transformers import PreTrainedTokenizerBase

_FORMATS = {".jsonl": "json", ".json": "json", ".parquet": "parquet"}
# A GSM8K answer line: "####", then something on the same line, then its newline.
_ANSWER_LINE = re.compile(r"####[^\S\n]*\S[^\n]*\n")


def answer_line_end(text: str) -> int | None:
    """The offset just past the newline that ends `text`'s first ``#### <answer>`` line,
    or None while there is none (``task.math_file.stop_after_answer``)."""
    match = _ANSWER_LINE.search(text)
    return match.end() if match else None


def reference_answer(raw: str) -> str:
    """The final answer inside a reference solution (``####``, last ``\\boxed{}``, or all)."""
    if "####" in raw:
        return raw.rsplit("####", 1)[1].strip().replace(",", "")
    boxed = _last_boxed(raw)
    return boxed if boxed is not None else raw.strip()


def _last_boxed(text: str) -> str | None:
    start = text.rfind("\\boxed{")
    if start < 0:
        return None
    depth, begin = 0, start + len("\\boxed{")
    for i in range(begin, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            if depth == 0:
                return text[begin:i]
            depth -= 1
    return None


def verify_math_answer(completion: str, answer: str) -> float:
    """1.0 when math-verify finds the completion's answer equivalent to `answer`."""
    from math_verify import parse, verify

    gold = parse(f"${answer}$")
    predicted = parse(completion)
    if not gold or not predicted:
        return 0.0
    return float(verify(gold, predicted))


@dataclass(frozen=True)
class MathFile:
    """Problems from `path`, each question written as the policy will read it: in
    `tokenizer`'s chat template followed by `instruction` where `chat_template` (auto, on,
    off; `isobook.tasks.prompts`) says so, else wrapped by `prompt_template` (``{question}``).
    `tokenizer` is needed to draw problems unless `chat_template` is off; scoring never
    needs it."""

    path: str
    question_field: str = "question"
    answer_field: str = "answer"
    prompt_template: str = "{question}"
    chat_template: str = "off"
    instruction: str = ""
    stop_after_answer: bool = False  # completions end at their answer line (the engines cut them: `completion_end`)
    tokenizer: PreTrainedTokenizerBase | None = field(default=None, compare=False, repr=False)
    name: str = "math-file"

    def load(self) -> datasets.Dataset:
        import datasets

        file = Path(self.path)
        if not file.is_file():
            raise ConfigError(f"task.math_file.path: no such file {file}; allowed: a local {'/'.join(_FORMATS)} file of problems")
        if file.suffix not in _FORMATS:
            raise ConfigError(f"task.math_file.path: {file.suffix!r} is not supported; allowed: {', '.join(_FORMATS)}")
        try:
            table = datasets.load_dataset(_FORMATS[file.suffix], data_files=str(file), split="train")
        except (ValueError, datasets.exceptions.DatasetGenerationError) as error:
            why = error.__cause__ or error  # datasets wraps the parser's own error
            raise ConfigError(f"task.math_file.path: {file} is not a readable {file.suffix} table "
                              f"({' '.join(str(why).split())}); allowed: one problem per row, e.g. "
                              f"{{\"{self.question_field}\": ..., \"{self.answer_field}\": ...}}") from error
        for column in (self.question_field, self.answer_field):
            if column not in table.column_names:
                raise ConfigError(
                    f"task.math_file.{'question' if column == self.question_field else 'answer'}_field: "
                    f"no column {column!r} in {file.name}; allowed: {', '.join(table.column_names)}"
                )
        return table

    def problems(self, count: int, seed: int) -> list[Problem]:
        try:
            self.prompt_template.format(question="")
        except (KeyError, IndexError, ValueError) as error:
            raise ConfigError(f"task.math_file.prompt_template: {self.prompt_template!r} does not format "
                              f"({type(error).__name__}: {error}); allowed: text with {{question}}, "
                              "other braces doubled ({{ }})") from error
        chat = uses_chat_template(self.chat_template, self.tokenizer)  # checked before the file is read
        table = self.load()
        order = np.random.default_rng(seed).permutation(len(table))[:count]
        rows = table.select(order.tolist())
        return [
            Problem(
                id=f"{Path(self.path).stem}-{int(index)}",
                prompt=(chat_prompt(self.tokenizer, row[self.question_field], self.instruction) if chat
                        else self.prompt_template.format(question=row[self.question_field])),
                answer=reference_answer(str(row[self.answer_field])),
                meta={"row": int(index)},
            )
            for index, row in zip(order, rows)
        ]

    def reward(self, completion: str, answer: str) -> float:
        return verify_math_answer(completion, answer)
