"""The book on the smoke preset: chapters executed by papermill, built by Jupyter Book 1,
and read in headless Chromium with the network blocked."""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from isobook.book.build import (
    book_arms,
    budget_rounds,
    build_book,
    chapter_declarations,
    chapter_parameters,
    chapters,
    execute_chapters,
    not_run_page,
    skipped_chapters,
)
from isobook.analysis.findings.verdicts import Verdict
from isobook.book.findings_file import FILE as FINDINGS_FILE
from isobook.book.designs import RATED_RUNS, chapter_runs
from isobook.book.kernel import ROOT, chapter_config
from isobook.book.plan import _without_rate as without_rate
from isobook.book.plan import book_plan
from isobook.book.pages import findings_of_notebook
from isobook.config import ConfigError, load_config
from isobook.store.names import run_folder, sets_built, sets_folder
from isobook.sweeps import grid_run


def digests() -> dict[str, str]:
    return {c: hashlib.sha256((ROOT / f"{c}.py").read_bytes()).hexdigest() for c in chapters()}


@pytest.fixture(scope="module")
def built(smoke_outputs: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """The smoke book built once: (outputs folder, index.html, source digests before the build)."""
    outputs = tmp_path_factory.mktemp("book") / "outputs"
    shutil.copytree(smoke_outputs, outputs)
    before = digests()
    return outputs, build_book(str(ROOT / "params" / "smoke.yaml"), [f"system.outputs={outputs}"]), before


def test_the_smoke_book_builds_from_executed_chapters_without_touching_the_sources(built) -> None:
    outputs, index, before = built
    assert index == outputs / "book" / "html" / "index.html" and index.is_file()
    for chapter in chapters():
        name = Path(chapter).name
        notebook = json.loads((outputs / "book" / "notebooks" / f"{name}.ipynb").read_text())
        injected = [c for c in notebook["cells"] if "injected-parameters" in c["metadata"].get("tags", [])]
        assert len(injected) == 1 and "smoke.yaml" in "".join(injected[0]["source"])
        errors = [o for c in notebook["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
        assert not errors
        page = (index.parent / f"{chapter}.html").read_text()
        assert "<img" in page and ".svg" in page  # charts are local SVG files, not CDN-rendered
        assert 'src="http' not in page  # no script or image from the network (MathJax is local)
    assert (index.parent / "mathjax" / "tex-mml-chtml.js").is_file()
    assert before == digests()
    # The build's findings file: every chapter's findings, each with its verdict under Holm (the primaries', chapter
    # 02's two, under control; the others their own), the primaries with the power of their design.
    rows = json.loads((outputs / "book" / FINDINGS_FILE).read_text())
    shown = [f for n in sorted((outputs / "book" / "notebooks").glob("*.ipynb"))
             for block in findings_of_notebook(json.loads(n.read_text())) for f in block["findings"]]
    assert [row["claim"] for row in rows] == [f["claim"] for f in shown] and rows
    assert all("holm verdict" in row for row in rows)
    assert {row["family"] for row in rows} == {"llm", "bandit"}
    primaries = [row for row in rows if row.get("primary")]
    assert [row["primary"] for row in primaries] == ["own-best-rate", "data-reuse"]
    assert all(row["holm p"] is not None and 0 <= row["power"]["achieved power"] <= 1 for row in primaries)
    assert all(row["holm p"] is None for row in rows if not row.get("primary"))
    landing = (index.parent / "book" / "index.html").read_text()
    assert landing.index("isobook-primaries") < landing.index("isobook-findings")  # the primaries first


def test_the_book_builds_its_other_base_models_in_processes_of_their_own(built) -> None:
    outputs, _, _ = built
    config = load_config(ROOT / "params" / "smoke.yaml", [f"system.outputs={outputs}"])
    arms = book_arms(config)
    # the main model, chapter 07's Llama, chapter 08's misconceptions
    assert len({sets_folder(arm) for arm in arms}) == 3
    assert all(sets_built(arm) for arm in arms)
    logs = sorted((outputs / "logs").glob("*.log"))  # the main arm came prebuilt: two were built, at once
    assert [log.stem for log in logs] == sorted(sets_folder(arm).name for arm in arms[1:])
    for log in logs:
        assert "base model" in log.read_text() and "profile avg@16" in log.read_text()


def test_every_chapter_page_says_how_to_run_it_yourself(built) -> None:
    outputs, index, _ = built
    import html
    import re

    for chapter in chapters():
        page = html.unescape(re.sub(r"<[^>]+>", "", (index.parent / f"{chapter}.html").read_text()))
        assert "Run this chapter yourself" in page, chapter
        assert f"jupytext --to ipynb {chapter}.py" in page, chapter
        assert "-p params params/smoke.yaml" in page, chapter  # the params this build used, as a reader types them
        assert " min " in page.split("Run this chapter yourself")[1].split("to execute")[0], chapter
    recipe = html.unescape(re.sub(r"<[^>]+>", "", (index.parent / "book" / "01_recipe.html").read_text()))
    assert f"-p budget {load_config(ROOT / 'params' / 'smoke.yaml').sweep.budget}" in recipe
    introduction = html.unescape(re.sub(r"<[^>]+>", "", (index.parent / "book" / "00_introduction.html").read_text()))
    assert "-p params" in introduction and "-p budget" not in introduction  # it takes no budget
    assert (index.parent / "book" / "how_isobook_works.html").is_file()


def test_every_chapter_renders_its_charts_and_math_offline_in_chromium(built) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "Debian's chromium is needed (make test installs it)"
    _, index, _ = built
    fetched: list[str] = []

    def block_the_network(route) -> None:
        if route.request.url.startswith(("http://", "https://")):
            fetched.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page()
        page.route("**/*", block_the_network)
        for chapter in chapters():
            page.goto((index.parent / f"{chapter}.html").as_uri())
            page.wait_for_load_state("load")
            sources = page.eval_on_selector_all("img[src$='.svg']", "images => images.map(i => i.src)")
            widths = page.eval_on_selector_all("img[src$='.svg']", "images => images.map(i => i.naturalWidth)")
            assert widths and all(width > 0 for width in widths), chapter  # every chart loaded
            for source in sources:  # and every one has drawn marks (a chart of no data is a bare frame)
                drawn = Path(source.removeprefix("file://")).read_text()
                assert drawn.count('role="graphics-symbol"') + drawn.count('role="graphics-object"') > 0, source
            page.wait_for_selector("mjx-container", timeout=30_000)  # MathJax typeset the formulas
            inputs = page.query_selector_all(".cell_input")
            assert inputs and not any(cell.is_visible() for cell in inputs), chapter  # code behind a toggle
            assert not page.query_selector_all(".tag_parameters, .tag_injected-parameters"), chapter
            assert 'params = "' not in page.inner_text("main"), chapter  # no parameters cell on the page
        page.goto((index.parent / "book" / "index.html").as_uri())  # index.html itself redirects there
        page.wait_for_load_state("load")
        links = page.eval_on_selector_all("table.isobook-findings a", "links => links.map(a => a.getAttribute('href'))")
        with_findings = [f"{Path(c).name}.html" for c in chapters() if Path(c).name != "00_introduction"]
        assert sorted(set(links)) == sorted(with_findings)  # a link per chapter that states findings
        verdicts = page.eval_on_selector_all("table.isobook-findings td[style*='background-color']",
                                             "cells => cells.map(c => c.innerText)")
        assert verdicts and set(verdicts) <= {str(v) for v in Verdict}
        browser.close()
    assert fetched == []


def test_a_chapter_opened_in_book_finds_the_repositorys_params_and_outputs() -> None:
    """JupyterLab starts a chapter's kernel in book/: each chapter's first cells (its
    parameters and its set-up cell) must still read params/ and aim at outputs/ of the
    repository, not book/params or book/outputs."""
    import jupytext
    import nbclient
    from nbformat.v4 import new_code_cell

    for chapter in chapters():
        notebook = jupytext.read(ROOT / f"{chapter}.py")
        code = [i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code"]
        declarations = sum("book-declarations" in notebook.cells[i].metadata.get("tags", []) for i in code[:3])
        notebook.cells = [notebook.cells[i] for i in code[:2 + declarations]] + [new_code_cell(
            "import json, os\nprint(json.dumps({'cwd': os.getcwd(), 'outputs': config.system.outputs}))")]
        nbclient.NotebookClient(notebook, kernel_name="python3", timeout=300,
                                resources={"metadata": {"path": str(ROOT / "book")}}).execute()
        printed = json.loads(notebook.cells[-1].outputs[-1]["text"])
        assert printed == {"cwd": str(ROOT / "book"), "outputs": str(ROOT / "outputs")}, chapter


def execute_chapter_02(folder: Path, overrides: list[str], budget: int | None = None) -> str:
    """Chapter 02 executed by papermill on the smoke preset; the text of its outputs."""
    import jupytext
    import papermill

    notebook = folder / "02.ipynb"
    jupytext.write(jupytext.read(ROOT / "book" / "02_n_versus_m.py"), notebook)
    executed = papermill.execute_notebook(
        str(notebook), str(folder / "02-out.ipynb"), kernel_name="python3", cwd=str(ROOT), progress_bar=False,
        parameters={"params": str(ROOT / "params" / "smoke.yaml"), "overrides": overrides, "budget": budget})
    return json.dumps([cell.get("outputs", []) for cell in executed["cells"]])


def test_a_chapter_rerun_with_a_larger_budget_extends_its_runs(built, tmp_path: Path) -> None:
    import pandas as pd

    outputs, _, _ = built
    config = load_config(ROOT / "params" / "smoke.yaml", [f"system.outputs={outputs}"])
    runs = [run_folder(grid_run(config, "easy", 4, n)) for n in config.sweep.rollouts_per_problem]  # chapter 02's
    before = {run.name: pd.read_parquet(run / "metrics.parquet") for run in runs}
    assert before and all(json.loads((run / "status.json").read_text())["rollouts"] == 512 for run in runs)
    execute_chapter_02(tmp_path, [f"system.outputs={outputs}"], budget=1024)
    for run in runs:
        assert json.loads((run / "status.json").read_text())["rollouts"] == 1024
        after = pd.read_parquet(run / "metrics.parquet")
        kept = after.iloc[: len(before[run.name])].drop(columns=["sample_seconds", "update_seconds", "eval_seconds"])
        pd.testing.assert_frame_equal(kept, before[run.name].drop(
            columns=["sample_seconds", "update_seconds", "eval_seconds"]))  # extended, not retrained


def test_chapter_02_without_an_envelope_says_so_and_reads_n_star_at_the_rules_rate_only(built, tmp_path: Path) -> None:
    outputs, _, _ = built
    overrides = [f"system.outputs={outputs}", "lr_envelope.sets=[]"]
    config = load_config(ROOT / "params" / "smoke.yaml", overrides)
    assert not [run for run in chapter_runs("02_n_versus_m", config) if run.recipe.base_lr != config.recipe.base_lr]
    assert book_plan(str(ROOT / "params" / "smoke.yaml"), [*overrides, "lr_envelope.extensions=1"]).chapters.set_index("chapter").loc[
        "02_n_versus_m", "note"] == ""
    text = execute_chapter_02(tmp_path, overrides)
    assert "No envelope in this book" in text and "own best learning rate: n*" not in text
    assert "the grid on easy" in text and "hard, sqrt rule" in text  # the regime note names the grid itself


def test_chapters_run_smallest_budget_first_and_come_back_in_the_books_order(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import papermill

    ran = []

    def execute(source: str, target: str, parameters: dict, **_: object) -> None:
        ran.append((Path(target).stem, parameters.get("budget")))
        shutil.copy(source, target)

    monkeypatch.setattr(papermill, "execute_notebook", execute)
    config = load_config(ROOT / "params" / "cpu-long.yaml")
    notebooks = execute_chapters(chapter_parameters("cpu-long.yaml", [], config), config.sweep.budget, tmp_path)
    assert [notebook.stem for notebook in notebooks] == [Path(chapter).name for chapter in chapters()]
    # The chapters at 16,384 run last, so the runs they extend have stopped at 4,096 first;
    # within a round, a chapter with base models of its own starts first (chapter 08, then 07).
    assert ran[-3:] == [("08_what_makes_n_grow", 16384), ("02_n_versus_m", 16384), ("04_interference", 16384)]
    assert [budget for _, budget in ran[:-3]] == [None] * (len(ran) - 3)
    assert [name for name, _ in ran[:3]] == ["01_recipe", "07_models_and_baselines", "00_introduction"]


def test_rounds_group_the_chapters_by_the_budget_their_runs_train_to_smallest_first() -> None:
    config = load_config(ROOT / "params" / "cpu-long.yaml")
    rounds = budget_rounds(chapter_parameters("cpu-long.yaml", [], config), config.sweep.budget)
    names = [Path(chapter).name for chapter in chapters()]
    long = ("02_n_versus_m", "04_interference", "08_what_makes_n_grow")
    assert [[Path(c).name for c in chapters_of_round] for chapters_of_round in rounds] == [
        ["01_recipe"], [name for name in names if name not in ("01_recipe", *long)], list(long)]
    # Chapter 01 is in a round of its own because it declares that its runs train to half
    # its budget, and its code reads that declaration:
    assert chapter_declarations(ROOT / "book" / "01_recipe.py") == {"budget_share": 0.5, "extra_base_models": [],
                                                                    "requirement": None}
    assert "round(config.sweep.budget * budget_share)" in (ROOT / "book" / "01_recipe.py").read_text()


def test_chapters_that_a_config_cannot_run_are_named_before_the_build_and_become_one_line_pages(
        tmp_path: Path) -> None:
    """Chapter 08 declares the chain task and chapter 07 a second model it can train: under a
    math-file task with isobook's own second model both are skipped, with their reasons,
    and neither's base-model arm is built; a checkpoint as the second model brings 07 back."""
    math_file = ["task.family=math-file", f"task.math_file.path={tmp_path / 'problems.jsonl'}",
                 f"model.source={tmp_path / 'checkpoint'}"]
    config = load_config(ROOT / "params" / "smoke.yaml", math_file)
    skipped = skipped_chapters(config)
    assert sorted(skipped) == ["book/07_models_and_baselines", "book/08_what_makes_n_grow"]
    assert "studies the chain task's own structure" in skipped["book/08_what_makes_n_grow"]
    assert "set second_model.model.source to a checkpoint folder" in skipped["book/07_models_and_baselines"]
    assert book_arms(config) == [config]
    with_second = load_config(ROOT / "params" / "smoke.yaml", [*math_file, f"second_model.model.source={tmp_path}"])
    assert list(skipped_chapters(with_second)) == ["book/08_what_makes_n_grow"]
    assert skipped_chapters(load_config(ROOT / "params" / "smoke.yaml")) == {}
    page = not_run_page(ROOT / "book" / "08_what_makes_n_grow.py", tmp_path, skipped["book/08_what_makes_n_grow"])
    cells = json.loads(page.read_text())["cells"]
    assert len(cells) == 1 and "".join(cells[0]["source"]).startswith(
        "# What makes n* grow\n\nThis chapter does not run with this book's params: it studies the chain task")


def test_book_chapters_leaves_chapters_out_by_name_and_rejects_a_name_that_is_not_one() -> None:
    """`book.chapters` keeps the named chapters; the others get the one line that says so;
    a chapter's own requirement still gives its own reason (chapter 05 needs mix-tri)."""
    config = load_config(ROOT / "params" / "smoke.yaml", ["book.chapters=[00_introduction, 02_n_versus_m]"])
    skipped = skipped_chapters(config)
    assert sorted(skipped) == [c for c in chapters() if Path(c).name not in ("00_introduction", "02_n_versus_m")]
    assert all(reason.startswith("book.chapters leaves it out; `isobook book --params <params> --plan ")
               for reason in skipped.values())
    without_tri = load_config(ROOT / "params" / "smoke.yaml", ["sets.mixtures={mix-dual: {hard: 0.5, easy: 0.5}}"])
    assert skipped_chapters(without_tri) == {
        "book/05_data": "it trains on the mixtures mix-dual and mix-tri (hard, easy and very easy problems), "
                        "and sets.mixtures has no mix-tri"}
    with pytest.raises(ConfigError, match=r"^book.chapters: '02_n_vs_m' is not a chapter; allowed: 00_introduction, "):
        skipped_chapters(load_config(ROOT / "params" / "smoke.yaml", ["book.chapters=[02_n_vs_m]"]))


def test_the_plan_counts_the_runs_the_book_trains_before_and_after_the_build(built, smoke_outputs: Path) -> None:
    """Before the build, the plan names every run the build leaves in the store (but those
    whose rate a chapter chose from results) and their rollouts; after it, nothing is left
    to train and the rate is the store's: its runs' rollouts over their seconds."""
    params = str(ROOT / "params" / "smoke.yaml")
    before = book_plan(params, [f"system.outputs={smoke_outputs}"])
    outputs, _, _ = built
    after = book_plan(params, [f"system.outputs={outputs}"])
    stored = {folder.name: json.loads((folder / "status.json").read_text()) for folder in (outputs / "runs").iterdir()}
    assert after.rollouts == 0 and after.runs == before.runs
    assert before.profile_rollouts > 0 and after.profile_rollouts == 0  # the other base models' sets, then built
    config = load_config(params, [f"system.outputs={outputs}"])
    chapter_cfg = chapter_config(params, [f"system.outputs={outputs}"])
    planned = {run_folder(run).name: run.train.budget for chapter in chapters()
               for run in chapter_runs(Path(chapter).name, chapter_cfg,
                                       chapter_declarations(ROOT / f"{chapter}.py")["budget_share"])}
    assert set(planned) <= set(stored)
    # Beyond the plan only runs a chapter chose a rate for from results (chapter 02's past a
    # bracket's edge, its data reuse at each n's rate, also when another test here extends it):
    # each differs from a planned one in recipe.base_lr alone.
    shapes = [without_rate(run.to_plain()) for chapter in chapters()
              for run in [*chapter_runs(Path(chapter).name, chapter_cfg), *RATED_RUNS.get(
                  Path(chapter).name, lambda _: [])(chapter_cfg)]]
    for name in set(stored) - set(planned):
        assert without_rate(yaml.safe_load((outputs / "runs" / name / "config.yaml").read_text())) in shapes, name
    assert all(stored[name]["rollouts"] >= budget for name, budget in planned.items())
    # Every planned run was new before the build: its rollouts are the largest budget asked of it.
    assert before.rollouts >= sum(planned.values()) and before.chapters["new runs"].sum() == before.runs
    model = config.to_plain()["model"]  # the other base models' runs are not counted
    own = [status for name, status in stored.items() if status["status"] == "finished"
           and yaml.safe_load((outputs / "runs" / name / "config.yaml").read_text())["model"] == model]
    assert len(own) < len(stored)
    assert after.rate == pytest.approx(sum(s["rollouts"] for s in own) / sum(s["seconds"] for s in own), rel=1e-12)
    smaller_pools = [f"system.outputs={outputs}", "sets.pool_size=64"]  # sets the store does not hold
    assert book_plan(params, smaller_pools).profile_rollouts == (
        (64 + config.sets.stability_problems) * config.sets.samples * len(book_arms(load_config(params, smaller_pools))))


def test_a_chapter_declaration_outside_its_fields_is_one_error(tmp_path: Path) -> None:
    source = tmp_path / "chapter.py"
    source.write_text('# %% tags=["book-declarations"]\nextra_base_models = ["third-model"]\n')
    with pytest.raises(ConfigError, match=r"chapter.py: extra_base_models \['third-model'\]; allowed: a list of "
                                          r"second-model, misconceptions"):
        chapter_declarations(source)
    source.write_text('# %% tags=["book-declarations"]\nhalf = 0.5\n')
    with pytest.raises(ConfigError, match="may assign only budget_share, extra_base_models"):
        chapter_declarations(source)


WAIT_FOR = """
import time
from pathlib import Path

def wait_for(path):
    deadline = time.monotonic() + 120
    while not Path(path).exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert Path(path).exists(), f"{path} never appeared"
"""


def _toy_book(root: Path, sources: dict[str, str]) -> None:
    """A book of `sources` (chapter name: the code of its last cell) in `root`; each
    chapter's parameters cell sets ``folder`` and ``budget``, and a cell defines `wait_for`."""
    header = (ROOT / "book" / "00_introduction.py").read_text().split("\n\n")[0]  # the kernelspec
    (root / "book").mkdir(parents=True)
    for name, code in sources.items():
        (root / "book" / f"{name}.py").write_text(
            f'{header}\n\n# %% tags=["parameters"]\nfolder = ""\nbudget = 4\n\n# %%{WAIT_FOR}\n# %%\n{code}\n')
    (root / "_toc.yml").write_text(yaml.safe_dump({"format": "jb-book", "root": "book/index",
                                                   "chapters": [{"file": f"book/{name}"} for name in sources]}))


def test_chapters_of_a_round_run_at_once_and_come_back_in_the_books_order(tmp_path: Path) -> None:
    """Each chapter waits until the other has started (one after the other, neither could
    end), and the first ends last. Their kernels, started together, talk over Unix sockets
    in folders of their own, so they cannot be handed the same TCP port."""
    kernel = 'from ipykernel import get_connection_info\nPath(folder, "{}.kernel").write_text(get_connection_info())\n'
    _toy_book(tmp_path, {
        "a": kernel.format("a") + 'Path(folder, "a").touch()\nwait_for(Path(folder, "b"))\n'
                                  'wait_for(Path(folder, "b-done"))',
        "b": kernel.format("b") + 'Path(folder, "b").touch()\nwait_for(Path(folder, "a"))\n'
                                  'Path(folder, "b-done").touch()'})
    parameters = {name: {"folder": str(tmp_path)} for name in ("a", "b")}
    notebooks = execute_chapters(parameters, 4, tmp_path / "outputs", tmp_path, at_once=2)
    assert [notebook.name for notebook in notebooks] == ["a.ipynb", "b.ipynb"]
    assert all(notebook.is_file() for notebook in notebooks)
    channels = [json.loads((tmp_path / f"{name}.kernel").read_text()) for name in ("a", "b")]
    assert [c["transport"] for c in channels] == ["ipc", "ipc"]
    folders = [Path(c["ip"]).parent for c in channels]
    assert folders[0] != folders[1] and all(folder.is_absolute() and not folder.exists() for folder in folders)


def test_a_failing_chapter_lets_the_running_one_finish_and_starts_no_other(tmp_path: Path) -> None:
    import papermill

    _toy_book(tmp_path, {
        "fails": 'Path(folder, "fails").touch()\nraise ValueError("no such set")',
        # Still running when "fails" fails: it ends after papermill has written the error
        # banner into the failed chapter's notebook, the last thing papermill does before
        # raising.
        "running": 'wait_for(Path(folder, "fails"))\nnotebook = Path(folder, "outputs/book/notebooks/fails.ipynb")\n'
                   'while "papermill-error-cell-tag" not in (notebook.read_text() if notebook.exists() else ""):\n'
                   '    time.sleep(0.1)\nPath(folder, "running-done").touch()',
        "queued": 'Path(folder, "queued").touch()',  # the same round, behind those two
        "later": 'Path(folder, "later").touch()'})  # the next round
    parameters = {name: {"folder": str(tmp_path)} for name in ("fails", "running", "queued")}
    parameters["later"] = {"folder": str(tmp_path), "budget": 8}
    with pytest.raises(papermill.PapermillExecutionError, match="no such set"):
        execute_chapters(parameters, 4, tmp_path / "outputs", tmp_path, at_once=2)
    assert (tmp_path / "running-done").exists()
    assert not (tmp_path / "queued").exists() and not (tmp_path / "later").exists()


def test_a_chapters_first_import_leaves_out_what_only_the_build_needs() -> None:
    """Every chapter's kernel imports `isobook.book.charts` (altair) and `isobook.book.kernel`
    for `chapter_config`: it should not also load jupytext and papermill, nor make jsonschema
    build its RFC 3987 grammar (a format none of the book's schemas use), which jsonschema
    still validates without."""
    probe = ("import sys, isobook.book.charts, isobook.book.kernel, altair, jsonschema\n"
             "loaded = [name for name in ('jupytext', 'papermill', 'nbformat', 'rfc3987_syntax') if sys.modules.get(name)]\n"
             "jsonschema.validate({'n': 4}, {'type': 'object', 'properties': {'n': {'type': 'integer'}}})\n"
             "print(loaded)")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_make_lab_opens_the_chapters_as_notebooks(tmp_path: Path) -> None:
    """`make lab` sets JupyterLab's default viewer for Python files to Jupytext's notebook,
    and the server hands a chapter out as a notebook."""
    import socket
    import time
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    token = "isobook-test"
    flags = f"--no-browser --allow-root --port={port} --ServerApp.ip=127.0.0.1 --IdentityProvider.token={token}"
    lab = subprocess.Popen(["make", "-s", "-o", ".venv/.installed", "lab", f"LAB_SETTINGS={tmp_path}",
                            f"LAB_FLAGS={flags}", f"VENV={Path(sys.executable).parents[1]}"], cwd=ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    def get(path: str) -> dict:
        request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Authorization": f"token {token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)

    try:
        for _ in range(120):  # the server starts in a few seconds
            try:
                settings = get("/lab/api/settings/@jupyterlab/docmanager-extension:plugin")
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not answer within a minute")
        assert settings["schema"]["properties"]["defaultViewers"]["default"] == {"python": "Jupytext Notebook"}
        chapter = get("/api/contents/book/01_recipe.py?type=notebook&content=1")
        assert chapter["type"] == "notebook"
        assert any("parameters" in cell["metadata"].get("tags", []) for cell in chapter["content"]["cells"])
    finally:
        os.killpg(lab.pid, signal.SIGTERM)
        lab.wait(timeout=30)
