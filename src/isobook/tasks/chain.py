"""Chain arithmetic with a worked-out answer: isobook's default, fully synthetic task.

A problem is a left-to-right chain of single-digit additions and subtractions; the answer
is worked step by step and closed by the final value after ``#``::

    prompt:      7a+5b-3c+8=
    completion:  a+5=12;b-3=9;c+8=17#17

The prompt labels each operation with a step letter; each step of the answer names its
letter, restates the operation and writes the new running value, starting from the value
written just before (the first step from the prompt's first number). The letters make
finding "the next operation" a lookup by a unique key, which a small transformer learns
quickly; without them (``7+5-3+8=`` answered ``+5=12;-3=9;...``) a 0.37M-parameter model
trained here copied the wrong operation in 43% of second steps, so difficulty came from
failed lookups rather than from arithmetic slips. Restating the left value too
(``12-3=9``) would read better but makes every rollout a third longer, and sampling time
is the budget this whole book is about.

Why this task (see the book's "How isobook works" page):

* **Difficulty knob.** ``ops`` (the chain length) sets how many steps must all be right.
  Pass rates fall geometrically with the number of carry/borrow steps, so a pool drawn over
  a range of lengths spans the whole avg@16 axis, including "almost never but not quite
  never" problems that RL on hard sets needs.
* **A skill RL can sharpen.** The base model learns from a *noisy teacher*: on a step with
  a carry or a borrow the teacher mishandles the tens with probability ``slip_carry`` (it
  forgets the carry of an addition, or borrows twice in a subtraction), and on any other
  step it is one too low with probability ``slip_plain``; the chain then continues from the
  wrong value, as real reasoning traces do. Every slip leaves the value *lower*, so slips
  never cancel and an answer is right only when every step is (with "forgot the borrow",
  +10, half of all double slips cancelled, and 5-carry problems passed at 0.31 instead
  of 0.07 in a trial here). The base model inherits these slips as calibrated
  probabilities, so at temperature 0.6 each carry step slips at a known rate that GRPO
  can push down. A one-shot answer (``7+5-3+8=`` answered ``17``) gave RL nothing to
  surface in a trial here.
* **Difficulty belongs to the problem.** A model that has converged on the teacher's
  distribution slips at the teacher's rates, so per-problem pass rates are stable from one
  checkpoint to the next instead of being checkpoint noise.

* **Competing skills, on a knob.** With ``conflict`` > 0 that share of problems is written in
  a second dialect, marked by a leading ``<`` (``<7a+5b-3c+8=``), in which every carry or
  borrow step writes ten less (``a+5=2`` where the standard dialect writes 12). The
  teacher's slip in each dialect is the other's rule: in the standard dialect it drops the
  ten with probability ``slip_carry``, in the ten-less one it keeps it. Both dialects share
  the model's weights, so pushing carry steps toward one rule pushes the other dialect's
  problems toward failing. At ``conflict`` 0 (the default) no problem is in the second
  dialect and the task draws exactly the problems it drew before the knob existed.

* **Misconceptions, on a knob.** With ``misconceptions`` = K > 0, K of the 90 kinds of
  carry/borrow step (an operation and the units digit it meets: ``7+5``, adding 5 to a
  value ending in 7) are misconceived: on them the teacher slips with probability
  ``misconception_slip`` instead of ``slip_carry``. Above one half, the base model's most
  likely answer on those steps is wrong, so a problem is hard because of *which* steps it
  contains, and unlearning one misconception is a skill shared only by the problems that
  contain it (about 2.5 carry steps per problem: at K = 6, 18% of problems hold one).
  The K kinds are the first K of a fixed permutation (`MISCONCEPTION_SEED`), the same on
  every machine. The problems drawn do not depend on K (only the teacher does), and at
  K = 0 (the default) the task is the one before the knob existed.

The running value stays within ``[0, max_value]`` on the correct path (an operation that
would leave it is flipped), so every number is one or two digits and sequences stay short.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

import numpy as np

from isobook.tasks.base import Problem

_FINAL_ANSWER = re.compile(r"^[+-]?\d+$")
STEP_LETTERS = "abcdefghijklmnopqrstuvwxyz"  # one per operation: at most 26 operations
STANDARD, TEN_LESS = "standard", "ten-less"  # the dialects: carry and borrow steps as taught, or ten less
TEN_LESS_MARK = "<"  # first character of a ten-less problem's prompt
MISCONCEPTION_SEED = 260312151  # orders the carry-step kinds; `misconceptions` = K takes the first K


def parse_final_answer(completion: str) -> int | None:
    """The integer after the last ``#`` of a completion, or None when malformed.

    Surrounding whitespace is ignored; a sign and leading zeros are allowed (``+017`` is 17,
    ``-0`` is 0); anything else after the ``#`` (inner spaces, letters, a second number)
    makes the answer malformed.
    """
    if "#" not in completion:
        return None
    tail = completion.rsplit("#", 1)[1].strip()
    if not _FINAL_ANSWER.match(tail):
        return None
    return int(tail)


def verify_chain_answer(completion: str, answer: str) -> float:
    """1.0 when the completion's final answer equals the integer `answer`, else 0.0."""
    predicted = parse_final_answer(completion)
    return float(predicted is not None and predicted == int(answer))


@dataclass(frozen=True)
class Step:
    """One worked step ``letter op operand = result`` (from `left`) as the teacher wrote it."""

    letter: str
    left: int
    op: str
    operand: int
    result: int
    carry: bool  # the correct result needs a carry (+) or a borrow (-)

    def text(self) -> str:
        return f"{self.letter}{self.op}{self.operand}={self.result}"


def worked_answer(steps: list[Step]) -> str:
    """The completion that writes `steps`: ``a+5=12;b-3=9#9``."""
    return ";".join(step.text() for step in steps) + f"#{steps[-1].result}"


def result_spans(steps: list[Step]) -> list[tuple[int, int]]:
    """Where each step's result stands in `worked_answer(steps)`: character spans [start,
    end) that take in the delimiter after the result (``;``, ``#`` after the last step), so
    that the probability of a span is that of writing exactly this result (``12;``, where a
    slip writes ``2;``)."""
    spans, start = [], 0
    for step in steps:
        text = step.text()
        end = start + len(text)
        spans.append((end - len(str(step.result)), end + 1))
        start = end + 1
    return spans


@dataclass(frozen=True)
class CarryStep:
    """A carry/borrow step of a correct worked answer: its `kind` (`step_kind`), whether the
    teacher misconceives it, and its result's `span` in the answer (`result_spans`)."""

    kind: str
    misconceived: bool
    span: tuple[int, int]


def _exact(left: int, op: str, operand: int) -> int:
    return left + operand if op == "+" else left - operand


def _needs_carry(left: int, op: str, operand: int) -> bool:
    units = abs(left) % 10
    return units + operand >= 10 if op == "+" else units < operand


def step_kind(left: int, op: str, operand: int) -> str:
    """A step's kind as misconceptions are keyed: the units digit it meets, the operation
    and the operand (``7+5``: adding 5 to a value ending in 7)."""
    return f"{abs(left) % 10}{op}{operand}"


def carry_step_kinds() -> list[str]:
    """Every kind of carry/borrow step (`step_kind`), in a fixed order: 45 additions, 45 subtractions."""
    return [step_kind(units, op, operand) for op in "+-" for units in range(10) for operand in range(1, 10)
            if _needs_carry(units, op, operand)]


def misconceived_kinds(count: int) -> tuple[str, ...]:
    """The `count` misconceived carry-step kinds: the first of a fixed permutation of
    `carry_step_kinds` (`MISCONCEPTION_SEED`), so that K + 1 misconceptions add one to K's."""
    kinds = carry_step_kinds()
    order = np.random.default_rng(MISCONCEPTION_SEED).permutation(len(kinds))
    return tuple(kinds[i] for i in order[:count])


def _by_rule(dialect: str, left: int, op: str, operand: int) -> int:
    """A step's correct result in `dialect`: exact, or ten less on a carry/borrow step."""
    exact = _exact(left, op, operand)
    return exact - 10 if dialect == TEN_LESS and _needs_carry(left, op, operand) else exact


def dialect_of(prompt: str) -> str:
    """The dialect a chain prompt is written in (its first character marks a ten-less one)."""
    return TEN_LESS if prompt.startswith(TEN_LESS_MARK) else STANDARD


def tempered_slip(probability: float, temperature: float, alternatives: int = 1) -> float:
    """Probability of slipping when a calibrated model samples at `temperature`.

    The model puts `probability` on slips, spread evenly over `alternatives` wrong values,
    and ``1 - probability`` on the right one; sampling at temperature T raises each
    probability to ``1/T`` and renormalises.
    """
    if probability <= 0.0:
        return 0.0
    inverse = 1.0 / temperature
    wrong = alternatives * (probability / alternatives) ** inverse
    right = (1.0 - probability) ** inverse
    return wrong / (wrong + right)


@dataclass(frozen=True)
class ChainArithmetic:
    """The chain-arithmetic family; see the module docstring.

    Fields: a problem's number of carry/borrow steps is drawn uniformly from
    `min_carries`..`max_carries` (the difficulty: pass rates fall geometrically with it),
    then its chain length uniformly from `min_ops`..`max_ops` (at least the carries), and
    chains are drawn until one has exactly that many carries; `max_value` caps the running
    value; `slip_carry`/`slip_plain` are the teacher's per-step slip probabilities on
    carry/borrow steps and on the others; `conflict` is the share of problems written in
    the ten-less dialect (module docstring), each problem's dialect drawn first;
    `misconceptions` carry-step kinds (`misconceived_kinds`) take the slip probability
    `misconception_slip` instead of `slip_carry`.
    """

    min_ops: int = 2
    max_ops: int = 10
    min_carries: int = 1
    max_carries: int = 4
    max_value: int = 99
    slip_carry: float = 0.45
    slip_plain: float = 0.02
    conflict: float = 0.0
    misconceptions: int = 0
    misconception_slip: float = 0.75
    name: str = "chain"

    def __post_init__(self) -> None:
        if not 0 <= self.min_carries <= self.max_carries <= self.max_ops or self.min_ops > self.max_ops:
            raise ValueError(
                f"chain task: needs min_ops <= max_ops and 0 <= min_carries <= max_carries <= max_ops, got "
                f"ops {self.min_ops}..{self.max_ops}, carries {self.min_carries}..{self.max_carries}"
            )
        if not 0.0 <= self.conflict <= 1.0:
            raise ValueError(f"chain task: conflict is a share of problems in [0, 1], got {self.conflict}")
        if not 0 <= self.misconceptions <= len(carry_step_kinds()):
            raise ValueError(f"chain task: misconceptions is a number of carry-step kinds in [0, "
                             f"{len(carry_step_kinds())}], got {self.misconceptions}")
        if not 0.0 <= self.misconception_slip < 1.0:
            raise ValueError(f"chain task: misconception_slip is a probability in [0, 1), got {self.misconception_slip}")

    @functools.cached_property
    def misconceived(self) -> frozenset[str]:
        """The misconceived carry-step kinds (`misconceived_kinds`)."""
        return frozenset(misconceived_kinds(self.misconceptions))

    def carry_slip(self, left: int, op: str, operand: int) -> float:
        """The teacher's slip probability on a carry/borrow step from `left`."""
        return self.misconception_slip if step_kind(left, op, operand) in self.misconceived else self.slip_carry

    def problems(self, count: int, seed: int) -> list[Problem]:
        rng = np.random.default_rng(seed)
        return [self._problem(rng, f"chain-{seed}-{i}") for i in range(count)]

    def _problem(self, rng: np.random.Generator, problem_id: str) -> Problem:
        # No draw at conflict 0, so the problems are those drawn before the knob existed.
        dialect = TEN_LESS if self.conflict > 0 and rng.random() < self.conflict else STANDARD
        carries = int(rng.integers(self.min_carries, self.max_carries + 1))
        while True:
            ops = int(rng.integers(max(self.min_ops, carries), self.max_ops + 1))
            problem = self._draw(rng, problem_id, ops, dialect)
            if problem.meta["carries"] == carries:
                return problem

    def _draw(self, rng: np.random.Generator, problem_id: str, ops: int, dialect: str) -> Problem:
        value = int(rng.integers(1, 10))
        prompt = [TEN_LESS_MARK if dialect == TEN_LESS else "", str(value)]
        carries, kinds = 0, []
        for letter in STEP_LETTERS[:ops]:
            operand = int(rng.integers(1, 10))
            op = "+" if rng.random() < 0.5 else "-"
            if not 0 <= _by_rule(dialect, value, op, operand) <= self.max_value:
                op = "-" if op == "+" else "+"
            if _needs_carry(value, op, operand):
                carries += 1
                kinds.append(step_kind(value, op, operand))
            value = _by_rule(dialect, value, op, operand)
            prompt.append(f"{letter}{op}{operand}")
        meta = {"ops": ops, "carries": carries}
        if self.conflict > 0:  # a column only where the pool mixes dialects
            meta["dialect"] = dialect
        if self.misconceptions > 0:  # which misconceived steps the problem holds, in order ("" for none)
            meta["misconceived"] = ";".join(kind for kind in kinds if kind in self.misconceived)
        return Problem(id=problem_id, prompt="".join(prompt) + "=", answer=str(value), meta=meta)

    def reward(self, completion: str, answer: str) -> float:
        return verify_chain_answer(completion, answer)

    # -- the teacher ------------------------------------------------------------------

    def teacher_steps(self, prompt: str, rng: np.random.Generator | None) -> list[Step]:
        """Worked steps for `prompt`; with `rng`, slips are drawn, without it none. A slip on
        a carry/borrow step writes the other dialect's result (ten less in the standard
        dialect, the exact value in the ten-less one); on another step one too low."""
        dialect = dialect_of(prompt)
        value = int(re.search(r"\d+", prompt).group())
        steps = []
        for letter, op, digits in re.findall(r"([a-z])([+-])(\d+)", prompt):
            operand = int(digits)
            result = _by_rule(dialect, value, op, operand)
            carry = _needs_carry(value, op, operand)
            if rng is not None:
                if carry and rng.random() < self.carry_slip(value, op, operand):
                    result = _by_rule(STANDARD if dialect == TEN_LESS else TEN_LESS, value, op, operand)
                elif not carry and rng.random() < self.slip_plain:
                    result -= 1
            steps.append(Step(letter, value, op, operand, result, carry))
            value = result
        return steps

    def teacher_completion(self, prompt: str, rng: np.random.Generator | None) -> str:
        """The worked answer a (noisy, when `rng` is given) teacher writes for `prompt`."""
        return worked_answer(self.teacher_steps(prompt, rng))

    def carry_steps(self, prompt: str) -> list[CarryStep]:
        """The carry/borrow steps of `prompt`'s correct worked answer (`teacher_completion`
        without slips), each with its kind, whether it is misconceived, and where its result
        stands in that answer."""
        steps = self.teacher_steps(prompt, rng=None)
        kinds = [step_kind(step.left, step.op, step.operand) for step in steps]
        return [CarryStep(kind, kind in self.misconceived, span)
                for step, kind, span in zip(steps, kinds, result_spans(steps)) if step.carry]

    def calibrated_pass_rate(self, problem: Problem, temperature: float) -> float:
        """Pass rate of a model that matches the teacher exactly, sampled at `temperature`.

        The reference point for the trained base model: difficulty comes from slips only.
        """
        steps = self.teacher_steps(problem.prompt, rng=None)
        carry_ok = 1.0 - tempered_slip(self.slip_carry, temperature)
        misconceived_ok = 1.0 - tempered_slip(self.misconception_slip, temperature)
        plain_ok = 1.0 - tempered_slip(self.slip_plain, temperature)
        carries = sum(step.carry for step in steps)
        misconceived = sum(step.carry and step_kind(step.left, step.op, step.operand) in self.misconceived
                           for step in steps)
        return (math.pow(carry_ok, carries - misconceived) * math.pow(misconceived_ok, misconceived)
                * math.pow(plain_ok, len(steps) - carries))
