"""How hard a set is, from samples that did not choose it: the greedy answer to every pool
problem and fresh draws on a set, kept in the sets folder and reused."""

from pathlib import Path

import pandas as pd

from conftest import smoke_config
from isobook.sets.build import load_set, prepare_sets
from isobook.sets.fresh import fresh_counts, greedy_by_set, greedy_pass
from isobook.store.names import sets_folder


def test_the_greedy_answer_is_scored_once_for_every_pool_problem_and_read_by_each_set(outputs_with_sets: Path) -> None:
    config = smoke_config(outputs_with_sets)
    greedy = greedy_pass(config)
    profile = pd.read_parquet(sets_folder(config) / "profile.parquet")
    assert list(greedy.index) == list(profile["id"]) and set(greedy.unique()) <= {0, 1}
    stored = sets_folder(config) / "fresh" / "greedy-pool-t0.parquet"
    assert stored.is_file()
    stamp = stored.stat().st_mtime_ns
    assert greedy_pass(config).equals(greedy) and stored.stat().st_mtime_ns == stamp  # read back, not drawn again
    table = greedy_by_set(config)
    sets = prepare_sets(config)
    for row in table.to_dict("records"):
        splits = load_set(sets, row["set"])
        ids = [*splits["train"]["id"], *splits["validation"]["id"]]
        assert (row["train"], row["validation"]) == (len(splits["train"]), len(splits["validation"]))
        assert row["greedy pass rate"] == greedy.loc[ids].mean()
    assert "hard" in set(table["set"])


def test_fresh_draws_cover_every_problem_of_a_set_with_their_own_seed(outputs_with_sets: Path) -> None:
    config = smoke_config(outputs_with_sets)
    fresh = fresh_counts(config, "hard", 4)
    splits = load_set(prepare_sets(config), "hard")
    assert list(fresh["id"]) == [*splits["train"]["id"], *splits["validation"]["id"]]
    assert set(fresh["split"]) == {"train", "validation"} and (fresh["samples"] == 4).all()
    assert fresh["correct"].between(0, 4).all()
    assert fresh_counts(config, "hard", 4).equals(fresh)  # the same draws, read from the sets folder
    assert (sets_folder(config) / "fresh" / f"hard-4-t{config.sampling.temperature:g}.parquet").is_file()
