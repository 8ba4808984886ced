"""`isobook compare`: two built books' findings (or a build and the README's), row by row; a
rebuild on shifted seeds and the grid every chapter's seed variance is measured on."""

import json
from pathlib import Path

import pytest

from isobook.analysis.bandit import bandit_curves_path, bandit_seed
from isobook.analysis.envelope import confirmatory_runs
from isobook.analysis.findings.statistics import Interval
from isobook.analysis.findings.verdicts import Finding, Verdict
from isobook.book.compare import compare_builds, summary
from isobook.book.pages import FindingsTable
from isobook.book.seeds import reference_grid
from isobook.cli import main
from isobook.config import load_config
from isobook.sweeps import grid_run, sweep_configs

ROOT = Path(__file__).resolve().parents[1]


def built_book(folder: Path, findings: list[Finding]) -> Path:
    """A book folder whose one executed chapter shows `findings` (as `FindingsTable` writes them)."""
    (folder / "notebooks").mkdir(parents=True)
    table = FindingsTable(findings, "02_n_versus_m", "test scale")
    output = {"output_type": "display_data", "data": {"text/plain": "table"}, "metadata": table.metadata()}
    notebook = {"cells": [{"cell_type": "code", "source": "", "outputs": [output]}], "metadata": {}, "nbformat": 4,
                "nbformat_minor": 5}
    (folder / "notebooks" / "02_n_versus_m.ipynb").write_text(json.dumps(notebook))
    return folder


def finding(claim: str, verdict: Verdict, estimate: float, half: float, family: str = "llm",
            measured: str = "-") -> Finding:
    return Finding(claim, measured, verdict, "-", Interval(estimate, estimate - half, estimate + half), family=family)


def test_two_builds_compare_by_verdict_and_by_their_deciding_contrasts(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture) -> None:
    first = built_book(tmp_path / "a", [finding("grows", Verdict.REPRODUCED, 0.05, 0.03),
                                        finding("peaks", Verdict.UNRESOLVED, 0.00, 0.02),
                                        finding("flips", Verdict.REPRODUCED, 0.04, 0.01),
                                        finding("bandit grows", Verdict.REPRODUCED, 0.1, 0.01, "bandit", "n* 2, 16"),
                                        finding("bandit wins", Verdict.REPRODUCED, 0.1, 0.01, "bandit", "n* 2, 2")])
    second = built_book(tmp_path / "b", [finding("grows", Verdict.UNRESOLVED, 0.02, 0.03),  # 0.03 apart < 0.042
                                         finding("peaks", Verdict.UNRESOLVED, 0.01, 0.02),
                                         finding("flips", Verdict.NOT_REPRODUCED, -0.03, 0.01),  # 0.07 > 0.014
                                         finding("bandit grows", Verdict.REPRODUCED, 0.1, 0.01, "bandit",
                                                 "n* 2, 16"),  # the same draws: not replicated
                                         finding("bandit wins", Verdict.UNRESOLVED, 0.1, 0.01, "bandit", "n* 2, 4")])
    comparison = compare_builds(first, second).set_index("claim")
    assert comparison["agree"].to_dict() == {"grows": False, "peaks": True, "flips": False, "bandit grows": True,
                                             "bandit wins": False}
    assert comparison["consistent"].to_dict() == {"grows": True, "peaks": True, "flips": False, "bandit grows": True,
                                                  "bandit wins": True}
    assert comparison["opposite"].to_dict() == {"grows": False, "peaks": False, "flips": True, "bandit grows": False,
                                                "bandit wins": False}
    assert comparison["replicated"].to_dict() == {"grows": True, "peaks": True, "flips": True, "bandit grows": False,
                                                  "bandit wins": True}
    lines = summary(comparison.reset_index())
    assert lines == ("LLM rows: 1 of 3 verdicts agree; deciding contrasts consistent on 2 of 3 (67%); "
                     "1 resolved in opposite directions\n"
                     "bandit rows: 0 of 1 verdicts agree; deciding contrasts consistent on 1 of 1 (100%); "
                     "0 resolved in opposite directions; 1 not replicated (the same draws in both builds)")
    assert main(["compare", str(first), str(second)]) == 0
    assert capsys.readouterr().out.strip().endswith(lines)


def test_a_build_compares_with_the_readmes_snapshot_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """`isobook compare outputs/book book/findings.json`: the committed snapshot holds
    {"book": rows}; its rows are the ones compared."""
    build = built_book(tmp_path / "a", [finding("grows", Verdict.REPRODUCED, 0.05, 0.03)])
    rows = [{"chapter": "02_n_versus_m", "scale": "s", **finding("grows", Verdict.UNRESOLVED, 0.02, 0.03).row()}]
    snapshot = tmp_path / "findings.json"
    snapshot.write_text(json.dumps({"book": rows}))
    comparison = compare_builds(build, snapshot)
    assert comparison[["claim", "verdict_1", "verdict_2"]].values.tolist() == [["grows", "reproduced", "unresolved"]]
    assert main(["compare", str(build), str(ROOT / "book" / "findings.json")]) == 0  # the committed one reads too
    snapshot.write_text(json.dumps({"rows": rows}))
    assert main(["compare", str(build), str(snapshot)]) == 2
    assert "neither a build's findings" in capsys.readouterr().err


def test_a_folder_without_a_built_book_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["compare", str(tmp_path), str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith(f"isobook: {tmp_path}: no executed chapters")


def test_a_seed_shift_rebuilds_every_run_on_other_seeds_and_keeps_base_models_and_sets() -> None:
    """`sweep.seed_shift`: every run's seed moves (the confirmatory ones too), the bandits are
    drawn anew, the base models and sets stay: a rebuild to compare with `isobook compare`."""
    default = load_config(ROOT / "params" / "cpu.yaml")
    shifted = load_config(ROOT / "params" / "cpu.yaml", ["sweep.seed_shift=100"])
    assert [c.train.seed for c in sweep_configs(shifted)] == [c.train.seed + 100 for c in sweep_configs(default)]
    assert grid_run(shifted, "hard", 8, 4, seed=1).train.seed == 101
    assert {run.train.seed for run in confirmatory_runs(shifted, "hard", {})} == set(range(110, 118))
    assert shifted.system.seed == default.system.seed
    assert (bandit_seed(default), bandit_seed(shifted)) == (0, 100)
    assert bandit_curves_path(shifted, "sharing").name.startswith("sharing-s100-")


def test_the_seed_variance_reference_is_chapter_02s_grid_on_two_seeds() -> None:
    """Every chapter borrows the seed variance of one grid: the sweep's first B_p, every n,
    two seeds where the sweep has one (shifted as its runs are)."""
    default = load_config(ROOT / "params" / "cpu.yaml")
    grid = reference_grid(default)
    assert grid.sweep.batch_problems == (8,) and grid.sweep.seeds == (0, 1)
    assert sorted({(c.train.rollouts_per_problem, c.train.seed) for c in sweep_configs(grid)}) == [
        (n, seed) for n in (4, 8, 16, 32) for seed in (0, 1)]
    shifted = reference_grid(load_config(ROOT / "params" / "cpu.yaml", ["sweep.seed_shift=100"]))
    assert {c.train.seed for c in sweep_configs(shifted)} == {100, 101}
    several = reference_grid(load_config(None, ["sweep.seeds=[3, 5, 7]"]))
    assert several.sweep.seeds == (3, 5, 7)
