"""What a chapter's kernel imports from the book: the checkout (`ROOT`, `project_root`) and
`chapter_config`, kept free of the build's imports (jupytext, nbformat, papermill).

    from isobook.book.kernel import chapter_config
    config = chapter_config(params, overrides, budget)   # a chapter's set-up cell
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from isobook.config import Config, load_config

ROOT = Path(__file__).resolve().parents[3]  # src/isobook/book/kernel.py -> the checkout


def project_root(start: Path | None = None) -> Path:
    """The repository a chapter belongs to: the first folder from `start` (the working
    directory) upwards holding ``_toc.yml`` and ``params/``; else this package's checkout."""
    start = (start or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        if (folder / "_toc.yml").is_file() and (folder / "params").is_dir():
            return folder
    return ROOT


def chapter_config(params: str, overrides: list[str], budget: int | None = None) -> Config:
    """A chapter's config: the params file, its overrides and, if given, `budget` as the
    sweep's rollouts per run (a larger budget extends the stored runs).

    Relative paths (the params file when not found from the working directory, and
    ``system.outputs``) are taken from `project_root`, so a chapter opened in JupyterLab,
    whose kernel starts in ``book/``, reads ``params/`` and writes ``outputs/`` of the
    repository, as papermill and ``isobook book`` do."""
    root = project_root()
    path = Path(params)
    if not path.is_absolute() and not path.exists():
        path = root / path
    config = load_config(path, [*overrides, *([f"sweep.budget={budget}"] if budget else [])])
    outputs = Path(config.system.outputs)
    return config if outputs.is_absolute() else replace(config, system=replace(config.system,
                                                                               outputs=str(root / outputs)))
