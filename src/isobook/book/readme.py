"""The README's findings, generated from a built book, never copied by hand.

    isobook readme outputs/book

writes the build's findings (`findings_file`) to ``book/findings.json`` and the README's
findings block (between `START` and `END`) from it: the counts, LLM and bandit rows apart,
the primary claims first with their design and their verdicts under Holm's control, then
the other headline findings (those the chapters mark with `verdicts.headline`), exploratory.
`tests/test_readme.py` checks that the README's block is what `render` makes of
``book/findings.json``; `isobook compare outputs/book book/findings.json` sets a build of
one's own beside it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from isobook.analysis.findings.multiplicity import METHOD, changed
from isobook.analysis.findings.verdicts import BANDIT, LLM
from isobook.book.findings_file import read_findings
from isobook.book.pages import holm_cell, tally
from isobook.store.errors import StoreError

START = "<!-- findings: written by `isobook readme` from book/findings.json; do not edit by hand -->"
END = "<!-- end of findings -->"


def snapshot(book: Path) -> dict[str, Any]:
    """The findings of the book built in `book`, as ``book/findings.json`` keeps them."""
    return {"book": read_findings(book)}


def _interval(row: dict[str, Any]) -> str:
    if "deciding" not in row:
        return "-"
    estimate, low, high = row["deciding"]
    return f"{estimate:+.3f} [{low:+.3f}, {high:+.3f}]"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("*", "\\*")


def _seeds(row: dict[str, Any]) -> str:
    """The training seeds a headline row stands on: a primary's confirmatory seeds, else the
    count its interval states (``95% over 2 seeds x ...``)."""
    count = (row.get("power") or {}).get("seeds")
    if count is not None and count == count:
        return f"{count:.0f} confirmatory"
    found = row["uncertainty"].rsplit("95% over ", 1)
    return found[1].split(" seed")[0] if len(found) == 2 else "-"


def render(findings: dict[str, Any]) -> str:
    """The README's findings block (Markdown, without the markers) from a `snapshot`."""
    rows = findings["book"]
    llm = [row for row in rows if row.get("family", LLM) == LLM]
    bandit = [row for row in rows if row.get("family", LLM) == BANDIT]
    primaries = [row for row in rows if row.get("primary") is not None]
    moved = changed(rows)
    scale = next((row["scale"] for row in rows if row["chapter"].startswith("02")), rows[0]["scale"] if rows else "")
    if primaries:
        family = (f"{METHOD.capitalize()}'s procedure over the {len(primaries)} primary findings, named before any "
                  "run and decided on seeds that chose no learning rate, holds the chance of any wrongly resolved "
                  f"primary verdict at 5% and {f'turns {len(moved)} into unresolved' if moved else 'changes none'}; "
                  "every other row is exploratory: its verdict stands on its own 95% interval.")
    else:
        family = ("No claim of this build is primary, so every row is exploratory: its verdict stands on its own 95% "
                  "interval.")
    lines = [f"The default book (`params/cpu.yaml`, {scale}) has {len(rows)} findings. On the LLM, {len(llm)}: "
             f"{tally(llm)}. On the bandits, {len(bandit)}: {tally(bandit)}. {family}", "",
             "| claim | chapter | seeds | our numbers | verdict | under Holm (primaries) | deciding contrast (95%) |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    shown = primaries + [row for row in rows if row.get("headline") and row.get("primary") is None]
    for row in shown:
        lines.append(f"| {_cell(row['claim'])} | {row['chapter'][:2]} | {_seeds(row)} | {_cell(row['measured'])} | "
                     f"**{row['verdict']}** | {holm_cell(row)} | {_interval(row)} |")
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
