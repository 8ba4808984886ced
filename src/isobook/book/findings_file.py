"""A built book's findings as one file: ``<book>/findings.json``, every finding of every
executed chapter with its chapter, scale, family, p-value and its verdict under Holm's
control (`analysis.findings.multiplicity`). `isobook book` writes it; `isobook compare`
and `isobook readme` read the findings from it.

    rows = read_findings(Path("outputs/book"))
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from isobook.analysis.findings.multiplicity import controlled
from isobook.book.pages import findings_of_notebook
from isobook.store.atomic import atomic_write_text
from isobook.store.errors import StoreError

FILE = "findings.json"


def findings_rows(notebooks: Sequence[Path]) -> list[dict[str, Any]]:
    """Every finding of the executed `notebooks`, in their order, as `Finding.row` dicts
    with ``chapter`` and ``scale``, controlled over the whole build (`multiplicity.controlled`)."""
    rows = []
    for notebook in notebooks:
        for block in findings_of_notebook(json.loads(notebook.read_text())):
            rows.extend({"chapter": block["chapter"], "scale": block["scale"], **finding}
                        for finding in block["findings"])
    return controlled(rows)


def write_findings(book: Path, notebooks: Sequence[Path]) -> Path:
    """``<book>/findings.json`` from the executed `notebooks` (`findings_rows`)."""
    path = book / FILE
    atomic_write_text(json.dumps(findings_rows(notebooks), indent=1), path)
    return path


def read_findings(book: Path) -> list[dict[str, Any]]:
    """The findings of the book built in `book`: its ``findings.json``, or, for a book built
    before it was written, its executed chapters (``notebooks/*.ipynb``). `book` may also
    name a findings file itself: a build's, or the README's snapshot (``book/findings.json``,
    ``{"book": rows}``)."""
    path = book if book.is_file() else book / FILE
    if path.is_file():
        found = json.loads(path.read_text())
        if isinstance(found, dict) and isinstance(found.get("book"), list):
            return found["book"]
        if not isinstance(found, list):
            raise StoreError(f"{path}: neither a build's findings (a list of rows) nor the README's snapshot; "
                             "allowed: a findings.json that `isobook book` or `isobook readme` wrote")
        return found
    notebooks = sorted((book / "notebooks").glob("*.ipynb"))
    if not notebooks:
        raise StoreError(f"{book}: no executed chapters in {book / 'notebooks'}; allowed: a book folder that "
                         "`isobook book` built (system.outputs/book.folder)")
    return findings_rows(notebooks)
