"""Bin edges (inclusive, as in the paper), splits, mixtures, the histogram and a set's composition
(dialects, misconceptions)."""

import pandas as pd
import pytest

from isobook.config import SetsConfig
from isobook.sets.rules import (
    ProblemSet,
    build_sets,
    composition,
    histogram,
    in_bin,
    misconception_counts,
    misconception_report,
    mix,
    split,
)


def profile_with_counts(counts: list[int], samples: int = 16) -> pd.DataFrame:
    return pd.DataFrame({"id": [f"p{i}" for i in range(len(counts))], "correct": counts, "samples": samples})


@pytest.mark.parametrize(
    ("low", "high", "members"),
    [
        ((0.0), 0.0625, [0, 1]),  # hard: 0 or 1 correct of 16; 0.0625 * 16 = 1 exactly, inclusive
        (0.3, 0.6, [5, 6, 7, 8, 9]),  # easy: 4.8 .. 9.6 correct
        (0.6, 0.9, [10, 11, 12, 13, 14]),  # veryeasy: 9.6 .. 14.4 correct
        (0.25, 0.5, [4, 5, 6, 7, 8]),  # both ends exact multiples of 1/16: both kept
    ],
)
def test_bins_are_inclusive_at_both_ends(low: float, high: float, members: list[int]) -> None:
    counts = pd.Series(range(17))
    assert counts[in_bin(counts, 16, low, high)].tolist() == members


def test_split_holds_out_validation_and_at_most_half() -> None:
    frame = profile_with_counts(list(range(10)) * 100)
    train, validation = split(frame, 300, seed=0)
    assert (len(train), len(validation)) == (700, 300)
    assert set(train["id"]).isdisjoint(validation["id"])
    small_train, small_validation = split(frame.iloc[:11], 300, seed=0)
    assert (len(small_train), len(small_validation)) == (6, 5)


def test_build_sets_and_mixtures_have_the_right_members_and_fractions() -> None:
    counts = [0] * 600 + [1] * 600 + [7] * 800 + [12] * 700 + [16] * 100
    frame = profile_with_counts(counts)
    frame["xhard_correct"] = pd.array([0] * 300 + [2] * 300 + [pd.NA] * 2200, dtype="Int64")
    sets = build_sets(frame, SetsConfig(validation_size=100), seed=0)
    assert {k: (len(v.train), len(v.validation)) for k, v in sets.items()} == {
        "easy": (700, 100), "hard": (1100, 100), "veryeasy": (600, 100), "xhard": (200, 100),
        "mix-dual": (1400, 100), "mix-tri": (2200, 100),
    }
    assert set(sets["hard"].train["correct"]) == {0, 1}
    tri = sets["mix-tri"].train["source"].value_counts().to_dict()
    assert tri == {"hard": 1100, "easy": 550, "veryeasy": 550}
    assert sets["mix-tri"].validation["source"].value_counts().to_dict() == {"hard": 50, "easy": 25, "veryeasy": 25}
    # no validation problem of a component is trained on by a mixture
    for name in ("easy", "hard", "veryeasy"):
        assert set(sets["mix-tri"].train["id"]).isdisjoint(sets[name].validation["id"])
        assert set(sets["mix-tri"].validation["id"]) <= set(sets[name].validation["id"]) | set(
            sets["mix-tri"].validation.query("source != @name")["id"])


def test_mix_is_limited_by_its_scarcest_component() -> None:
    sets = build_sets(profile_with_counts([0] * 200 + [7] * 1000), SetsConfig(validation_size=50), seed=1)
    dual = mix("d", {"hard": sets["hard"], "easy": sets["easy"]}, {"hard": 0.5, "easy": 0.5}, 50, seed=0)
    assert len(dual.train) == 300  # 150 hard train problems at 50% -> 300 in all
    assert dual.train["source"].value_counts().to_dict() == {"hard": 150, "easy": 150}


def test_histogram_counts_every_value_including_empty_ones() -> None:
    table = histogram(profile_with_counts([0, 0, 3, 16], samples=16))
    assert len(table) == 17
    assert table.set_index("correct")["problems"].loc[[0, 1, 3, 16]].tolist() == [2, 0, 1, 1]
    assert table["avg"].iloc[4] == 0.25


def test_a_sets_composition_counts_its_problems_per_dialect_over_both_splits() -> None:
    train = pd.DataFrame({"id": range(5), "dialect": ["standard", "ten-less", "standard", "standard", "ten-less"]})
    validation = pd.DataFrame({"id": range(5, 7), "dialect": ["ten-less", "ten-less"]})
    assert composition(ProblemSet("hard", train, validation)) == {"standard": 3, "ten-less": 4}
    assert composition(ProblemSet("hard", train.drop(columns="dialect"), validation.drop(columns="dialect"))) == {}


def test_a_sets_misconceptions_count_each_kind_a_problem_holds_once_and_the_problems_holding_none() -> None:
    train = pd.DataFrame({"id": range(4), "misconceived": ["7+5", "7+5;2-7", "", "2-7;2-7"]})
    validation = pd.DataFrame({"id": range(4, 6), "misconceived": ["", "3+9"]})
    assert misconception_counts(ProblemSet("hard", train, validation)) == {"2-7": 2, "3+9": 1, "7+5": 2, "none": 2}
    assert misconception_counts(ProblemSet("hard", train.drop(columns="misconceived"),
                                           validation.drop(columns="misconceived"))) == {}


def test_the_misconception_report_counts_every_sets_kinds() -> None:
    hard = pd.DataFrame({"id": range(4), "correct": [0, 0, 1, 1], "samples": 16, "misconceived": ["7+5", "7+5", "", "2-7"]})
    report = misconception_report({"hard": ProblemSet("hard", hard.iloc[:3], hard.iloc[3:])})
    assert report["sets"] == {"hard": {"2-7": 1, "7+5": 2, "none": 1}}
