"""Arithmetic word problems that isobook writes itself, as a math-file table (one JSON object a line).

A real checkpoint needs real-looking problems, and no data set can be downloaded here. Each
problem is a short story of one to three steps (buying, sharing, saving, ...) over small
whole numbers, with a worked solution in GSM8K's form (steps, then ``#### <answer>``); one
in four solutions states its answer as MATH does (``\\boxed{<answer>}``) instead, so both
answer styles go through `isobook.tasks.math_file.reference_answer`. The number of steps
sets the difficulty: a 135M instruct model solves many one-step problems and few three-step
ones, which is the spread the difficulty sets need.

    isobook word-problems                      # -> outputs/data/word-problems.jsonl, 2,000 problems
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from isobook.store.atomic import atomic_write_text

NAMES = ("Ava", "Ben", "Chloe", "Dev", "Emma", "Farid", "Grace", "Hugo", "Ines", "Jonah", "Kira", "Liam", "Maya",
         "Noor", "Omar", "Priya", "Quinn", "Rosa", "Sam", "Tara")
ITEMS = ("apples", "marbles", "stickers", "pencils", "cookies", "books", "shells", "cards", "stamps", "beads")

# Each story: (steps, writer). A writer takes a random generator, a name and an item and
# returns (question, worked steps, answer).
Story = Callable[[np.random.Generator, str, str], tuple[str, list[str], int]]


def _buys(rng: np.random.Generator, name: str, item: str) -> tuple[str, list[str], int]:
    have, more = int(rng.integers(2, 40)), int(rng.integers(2, 40))
    return (f"{name} has {have} {item} and gets {more} more. How many {item} does {name} have now?",
            [f"{name} has {have} + {more} = {have + more} {item}."], have + more)


def _gives(rng: np.random.Generator, name: str, item: str) -> tuple[str, list[str], int]:
    gone, left = int(rng.integers(2, 30)), int(rng.integers(1, 30))
    have = gone + left
    return (f"{name} has {have} {item} and gives {gone} of them away. How many {item} are left?",
            [f"{have} - {gone} = {left} {item} are left."], left)


def _boxes(rng: np.random.Generator, name: str, item: str) -> tuple[str, list[str], int]:
    boxes, each = int(rng.integers(2, 10)), int(rng.integers(2, 12))
    return (f"{name} buys {boxes} boxes with {each} {item} in each box. How many {item} is that?",
            [f"{boxes} x {each} = {boxes * each} {item}."], boxes * each)


def _boxes_then_gives(rng: np.random.Generator, name: str, item: str) -> tuple[str, list[str], int]:
    boxes, each = int(rng.integers(2, 10)), int(rng.integers(2, 12))
    total = boxes * each
    gone = int(rng.integers(1, total))
    return ((f"{name} buys {boxes} boxes of {each} {item} and then gives {gone} {item} to a friend. "
             f"How many {item} does {name} keep?"),
            [f"{name} buys {boxes} x {each} = {total} {item}.", f"{name} keeps {total} - {gone} = {total - gone}."],
            total - gone)


def _shares(rng: np.random.Generator, name: str, item: str) -> tuple[str, list[str], int]:
    friends, each = int(rng.integers(2, 7)), int(rng.integers(2, 10))
    total = friends * each
    extra = int(rng.integers(1, total))
    return ((f"{name} has {total - extra} {item}, finds {extra} more, and shares them equally among {friends} "
             f"friends. How many {item} does each friend get?"),
            [f"{name} has {total - extra} + {extra} = {total} {item}.", f"Each friend gets {total} / {friends} = {each}."],
            each)


def _saves(rng: np.random.Generator, name: str, item: str) -> tuple[str, list[str], int]:
    weeks, price, count = int(rng.integers(2, 9)), int(rng.integers(2, 8)), int(rng.integers(1, 4))
    spent = price * count
    per_week = int(rng.integers(-(-spent // weeks), -(-spent // weeks) + 12))  # saves at least what it spends
    saved = weeks * per_week
    return ((f"{name} saves {per_week} dollars a week for {weeks} weeks, then buys {count} {item} at {price} "
             f"dollars each. How many dollars does {name} have left?"),
            [f"{name} saves {weeks} x {per_week} = {saved} dollars.", f"The {item} cost {count} x {price} = {spent} dollars.",
             f"{name} has {saved} - {spent} = {saved - spent} dollars left."], saved - spent)


STORIES: dict[int, tuple[Story, ...]] = {1: (_buys, _gives, _boxes), 2: (_boxes_then_gives, _shares), 3: (_saves,)}


def word_problems(count: int, seed: int) -> list[dict[str, object]]:
    """`count` problems, a third of each step count, as rows ``{"question", "answer", "steps"}``;
    the same rows for the same `seed`."""
    rng = np.random.default_rng(seed)
    rows = []
    for index in range(count):
        steps = 1 + index % 3
        stories = STORIES[steps]
        story = stories[int(rng.integers(len(stories)))]
        question, work, answer = story(rng, NAMES[int(rng.integers(len(NAMES)))], ITEMS[int(rng.integers(len(ITEMS)))])
        closing = f"The answer is \\boxed{{{answer}}}." if index % 4 == 3 else f"#### {answer}"
        rows.append({"question": question, "answer": "\n".join([*work, closing]), "steps": steps})
    return rows


def write_word_problems(path: Path, count: int = 2000, seed: int = 0) -> bool:
    """Write `count` problems to `path` (JSON lines) unless it holds them already; whether it wrote."""
    text = "".join(json.dumps(row) + "\n" for row in word_problems(count, seed))
    if path.is_file() and path.read_text() == text:
        return False
    atomic_write_text(text, path)
    return True
