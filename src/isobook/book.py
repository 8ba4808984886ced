"""Building the book: every chapter executed by papermill into outputs/, then Jupyter Book 1.

    isobook book --params params/smoke.yaml        # prints the path of the built index.html last

The chapters' Jupytext sources in ``book/`` are never written to: each is converted to a
notebook, executed by papermill with ``params`` (and ``overrides``) injected after its
``parameters`` cell into ``<outputs>/book/notebooks/``, and the book is assembled from
those executed notebooks in ``<outputs>/book/src/`` and built to
``<outputs>/book/html/``. Runs come from the run store, so a rebuild with the same params
re-executes the chapters without retraining.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import jupytext
import papermill
import yaml
from tqdm.auto import tqdm

from isobook.config import load_config

ROOT = Path(__file__).resolve().parents[2]


def chapters(root: Path = ROOT) -> list[str]:
    """The chapter files named in ``_toc.yml`` (paths relative to `root`, no suffix)."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    return [entry["file"] for part in toc.get("parts", [{"chapters": toc.get("chapters", [])}])
            for entry in part.get("chapters", [])]


def execute_chapters(params: str, overrides: list[str], outputs: Path, root: Path = ROOT) -> list[Path]:
    """Execute every chapter into ``<outputs>/book/notebooks/``; returns the notebooks."""
    folder = outputs / "book" / "notebooks"
    folder.mkdir(parents=True, exist_ok=True)
    executed = []
    for chapter in tqdm(chapters(root), desc="chapters", unit="chapter"):
        source = root / f"{chapter}.py"
        blank = folder / f".{source.stem}.input.ipynb"
        jupytext.write(jupytext.read(source), blank)
        target = folder / f"{source.stem}.ipynb"
        papermill.execute_notebook(str(blank), str(target), parameters={"params": params, "overrides": overrides},
                                   cwd=str(root), kernel_name="python3", progress_bar=False)
        blank.unlink()
        executed.append(target)
    return executed


def build_book(params: str, overrides: list[str], root: Path = ROOT) -> Path:
    """Execute the chapters and build the HTML book into ``<system.outputs>/book/``; returns
    the built ``index.html``. The params are checked before any chapter runs."""
    params = str(Path(params).resolve())  # chapters run in `root`
    outputs = root / load_config(params, overrides).system.outputs
    notebooks = execute_chapters(params, overrides, outputs, root)
    source = outputs / "book" / "src"
    if source.exists():
        shutil.rmtree(source)
    (source / "book").mkdir(parents=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(root / name, source / name)
    shutil.copy(root / "book" / "index.md", source / "book" / "index.md")
    for notebook in notebooks:
        shutil.copy(notebook, source / "book" / notebook.name)
    build = outputs / "book" / "build"
    jupyter_book = Path(sys.executable).with_name("jupyter-book")  # the CLI installed beside this Python
    subprocess.run([str(jupyter_book), "build", str(source), "--path-output", str(build)],
                   check=True, stdout=subprocess.DEVNULL)
    html = outputs / "book" / "html"
    if html.exists():
        shutil.rmtree(html)
    shutil.copytree(build / "_build" / "html", html)
    return html / "index.html"
