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
import tarfile
import tempfile
from pathlib import Path

import jupytext
import papermill
import yaml
from tqdm import tqdm

from isobook.config import Config, load_config

ROOT = Path(__file__).resolve().parents[2]
MATHJAX_VERSION = "3.2.2"
# What tex-mml-chtml needs offline: the script, its fonts, and the parts it loads lazily.
MATHJAX_PARTS = ("tex-mml-chtml.js", "input", "output/chtml/fonts", "a11y", "ui")


def chapter_config(params: str, overrides: list[str], budget: int | None = None) -> Config:
    """A chapter's config: the params file, its overrides and, if given, `budget` as the
    sweep's rollouts per run (a larger budget extends the stored runs)."""
    return load_config(params, [*overrides, *([f"sweep.budget={budget}"] if budget else [])])


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
    shutil.copy(root / "_toc.yml", source / "_toc.yml")
    book_config = yaml.safe_load((root / "_config.yml").read_text())
    mathjax = vendor_mathjax(outputs / "book" / "vendor")
    if mathjax is not None:
        # Copied beside the pages, not into _static (Jupyter Book adds a script tag for every
        # .js file there); the path below is taken relative to _static.
        shutil.copytree(mathjax, source / "_extra" / "mathjax")
        sphinx = book_config.setdefault("sphinx", {}).setdefault("config", {})
        sphinx.update({"html_extra_path": ["_extra"], "mathjax_path": "../mathjax/tex-mml-chtml.js"})
    (source / "_config.yml").write_text(yaml.safe_dump(book_config, sort_keys=False))
    shutil.copy(root / "book" / "index.md", source / "book" / "index.md")
    for notebook in notebooks:
        shutil.copy(notebook, source / "book" / notebook.name)
    build = outputs / "book" / "build"
    if build.exists():  # Sphinx keeps files a source no longer has; build afresh
        shutil.rmtree(build)
    jupyter_book = Path(sys.executable).with_name("jupyter-book")  # the CLI installed beside this Python
    subprocess.run([str(jupyter_book), "build", str(source), "--path-output", str(build)],
                   check=True, stdout=subprocess.DEVNULL)
    html = outputs / "book" / "html"
    if html.exists():
        shutil.rmtree(html)
    shutil.copytree(build / "_build" / "html", html)
    return html / "index.html"
