"""Problem sets from a difficulty profile, by the paper's rules (Figure 2 and its set definitions).

A profile is a table with one row per pool problem: its text and answer, ``correct`` of
``samples`` rollouts under the base model, and (for problems that got them) ``xhard_correct``
of ``xhard_samples`` more. Bins are inclusive intervals of avg@k = correct / samples:
``easy`` [0.3, 0.6] and ``hard`` [0, 0.0625] at k = 16 keep 5..9 and 0..1 correct.
``xhard`` keeps problems with no correct answer in all ``xhard_samples`` rollouts.
Mixtures draw their train and validation splits from the sets' own splits, so no
validation problem of a set is ever trained on by a mixture.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from isobook.config import BINNED_SETS, SetsConfig

# Exact comparison of c/n with a decimal bound: 0.0625 * 16 is exactly 1, 0.3 * 16 is 4.8.
_TOLERANCE = 1e-9


@dataclass
class ProblemSet:
    """One named set: train and validation tables with the profile's columns."""

    name: str
    train: pd.DataFrame
    validation: pd.DataFrame


def in_bin(correct: pd.Series, samples: pd.Series | int, low: float, high: float) -> pd.Series:
    """True where avg = correct / samples lies in [low, high], both ends inclusive."""
    rate = correct / samples
    return (rate >= low - _TOLERANCE) & (rate <= high + _TOLERANCE)


def split(frame: pd.DataFrame, validation_size: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Shuffle, then hold out `validation_size` problems (at most half of a small set)."""
    shuffled = frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    held_out = min(validation_size, len(shuffled) // 2)
    return shuffled.iloc[held_out:].reset_index(drop=True), shuffled.iloc[:held_out].reset_index(drop=True)


def build_sets(profile: pd.DataFrame, config: SetsConfig, seed: int) -> dict[str, ProblemSet]:
    """Every binned set, ``xhard``, and every mixture of `config`, from one profile."""
    sets: dict[str, ProblemSet] = {}
    for index, name in enumerate(BINNED_SETS):
        low, high = getattr(config, name)
        members = profile[in_bin(profile["correct"], profile["samples"], low, high)]
        train, validation = split(members, config.validation_size, seed + index)
        sets[name] = ProblemSet(name, train, validation)
    if "xhard_correct" in profile:
        members = profile[profile["xhard_correct"] == 0]
        train, validation = split(members, config.validation_size, seed + len(BINNED_SETS))
        sets["xhard"] = ProblemSet("xhard", train, validation)
    for offset, (name, parts) in enumerate(sorted(config.mixtures.items())):
        available = {part: sets[part] for part in parts if part in sets}
        if len(available) == len(parts):
            sets[name] = mix(name, available, parts, config.validation_size, seed + 100 + offset)
    return sets


def mix(name: str, components: dict[str, ProblemSet], fractions: dict[str, float],
        validation_size: int, seed: int) -> ProblemSet:
    """A mixture as large as its components allow at the given fractions.

    Train size is ``min(len(train_c) / fraction_c)``; the validation split is drawn from
    the components' validation splits in the same proportions.
    """
    rng = np.random.default_rng(seed)

    def draw(split_name: str, limit: int | None) -> pd.DataFrame:
        tables = {part: getattr(components[part], split_name) for part in fractions}
        total = min(int(len(t) / fractions[p]) for p, t in tables.items() if fractions[p] > 0)
        if limit is not None:
            total = min(total, limit)
        pieces = []
        for part, fraction in fractions.items():
            count = int(round(total * fraction))
            table = tables[part]
            chosen = rng.choice(len(table), size=min(count, len(table)), replace=False)
            pieces.append(table.iloc[np.sort(chosen)].assign(source=part))
        merged = pd.concat(pieces, ignore_index=True)
        return merged.sample(frac=1.0, random_state=int(rng.integers(2**31))).reset_index(drop=True)

    return ProblemSet(name, draw("train", None), draw("validation", validation_size))


def histogram(profile: pd.DataFrame) -> pd.DataFrame:
    """Problems per avg@k value (the paper's Figure 2): columns ``correct``, ``avg``, ``problems``."""
    samples = int(profile["samples"].iloc[0])
    counts = profile["correct"].value_counts().reindex(range(samples + 1), fill_value=0)
    return pd.DataFrame({"correct": counts.index, "avg": counts.index / samples, "problems": counts.values})


def misconception_counts(problem_set: ProblemSet) -> dict[str, int]:
    """How many of the set's problems (train and validation) hold each misconceived step
    kind (the chain task's ``misconceived`` column, kinds joined by ``;``), a problem
    counted once per kind it holds, and ``none``: the problems holding none. Empty when
    the column is absent."""
    rows = pd.concat([problem_set.train, problem_set.validation])
    if "misconceived" not in rows:
        return {}
    held = rows["misconceived"].map(lambda kinds: sorted(set(kinds.split(";"))) if kinds else [])
    counts = pd.Series([kind for kinds in held for kind in kinds], dtype=str).value_counts().sort_index()
    return {**{str(kind): int(count) for kind, count in counts.items()}, "none": int((held.map(len) == 0).sum())}


def misconception_report(sets: dict[str, ProblemSet]) -> dict[str, Any]:
    """Problems per misconceived kind in every set (`misconception_counts`)."""
    return {"sets": {name: misconception_counts(s) for name, s in sets.items()}}


def composition(problem_set: ProblemSet, column: str = "dialect") -> dict[str, int]:
    """How many of the set's problems (train and validation) hold each value of `column`,
    e.g. the chain task's dialects, the skill each problem needs; empty when the column is absent."""
    rows = pd.concat([problem_set.train, problem_set.validation])
    if column not in rows:
        return {}
    return {str(value): int(count) for value, count in rows[column].value_counts().sort_index().items()}
