"""What a reader sees: rounded tables, the findings table with coloured verdicts, the
landing page built from executed chapters, and the cell tags that hide code."""

import json
from dataclasses import replace
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from isobook.analysis.findings.statistics import Interval
from isobook.analysis.findings.verdicts import Finding, Verdict
from isobook.book.build import FINDINGS_MARKER, PRIMARIES_MARKER, landing_page, tag_for_the_page
from isobook.book.pages import FindingsTable, findings_of_notebook, landing_table, table

FINDINGS = [Finding("easy: n* grows (Fig. 5)", "n* by budget: 512: 4, 4,096: 4", Verdict.NOT_REPRODUCED,
                    "n within noise: {4} at 512, {4} at 4,096"),
            Finding("hard: x (Fig. 7)", "a 0.812 vs b 0.800", Verdict.UNRESOLVED, "a - b: +0.012 [-0.004, +0.031]",
                    Interval(0.012, -0.004, 0.031), p_value=0.14),
            Finding("hard: y (Fig. 9)", "a 0.812 vs b 0.770", Verdict.REPRODUCED, "a - b: +0.042 [+0.002, +0.082]",
                    Interval(0.042, 0.002, 0.082), p_value=0.04),
            Finding("bandit: z (Fig. 12)", "n* 2 -> 16", Verdict.REPRODUCED, "n within noise", family="bandit")]


def test_tables_show_integers_rounded_scores_sets_and_no_index() -> None:
    frame = pd.DataFrame({"rollouts": [724.0, 4096.0], "n": [4, 32], "score": [0.8123456, 0.5],
                          "within noise": [(4, 8), (32,)], "lead": [Interval(0.0123, -0.004, 0.031), None]},
                         index=[7, 9])
    html = table(frame, rename={"n": "n*"}).to_html()
    for shown in (">724<", ">4,096<", ">0.812<", ">0.500<", ">{4, 8}<", ">{32}<", "+0.012 [-0.004, +0.031]", ">n*<"):
        assert shown in html, shown
    assert "724.0" not in html and "0.8123456" not in html and ">7<" not in html  # no raw floats, no index


def test_a_findings_table_colours_its_verdicts_and_carries_its_rows() -> None:
    shown = FindingsTable(FINDINGS, "02_n_versus_m", "4,096 rollouts per run")
    data, metadata = shown._repr_mimebundle_()
    assert "background-color: #f8d7da" in data["text/html"] and "background-color: #e2e3e5" in data["text/html"]
    assert "Measured at 4,096 rollouts per run" in data["text/html"]
    assert metadata["isobook"]["chapter"] == "02_n_versus_m"
    assert [row["verdict"] for row in metadata["isobook"]["findings"]] == ["not reproduced", "unresolved", "reproduced",
                                                                          "reproduced"]
    assert [row.get("p") for row in metadata["isobook"]["findings"]] == [None, 0.14, 0.04, None]
    assert [row["family"] for row in metadata["isobook"]["findings"]] == ["llm", "llm", "llm", "bandit"]
    assert "not reproduced" in data["text/plain"]


def executed_chapter(folder: Path, name: str, title: str, findings: list[Finding]) -> Path:
    """An executed notebook as papermill leaves it: a title, parameters, and a findings cell."""
    data, metadata = FindingsTable(findings, name, "512 rollouts per run")._repr_mimebundle_()
    notebook = new_notebook(cells=[
        new_markdown_cell(f"# {title}\n\nProse."),
        new_code_cell('params = "params/cpu.yaml"', metadata={"tags": ["parameters"]}),
        new_code_cell('params = "/abs/params/smoke.yaml"', metadata={"tags": ["injected-parameters"]}),
        new_code_cell("outcomes = run()"),
        new_code_cell("charts()", metadata={"tags": ["remove-input"]}),
        new_code_cell("FindingsTable(...)", outputs=[new_output("execute_result", data=data, metadata=metadata,
                                                                 execution_count=1)]),
    ])
    path = folder / f"{name}.ipynb"
    nbformat.write(notebook, path)
    return path


def test_executed_chapters_hide_their_code_and_drop_their_parameters(tmp_path: Path) -> None:
    path = executed_chapter(tmp_path, "02_n_versus_m", "n versus M", FINDINGS)
    tag_for_the_page(path)
    tags = [cell.metadata.get("tags", []) for cell in nbformat.read(path, as_version=4).cells]
    assert tags == [[], ["parameters", "remove-cell"], ["injected-parameters", "remove-cell"], ["hide-input"],
                    ["remove-input"], ["hide-input"]]


PRIMARIES = [replace(FINDINGS[1], primary="width"),
             replace(FINDINGS[2], primary="growth", power={"effect": 0.03, "unit": "pass rate per doubling of C",
                                                           "seeds": 8, "problems": 200, "design power": 0.81,
                                                           "achieved power": 0.64})]


def test_the_landing_page_lists_the_primaries_first_then_every_chapters_findings(tmp_path: Path) -> None:
    notebooks = [executed_chapter(tmp_path, "01_recipe", "Recipe validation", FINDINGS[1:]),
                 executed_chapter(tmp_path, "02_n_versus_m", "n versus M", [FINDINGS[0], *PRIMARIES, FINDINGS[3]])]
    assert len(findings_of_notebook(json.loads(notebooks[1].read_text()))) == 1
    template = tmp_path / "index.md"
    template.write_text(f"# isobook\n\n{PRIMARIES_MARKER}\n\n{FINDINGS_MARKER}\n\nAfter.\n")
    claims = {"growth": "n* grows, decided on seeds 10-17", "width": "x is wide", "later": "not in this build"}
    page = landing_page(template, notebooks, claims)
    assert FINDINGS_MARKER not in page and PRIMARIES_MARKER not in page and page.endswith("After.\n")
    primaries, findings = page.split('<table class="isobook-findings"')
    # The primaries, in the config's order: the design (effect, seeds x problems, power) and both verdicts.
    rows = primaries.split("<tr><td")[1:]
    assert [row.split("</strong>")[0].rsplit(">", 1)[1] for row in rows] == ["growth", "width", "later"]
    assert "0.03 pass rate per doubling of C" in rows[0] and "8 x 200" in rows[0] and "0.81 / 0.64" in rows[0]
    assert "- x -" in rows[1] and "- / -" in rows[1]  # a primary without a design row says so
    assert "not run in this build" in rows[2]
    assert findings.count('<a href="01_recipe.html"><strong>Recipe validation</strong></a>') == 1
    assert findings.count('<a href="02_n_versus_m.html"><strong>n versus M</strong></a>') == 1
    assert findings.count('<tr><td colspan="5"') == 2 and findings.count("<tr><td") == 2 + 7  # per chapter, finding
    assert "(measured at 512 rollouts per run)" in findings
    assert "7 findings. On the LLM, 5: 2 reproduced, 2 unresolved, 1 not reproduced. On the bandits, 2: 2 reproduced." \
        in findings  # counted apart, in the order of Verdict
    # Holm over the two primaries alone (p = 0.14 and 0.04: 0.04 x 2 = 0.08 > 0.05), the other five exploratory.
    assert "Holm's procedure over the 2 primary findings" in findings
    assert "under it they read: 2 unresolved. It turns 1 into unresolved: hard: y (Fig. 9) (reproduced)." in findings
    cells = [row.split("</td>")[3] for row in findings.split("<tr><td")[1:] if row.count("</td>") >= 5]
    assert [cell.rsplit(">", 1)[1] for cell in cells] == ["exploratory"] * 4 + ["unresolved", "unresolved",
                                                                               "exploratory"]
    template.write_text(f"# no findings marker\n{PRIMARIES_MARKER}\n")
    with pytest.raises(ValueError, match="no <!-- findings --> line"):
        landing_page(template, notebooks, claims)


def test_an_empty_landing_table_says_so() -> None:
    assert "0 findings. On the LLM, 0: none." in landing_table([], {})


def test_score_columns_keep_their_decimals_even_when_whole() -> None:
    html = table(pd.DataFrame({"val_best@4": [1.0, 0.0], "rollouts": [512.0, 1024.0], "n": [4, 8]})).to_html()
    assert ">1.000<" in html and ">0.000<" in html and ">1,024<" in html and ">8<" in html


def test_runs_note_names_failures_and_runs_without_counts(tmp_path: Path) -> None:
    from isobook.book.pages import runs_note

    counted, old = tmp_path / "easy-bp8-n4", tmp_path / "easy-bp8-n8"
    counted.mkdir(), old.mkdir()
    (counted / "validation.parquet").write_text("")
    outcomes = pd.DataFrame({"set": "easy", "batch_problems": 8, "n": [4, 8, 16],
                             "folder": [str(counted), str(old), str(tmp_path / "x")],
                             "status": ["finished", "finished", "failed"], "reason": [None, None, "loss is nan"]})
    text = runs_note(outcomes).data
    assert "2 of 3 runs finished; not finished: easy B\\_p = 8, n = 16: failed (loss is nan)." in text
    assert "1 finished runs come from an older store" in text and "easy-bp8-n8" in text
    assert runs_note(outcomes.iloc[:1]).data == "*All 1 runs finished (from the run store, or trained now).*"


def test_every_chapter_names_itself_in_its_findings_table() -> None:
    """The landing page links a finding to the chapter its table names: the name must be the file's."""
    from isobook.book.build import chapters
    from isobook.book.kernel import ROOT

    for chapter in chapters():
        source = (ROOT / f"{chapter}.py").read_text()
        if "FindingsTable(" in source:
            assert f'FindingsTable(findings, "{Path(chapter).name}",' in source, chapter
