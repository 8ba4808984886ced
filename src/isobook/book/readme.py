"""The README's findings, generated from built books, never copied by hand.

    isobook readme outputs/book --replicate outputs/book-replicate

writes the two builds' findings (`findings_file`) to ``book/findings.json`` and the
README's findings block (between `START` and `END`) from it: the counts, LLM and bandit
rows apart, the verdicts under Holm's control, the headline findings (those the chapters
mark with `verdicts.headline`) and the replicate's agreement. `tests/test_readme.py` checks
that the README's block is what `render` makes of ``book/findings.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from isobook.analysis.findings.multiplicity import METHOD, changed
from isobook.analysis.findings.verdicts import BANDIT, LLM
from isobook.book.compare import compare_findings, summary
from isobook.book.findings_file import read_findings
from isobook.book.kernel import ROOT
from isobook.book.pages import holm_cell, tally
from isobook.store.errors import StoreError

START = "<!-- findings: written by `isobook readme` from book/findings.json; do not edit by hand -->"
END = "<!-- end of findings -->"
SNAPSHOT = ROOT / "book" / "findings.json"


def snapshot(book: Path, replicate: Path | None = None) -> dict[str, Any]:
    """The findings of the book built in `book` and, where given, of its `replicate`."""
    return {"book": read_findings(book), "replicate": read_findings(replicate) if replicate else None}


def _interval(row: dict[str, Any]) -> str:
    if "deciding" not in row:
        return "-"
    estimate, low, high = row["deciding"]
    return f"{estimate:+.3f} [{low:+.3f}, {high:+.3f}]"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("*", "\\*")


def render(findings: dict[str, Any]) -> str:
    """The README's findings block (Markdown, without the markers) from a `snapshot`."""
    rows = findings["book"]
    llm = [row for row in rows if row.get("family", LLM) == LLM]
    bandit = [row for row in rows if row.get("family", LLM) == BANDIT]
    tested = [row for row in llm if row.get("holm p") is not None]
    moved = changed(rows)
    scale = next((row["scale"] for row in rows if row["chapter"].startswith("02")), rows[0]["scale"] if rows else "")
    lines = [f"The default book (`params/cpu.yaml`, {scale}) has {len(rows)} findings. On the LLM, {len(llm)}: "
             f"{tally(llm)}. On the bandits, {len(bandit)}: {tally(bandit)}. Each verdict stands on its own 95% "
             f"interval; over the {len(tested)} LLM findings decided by a test, {METHOD.capitalize()}'s procedure "
             "(the chance of any wrongly resolved verdict held at 5%) "
             + (f"turns {len(moved)} into unresolved." if moved else "changes none."), "",
             "| claim | chapter | our numbers | verdict | under Holm | deciding contrast (95%) |",
             "| --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        if row.get("headline"):
            lines.append(f"| {_cell(row['claim'])} | {row['chapter'][:2]} | {_cell(row['measured'])} | "
                         f"**{row['verdict']}** | {holm_cell(row)} | {_interval(row)} |")
    if findings.get("replicate"):
        comparison = compare_findings(rows, findings["replicate"])
        lines += ["", "Rebuilt as an independent replicate (`params/replicate.yaml`: every training seed and the "
                  "bandits' draws shifted, the same base models and sets): "
                  + "; ".join(summary(comparison).splitlines()) + "."]
    return "\n".join(lines)


def block(readme_text: str) -> str:
    """The findings block of a README's text, without its markers ('' where there is none)."""
    if START not in readme_text or END not in readme_text:
        return ""
    return readme_text.split(START, 1)[1].split(END, 1)[0].strip("\n")


def write(readme: Path, findings: dict[str, Any]) -> None:
    """`findings` to ``book/findings.json`` beside `readme`, and its `render` into
    `readme`'s block."""
    text = readme.read_text() if readme.is_file() else ""
    if START not in text or END not in text:
        raise StoreError(f"{readme}: no findings block to write; allowed: a README with the lines {START} and {END}")
    folder = readme.resolve().parent / "book"
    if not folder.is_dir():
        raise StoreError(f"{folder}: no such folder for findings.json; allowed: a README beside isobook's book/ folder")
    (folder / "findings.json").write_text(json.dumps(findings, indent=1) + "\n")
    before, rest = text.split(START, 1)
    readme.write_text(f"{before}{START}\n{render(findings)}\n{END}{rest.split(END, 1)[1]}")
