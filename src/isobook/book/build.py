"""Building the book: every chapter executed by papermill into outputs/, then Jupyter Book 1.

    isobook book --params params/smoke.yaml        # prints the path of the built index.html last

The chapters' Jupytext sources in ``book/`` are never written to: each is converted to a
notebook, executed by papermill with ``params`` (and ``overrides``) injected after its
``parameters`` cell into ``<outputs>/book/notebooks/``, and the book is assembled from
those executed notebooks in ``<outputs>/book/src/`` and built to
``<outputs>/book/html/``. Runs come from the run store, so a rebuild with the same params
re-executes the chapters without retraining.

For the reader, each executed chapter is tagged (`tag_for_the_page`): code behind a
toggle, parameters cells removed; the landing page (`landing_page`) is ``book/index.md``
with the table of every chapter's findings, read from the executed notebooks.
"""

from __future__ import annotations

import ast
import functools
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import replace
from pathlib import Path

import jupytext
import nbformat
import papermill
import yaml
from tqdm import tqdm
from traitlets.config import Config as KernelConfig

from isobook.analysis.findings.multiplicity import controlled
from isobook.book.applicability import REQUIREMENTS, why_not
from isobook.book.findings_file import write_findings
from isobook.book.kernel import ROOT
from isobook.book.pages import findings_of_notebook, landing_table, primaries_table
from isobook.config import Config, ConfigError, load_config
from isobook.config.studies import PRIMARY_CLAIMS
from isobook.device import resolve_placement
from isobook.sets.arms import prepare_arms
from isobook.store.locks import end_with_parent
from isobook.store.names import sets_folder
from isobook.sweeps.grid import ARMS

MATHJAX_VERSION = "3.2.2"
# What tex-mml-chtml needs offline: the script, its fonts, and the parts it loads lazily.
MATHJAX_PARTS = ("tex-mml-chtml.js", "input", "output/chtml/fonts", "a11y", "ui")
FINDINGS_MARKER = "<!-- findings -->"  # the line of book/index.md the findings table replaces
PRIMARIES_MARKER = "<!-- primaries -->"  # the line of book/index.md the primary claims' table replaces


def _toc_files(root: Path) -> list[str]:
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    return [entry["file"] for part in toc.get("parts", [{"chapters": toc.get("chapters", [])}])
            for entry in part.get("chapters", [])]


def chapters(root: Path = ROOT) -> list[str]:
    """The executed chapters named in ``_toc.yml`` (paths relative to `root`, no suffix):
    every entry but the markdown pages (`text_pages`)."""
    return [file for file in _toc_files(root) if not (root / f"{file}.md").is_file()]


def text_pages(root: Path = ROOT) -> list[str]:
    """The ``_toc.yml`` entries that are markdown pages (a reference, no code): copied as they are."""
    return [file for file in _toc_files(root) if (root / f"{file}.md").is_file()]


def book_arms(config: Config, root: Path = ROOT) -> list[Config]:
    """The configs whose base model and sets the book's chapters build, one per sets folder:
    `config` itself and the arms (`ARMS`) each chapter declares in its ``extra_base_models``
    (`chapter_declarations`); the chapter derives them the same way."""
    skipped = skipped_chapters(config, root)
    arms = [config, *(arm for chapter in chapters(root) if chapter not in skipped
                      for kind in chapter_declarations(root / f"{chapter}.py")["extra_base_models"]
                      for arm in ARMS[kind](config).values())]
    unique: dict[Path, Config] = {}
    for arm in arms:
        unique.setdefault(sets_folder(arm), arm)
    return list(unique.values())


def chapter_parameters(params: str, overrides: list[str], config: Config, root: Path = ROOT) -> dict[str, dict]:
    """The papermill parameters of each chapter (by file name in book/, without .py): the
    params file and overrides, and ``budget`` where ``book.budgets`` names the chapter (only
    chapters whose parameters cell has a ``budget`` take one)."""
    names = [Path(chapter).name for chapter in chapters(root)]
    budgeted = [Path(chapter).name for chapter in chapters(root) if "budget" in _parameter_names(root / f"{chapter}.py")]
    for name in config.book.budgets:
        if name not in budgeted:
            reason = "takes no budget" if name in names else "is not a chapter"
            raise ConfigError(f"book.budgets: {name!r} {reason}; allowed: {', '.join(budgeted)}")
    return {name: {"params": params, "overrides": overrides,
                   **({"budget": config.book.budgets[name]} if name in config.book.budgets else {})}
            for name in names}


def _chapter_cells(source: Path) -> list[nbformat.NotebookNode]:
    """The cells of the chapter at `source`, read once per version of the file (a build asks
    for its parameters and declarations several times)."""
    return _read_chapter(source, source.stat().st_mtime_ns).cells


@functools.lru_cache(maxsize=64)
def _read_chapter(source: Path, modified_ns: int) -> nbformat.NotebookNode:
    return jupytext.read(source)


def _parameter_names(source: Path) -> set[str]:
    """The names a chapter's ``parameters`` cell assigns."""
    cell = next((c for c in _chapter_cells(source) if "parameters" in c.metadata.get("tags", [])), None)
    if cell is None:
        return set()
    return {line.split("=")[0].strip() for line in cell.source.splitlines() if "=" in line and line[:1].isidentifier()}


# What a chapter declares, in its cell tagged ``book-declarations`` (literals only): the share
# of its budget its runs train to, the base-model arms (`sweeps.grid.ARMS`) it uses beside
# the params file's model, and what it needs of the config to run at all (a key of
# `applicability.REQUIREMENTS`, or None). The chapter's code reads the same variables.
DECLARATION_TAG = "book-declarations"
LEFT_OUT = ("book.chapters leaves it out; `isobook book --params <params> --plan book.chapters=null` counts "
            "what it would train")
DECLARATION_DEFAULTS: dict[str, object] = {"budget_share": 1.0, "extra_base_models": [], "requirement": None}


def chapter_declarations(source: Path) -> dict[str, object]:
    """The `DECLARATION_DEFAULTS` fields as the chapter at `source` sets them (a `ConfigError`
    naming the chapter, the field and the allowed values for anything else)."""
    declared = dict(DECLARATION_DEFAULTS)
    for cell in _chapter_cells(source):
        if DECLARATION_TAG not in cell.metadata.get("tags", []):
            continue
        for node in ast.parse(cell.source).body:
            name = node.targets[0].id if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
            if name not in DECLARATION_DEFAULTS:
                raise ConfigError(f"{source.name}: its {DECLARATION_TAG} cell may assign only "
                                  f"{', '.join(DECLARATION_DEFAULTS)}")
            declared[name] = ast.literal_eval(node.value)
    share, kinds = declared["budget_share"], declared["extra_base_models"]
    if not (isinstance(share, float) and 0 < share <= 1):
        raise ConfigError(f"{source.name}: budget_share {share!r}; allowed: a float in (0, 1]")
    if not (isinstance(kinds, list) and set(kinds) <= set(ARMS)):
        raise ConfigError(f"{source.name}: extra_base_models {kinds!r}; allowed: a list of {', '.join(ARMS)}")
    if declared["requirement"] is not None and declared["requirement"] not in REQUIREMENTS:
        raise ConfigError(f"{source.name}: requirement {declared['requirement']!r}; allowed: None, "
                          f"{', '.join(REQUIREMENTS)}")
    return declared


def skipped_chapters(config: Config, root: Path = ROOT) -> dict[str, str]:
    """The chapters (``_toc.yml`` paths) that do not run under `config`, each with its one
    line: the one its declared requirement gives, or that ``book.chapters`` leaves it out
    (a `ConfigError` for a name there that is not a chapter)."""
    names = {Path(chapter).name: chapter for chapter in chapters(root)}
    chosen = config.book.chapters
    unknown = [name for name in chosen or () if name not in names]
    if unknown:
        raise ConfigError(f"book.chapters: {unknown[0]!r} is not a chapter; allowed: {', '.join(names)}")
    reasons = {chapter: why_not(chapter_declarations(root / f"{chapter}.py")["requirement"], config)
               for chapter in chapters(root)}
    if chosen is not None:
        reasons.update({chapter: LEFT_OUT for name, chapter in names.items()
                        if name not in chosen and reasons[chapter] is None})
    return {chapter: reason for chapter, reason in reasons.items() if reason is not None}


def budget_rounds(parameters: dict[str, dict], default_budget: int, root: Path = ROOT) -> list[list[str]]:
    """The chapters (``_toc.yml`` paths) in rounds by the budget their runs train to (their
    own, else `default_budget`, times its declared ``budget_share``), smallest first; the
    book's order within a round. A round ends before the next begins, so a run stops at
    each budget a chapter asks of it (keeping that budget's policy) before a later chapter
    extends it, and no chapter reads a run that another is extending."""
    rounds: dict[int, list[str]] = {}
    for chapter in chapters(root):
        name = Path(chapter).name
        budget = parameters[name].get("budget", default_budget)
        share = chapter_declarations(root / f"{chapter}.py")["budget_share"]
        rounds.setdefault(round(budget * share), []).append(chapter)
    return [rounds[budget] for budget in sorted(rounds)]


def chapters_at_once(config: Config) -> int:
    """`book.chapters_at_once`, or by default 2 on the CPU and 1 where runs go to a CUDA GPU
    (two chapters' local workers would share its first device)."""
    if config.book.chapters_at_once is not None:
        return config.book.chapters_at_once
    return 1 if resolve_placement(config.system).device.type == "cuda" else 2


def execute_chapters(parameters: dict[str, dict], default_budget: int, outputs: Path,
                     root: Path = ROOT, at_once: int = 1, book: str = "book",
                     skipped: dict[str, str] | None = None) -> list[Path]:
    """Execute every chapter with its `parameters` (`chapter_parameters`) into
    ``<outputs>/<book>/notebooks/`` (`book`: ``book.folder``); returns the notebooks in the
    book's order.

    Chapters run round by round (`budget_rounds`), up to `at_once` of a round at a time,
    each in a process of its own (its kernel runs its sweeps with their own workers). Two at
    once keep both cores of a 2-core machine busy while one chapter imports, fits, draws or
    waits for its sweep's last run. Chapters of a round that ask for the same run share it:
    the run store's lock lets one train it and the other wait, and every chapter of a round
    asks for the same budget, so the executed notebooks do not depend on `at_once`. Within a
    round, chapters that train runs on base models of their own (``extra_base_models``) start
    first: they carry the most runs, and started last they would run on alone at the end
    while the other core waits. A chapter that fails stops the build: no chapter starts
    after it, and its error is raised once the chapters beside it have finished. A chapter
    in `skipped` (`skipped_chapters`) is not executed: its notebook is its title and the
    reason (`not_run_page`)."""
    folder = outputs / book / "notebooks"
    folder.mkdir(parents=True, exist_ok=True)
    skipped = skipped or {}
    executed = {chapter: not_run_page(root / f"{chapter}.py", folder, reason) for chapter, reason in skipped.items()}
    with tqdm(total=len(chapters(root)), initial=len(skipped), desc=f"chapters ({at_once} at once)",
              unit="chapter") as progress:
        for chapters_of_round in budget_rounds(parameters, default_budget, root):
            chapters_of_round = [chapter for chapter in chapters_of_round if chapter not in skipped]
            if not chapters_of_round:
                continue
            started = sorted(chapters_of_round,  # stable: the book's order otherwise
                             key=lambda chapter: not chapter_declarations(root / f"{chapter}.py")["extra_base_models"])
            jobs = {chapter: (root / f"{chapter}.py", folder, parameters[Path(chapter).name], root)
                    for chapter in started}
            if min(at_once, len(jobs)) == 1:
                for chapter, job in jobs.items():
                    progress.set_postfix_str(Path(chapter).name)
                    executed[chapter] = execute_chapter(*job)
                    progress.update()
            else:
                executed.update(_execute_at_once(jobs, at_once, progress))
    return [executed[chapter] for chapter in chapters(root)]


def _execute_at_once(jobs: dict[str, tuple], at_once: int, progress: tqdm) -> dict[str, Path]:
    """`execute_chapter` of each job (by chapter), in `at_once` processes, a chapter started
    as another ends, in order; the notebooks by chapter. After a failure no chapter starts,
    and the failure is raised once the chapters still running have finished."""
    context = multiprocessing.get_context("spawn")  # a kernel's client and fork do not mix
    waiting = list(jobs)
    done: dict[str, Path] = {}
    failure: BaseException | None = None
    with ProcessPoolExecutor(max_workers=at_once, mp_context=context, initializer=end_with_parent,
                             initargs=(os.getpid(),)) as pool:
        running: dict[Future, str] = {}
        while running or (waiting and failure is None):
            while waiting and failure is None and len(running) < at_once:
                chapter = waiting.pop(0)
                running[pool.submit(execute_chapter, *jobs[chapter])] = chapter
            progress.set_postfix_str(", ".join(Path(chapter).name for chapter in running.values()))
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                chapter, error = running.pop(future), future.exception()
                if error is not None:
                    failure = failure or error
                else:
                    done[chapter] = future.result()
                    progress.update()
    if failure is not None:
        raise failure
    return done


def execute_chapter(source: Path, folder: Path, parameters: dict, root: Path) -> Path:
    """One chapter's Jupytext `source` executed by papermill with `parameters` (run in
    `root`) into ``<folder>/<name>.ipynb``, tagged for the page; returns that notebook."""
    blank = folder / f".{source.stem}.input.ipynb"
    jupytext.write(jupytext.read(source), blank)
    target = folder / f"{source.stem}.ipynb"
    with tempfile.TemporaryDirectory(prefix="isobook-kernel-") as sockets:
        papermill.execute_notebook(str(blank), str(target), parameters=parameters, cwd=str(root),
                                   kernel_name="python3", progress_bar=False, config=_kernel_channels(Path(sockets)))
    blank.unlink()
    tag_for_the_page(target)
    return target


def not_run_page(source: Path, folder: Path, reason: str) -> Path:
    """``<folder>/<name>.ipynb`` for a chapter that does not run under this build's config:
    the chapter's title and one line, why (`applicability`)."""
    title = next(line for cell in _chapter_cells(source) if cell.cell_type == "markdown"
                 for line in cell.source.splitlines() if line.startswith("# "))
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
        f"{title}\n\nThis chapter does not run with this book's params: {reason}.")])
    target = folder / f"{source.stem}.ipynb"
    nbformat.write(notebook, target)
    return target


def add_run_box(notebook: Path, source: Path, parameters: dict, default_budget: int, root: Path) -> None:
    """A "Run this chapter yourself" box under the title of the executed `notebook` of
    chapter `source` (relative to `root`), run with `parameters`: the papermill command
    with this build's params and budget (its own, else `default_budget`, the sweep's), what
    the run store reuses, and the time the chapter took here (papermill's record in `notebook`)."""
    content = nbformat.read(notebook, as_version=4)
    params = Path(parameters["params"])
    shown = params.relative_to(root) if params.is_absolute() and params.is_relative_to(root) else params
    budgeted = "budget" in _parameter_names(root / source)
    budget = parameters.get("budget", default_budget)
    minutes, seconds = divmod(round(content.metadata.get("papermill", {}).get("duration") or 0), 60)
    # One argument group per line, each under about 60 characters: the box is narrower than a terminal.
    lines = [f".venv/bin/jupytext --to ipynb {source}", f"    -o /tmp/{source.stem}.ipynb",
             f".venv/bin/papermill /tmp/{source.stem}.ipynb", f"    outputs/{source.stem}.ipynb",
             f"    -k python3 -p params {shown}{f' -p budget {budget}' if budgeted else ''}",
             *([f"    -y 'overrides: {json.dumps(parameters['overrides'])}'"] if parameters["overrides"] else [])]
    continued = {0, *range(2, len(lines) - 1)}  # every line but the two commands' last ends in a backslash
    command = "\n".join(f"{line} \\" if i in continued else line for i, line in enumerate(lines))
    budget_text = (f"`budget` is the rollouts per run (this build: {budget:,}); a larger one extends the stored "
                   "runs instead of retraining them. " if budgeted else "")
    box = (f"````{{admonition}} Run this chapter yourself\n:class: tip\nFrom the repository root (or open "
           f"`{source}` after `make lab`):\n\n```bash\n{command}\n```\n\n{budget_text}Runs already in "
           f"`outputs/` are reused. Here the chapter took {minutes} min {seconds:02d} s to execute.\n````")
    title = next((i for i, cell in enumerate(content.cells) if cell.cell_type == "markdown"), -1)
    content.cells.insert(title + 1, nbformat.v4.new_markdown_cell(box))
    nbformat.write(content, notebook)


def _kernel_channels(sockets: Path) -> KernelConfig:
    """The kernel manager's settings for a chapter: on POSIX its kernel's channels are Unix
    sockets in `sockets`, a folder of this chapter's own. Over TCP, jupyter_client picks
    free ports before the kernel binds them, so two chapters starting kernels at once can
    be handed the same port, and one kernel dies before it answers (seen in a test run)."""
    if os.name != "posix":  # no Unix sockets: TCP, as jupyter_client does by default
        return KernelConfig()
    return KernelConfig({"KernelManager": {"transport": "ipc", "ip": str(sockets / "kernel")}})


def tag_for_the_page(notebook: Path) -> None:
    """Jupyter Book tags for a reader: the parameters cells (the chapter's defaults and the
    values papermill injected) are dropped from the page, every other code cell shows its
    outputs with its code behind a toggle (``hide-input``) unless its tags say otherwise."""
    content = nbformat.read(notebook, as_version=4)
    for cell in content.cells:
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.setdefault("tags", [])
        if {"parameters", "injected-parameters"} & set(tags):
            tags.append("remove-cell")
        elif not any(tag.startswith(("remove-", "hide-")) for tag in tags):
            tags.append("hide-input")
    nbformat.write(content, notebook)


def landing_page(template: Path, notebooks: list[Path], primaries: dict[str, str]) -> str:
    """The book's index page: `template` with its ``<!-- primaries -->`` line replaced by the
    pre-registered primary claims (`primaries`: key -> what it decides) with their designs
    and verdicts (`pages.primaries_table`), and its ``<!-- findings -->`` line by the table
    of every finding of the executed chapters (`pages.landing_table`)."""
    blocks, titles = [], {}
    for notebook in notebooks:
        content = json.loads(notebook.read_text())
        blocks.extend(findings_of_notebook(content))
        heading = next((line for cell in content["cells"] if cell["cell_type"] == "markdown"
                        for line in "".join(cell["source"]).splitlines() if line.startswith("# ")), notebook.stem)
        titles[notebook.stem] = heading.removeprefix("# ")
    text = template.read_text()
    for marker in (PRIMARIES_MARKER, FINDINGS_MARKER):
        if marker not in text:
            raise ValueError(f"{template}: no {marker} line to put its table on")
    rows = controlled([finding for block in blocks for finding in block["findings"]])
    return (text.replace(PRIMARIES_MARKER, primaries_table(primaries, rows))
            .replace(FINDINGS_MARKER, landing_table(blocks, titles)))


def primary_claims(config: Config) -> dict[str, str]:
    """The primaries a config names (``primaries.claims``), each with what it decides, in
    the config's values."""
    chose, decide = config.lr_envelope.seeds, config.primaries.seeds
    seeds = (f"each n's rate chosen on seeds {', '.join(map(str, chose))}, the claim decided on seeds "
             f"{', '.join(map(str, decide))}")
    reuse = config.data_reuse
    texts = {"own-best-rate": f"n*(C) grows on {' and '.join(config.lr_envelope.sets) or 'no set'} with every n at "
                              f"its own best learning rate ({seeds})",
             "data-reuse": f"n*(C) grows on {reuse.problems} {reuse.set} problems reused to C/D "
                           f"{reuse.budget / reuse.problems:g} ({seeds})"}
    return {key: texts[key] for key in config.primaries.claims if key in PRIMARY_CLAIMS}


def vendor_mathjax(folder: Path) -> Path | None:
    """A local MathJax 3 (the combined TeX/MathML-to-CHTML script, its fonts and lazily
    loaded parts) in ``folder/mathjax``, fetched once with ``npm pack`` from the npm
    registry; None, with a warning, where npm cannot fetch it (pages then use the CDN)."""
    target = folder / "mathjax"
    if (target / "tex-mml-chtml.js").is_file():
        return target
    with tempfile.TemporaryDirectory() as scratch:
        try:
            subprocess.run(["npm", "pack", f"mathjax@{MATHJAX_VERSION}", "--silent"], cwd=scratch, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300)
        except (OSError, subprocess.SubprocessError) as error:
            print(f"isobook book: no local MathJax ({error}); pages will load it from a CDN", file=sys.stderr)
            return None
        with tarfile.open(Path(scratch) / f"mathjax-{MATHJAX_VERSION}.tgz") as archive:
            archive.extractall(scratch, filter="data")
        es5 = Path(scratch) / "package" / "es5"
        staging = folder / ".mathjax.partial"
        if staging.exists():
            shutil.rmtree(staging)
        for part in MATHJAX_PARTS:
            copy = shutil.copytree if (es5 / part).is_dir() else shutil.copy
            (staging / part).parent.mkdir(parents=True, exist_ok=True)
            copy(es5 / part, staging / part)
        staging.rename(target)
    return target


BANDIT_CHAPTER = "book/04_interference"  # its bandit curves are computed while the base models build


def _one_blas_thread(parent: int) -> None:
    """A worker's initializer: numpy's BLAS on one thread (read when the task's imports load
    it), and the worker ends with `parent`."""
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = "1"
    end_with_parent(parent)


def build_book(params: str, overrides: list[str], root: Path = ROOT) -> Path:
    """Execute the chapters and build the HTML book into ``<system.outputs>/<book.folder>/``; returns
    the built ``index.html``. The params (book.budgets included) are checked before anything trains."""
    params = str(Path(params).resolve())  # chapters run in `root`
    config = load_config(params, overrides)
    outputs = root / config.system.outputs
    parameters = chapter_parameters(params, overrides, config, root)
    skipped = skipped_chapters(config, root)
    resolved = replace(config, system=replace(config.system, outputs=str(outputs)))
    from isobook.analysis.bandit import interference_curves  # torch comes with it: once the config is checked

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_one_blas_thread, initargs=(os.getpid(),)) as beside:
        # Chapter 04's bandit curves on the core the base models' one-threaded builds leave idle.
        bandits = beside.submit(interference_curves, resolved) if BANDIT_CHAPTER not in skipped else None
        prepare_arms(book_arms(resolved, root), outputs / "logs")
        if bandits is not None:
            bandits.result()
    notebooks = execute_chapters(parameters, config.sweep.budget, outputs, root, chapters_at_once(config),
                                 config.book.folder, skipped)
    book = outputs / config.book.folder
    source = book / "src"
    if source.exists():
        shutil.rmtree(source)
    (source / "book").mkdir(parents=True)
    shutil.copy(root / "_toc.yml", source / "_toc.yml")
    book_config = yaml.safe_load((root / "_config.yml").read_text())
    mathjax = vendor_mathjax(book / "vendor")
    if mathjax is not None:
        # Copied beside the pages, not into _static (Jupyter Book adds a script tag for every
        # .js file there); the path below is taken relative to _static.
        shutil.copytree(mathjax, source / "_extra" / "mathjax")
        sphinx = book_config.setdefault("sphinx", {}).setdefault("config", {})
        sphinx.update({"html_extra_path": ["_extra"], "mathjax_path": "../mathjax/tex-mml-chtml.js"})
    (source / "_config.yml").write_text(yaml.safe_dump(book_config, sort_keys=False))
    write_findings(book, notebooks)
    (source / "book" / "index.md").write_text(landing_page(root / "book" / "index.md", notebooks,
                                                           primary_claims(config)))
    for chapter, notebook in zip(chapters(root), notebooks):
        if chapter not in skipped:
            add_run_box(notebook, Path(f"{chapter}.py"), parameters[Path(chapter).name], config.sweep.budget, root)
        shutil.copy(notebook, source / "book" / notebook.name)
    for page in text_pages(root):
        shutil.copy(root / f"{page}.md", source / f"{page}.md")
    build = book / "build"
    if build.exists():  # Sphinx keeps files a source no longer has; build afresh
        shutil.rmtree(build)
    jupyter_book = Path(sys.executable).with_name("jupyter-book")  # the CLI installed beside this Python
    subprocess.run([str(jupyter_book), "build", str(source), "--path-output", str(build)],
                   check=True, stdout=subprocess.DEVNULL)
    html = book / "html"
    if html.exists():
        shutil.rmtree(html)
    shutil.copytree(build / "_build" / "html", html)
    return html / "index.html"
