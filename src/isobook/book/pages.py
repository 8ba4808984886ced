"""What a chapter shows a reader: rounded tables, notes, and the findings table.

    from isobook.book.pages import FindingsTable, note, table
    table(frontier_points, rename={"n": "n*"})             # index hidden, rollouts as integers
    note("n* = 4 at every budget: there is no rise to fit.")  # a sentence where a chart cannot be
    FindingsTable(findings, chapter, scale(config))  # verdicts coloured; `chapter` its file name

Tables show scores with three decimals and counts (rollouts, n, B_p, updates) as
integers with thousands separators, without the index column. `FindingsTable` also
carries its rows as output metadata (key ``isobook``), from which `isobook.book.build` builds
the landing page's table of every finding of the executed chapters.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from IPython.display import Markdown
from pandas.io.formats.style import Styler

from isobook.analysis.findings.multiplicity import METHOD, changed, controlled
from isobook.analysis.findings.seed_variance import SPREAD, SeedVariance
from isobook.analysis.findings.verdicts import BANDIT, LLM, SCORE_MARGIN, SHARE_MARGIN, Finding, Verdict
from isobook.config import Config

# Background and text colour of each verdict (green, light green, amber, violet, blue, grey, red, light grey).
VERDICT_COLOURS = {
    Verdict.REPRODUCED: ("#d4edda", "#155724"),
    Verdict.NOT_REACHED: ("#e8f4d9", "#3d5a1e"),
    Verdict.PARTLY: ("#fff3cd", "#856404"),
    Verdict.MIXED: ("#ece2f5", "#4a2a6a"),
    Verdict.EQUIVALENT: ("#d1ecf1", "#0c5460"),
    Verdict.UNRESOLVED: ("#e2e3e5", "#383d41"),
    Verdict.NOT_REPRODUCED: ("#f8d7da", "#721c24"),
    Verdict.NOT_MEASURED: ("#f3f3f3", "#6c757d"),
}
METADATA_KEY = "isobook"
CELL_PADDING = "padding: 0.2em 0.7em; vertical-align: top"


COUNT_COLUMNS = ("rollouts", "updates", "tokens", "steps", "budget")  # float columns that hold counts


def table(frame: pd.DataFrame, rename: dict[str, str] | None = None, digits: int = 3) -> Styler:
    """`frame` for reading: no index, integer columns and counts (`COUNT_COLUMNS`) as
    integers (``4,096``), other numbers (scores) rounded to `digits` decimals, sets of
    values as ``{4, 8}``, column names as given in `rename`."""
    formats: dict[str, Any] = {}
    for column in frame.columns:
        values = frame[column]
        if pd.api.types.is_bool_dtype(values):
            continue
        if not pd.api.types.is_numeric_dtype(values):
            formats[column] = _plain
        elif pd.api.types.is_integer_dtype(values) or column in COUNT_COLUMNS:
            formats[column] = "{:,.0f}"
        else:
            formats[column] = f"{{:.{digits}f}}"
    named = {(rename or {}).get(column, column): shown for column, shown in formats.items()}
    return (frame.reset_index(drop=True).rename(columns=rename or {}).style.hide(axis="index")
            .format(named, na_rep="-").set_table_styles([{"selector": "td, th", "props": CELL_PADDING}]))


def _plain(value: Any) -> str:
    if isinstance(value, (tuple, list, set)):
        return "{" + ", ".join(f"{v:g}" if isinstance(v, (int, float)) else str(v) for v in value) + "}"
    return "-" if value is None else str(value)


def runs_note(outcomes: pd.DataFrame) -> Markdown:
    """How a chapter's runs ended, in a sentence: all finished, or which did not and why;
    and finished runs of an older store that kept no per-problem counts (their verdicts
    say "not measured" until they are retrained)."""
    failed = outcomes[outcomes["status"] != "finished"]
    finished = outcomes[outcomes["status"] == "finished"]
    uncounted = [Path(folder).name for folder in finished["folder"]
                 if not (Path(folder) / "validation.parquet").is_file()]
    text = (f"All {len(outcomes)} runs finished (from the run store, or trained now)." if failed.empty else
            f"{len(finished)} of {len(outcomes)} runs finished; not finished: "
            + "; ".join(f"{row.set} B_p = {row.batch_problems}, n = {row.n}: {row.status} ({row.reason})"
                        for row in failed.itertuples()) + ".")
    if uncounted:
        text += (f" {len(uncounted)} finished runs come from an older store without per-problem counts "
                 f"(validation.parquet), so no verdict uses them; delete them to retrain: {', '.join(uncounted)}.")
    return note(text)


def note(text: str) -> Markdown:
    """A sentence shown in place of a chart or a fit that cannot be drawn (in italics;
    Markdown's emphasis characters in it, as in ``n*``, are escaped)."""
    escaped = text.replace("\\", "\\\\").replace("*", "\\*").replace("_", "\\_")
    return Markdown(f"*{escaped}*")


def scale(config: Config, budget: int | None = None) -> str:
    """The scale a chapter measured at, in words: budget per run and validation (each
    finding's interval states the seeds it stands on)."""
    ev = config.evaluation
    return f"{budget or config.sweep.budget:,} rollouts per run; {ev.validation_problems} validation problems x " \
        f"{ev.samples} samples"


def design_note(seeds_used: str, resolvable: float, seeds: SeedVariance | None) -> Markdown:
    """What a chapter's design can resolve, in a sentence above its findings: the seeds it
    trained, the smallest difference of two candidates its intervals resolve (half-width of
    a 95% interval), the seed variance they hold, and what equivalent and unresolved mean."""
    variance = (f"Each interval holds its contrast's own seed variance moderated by the {seeds}, the pool given "
                f"no more weight than keeps a contrast {SPREAD:g} times as variable as it covered (a one-seed "
                "contrast borrows the pool alone, on those few degrees of freedom)."
                if seeds is not None else "No seed variance was measured (no design with two seeds finished): "
                "every interval holds evaluation noise only.")
    resolved = f"a difference of two candidates is resolved from about {resolvable:.3f}" if resolvable == resolvable \
        else "no two candidates finished"
    return Markdown(f"**Design.** {seeds_used[:1].upper()}{seeds_used[1:]}; {resolved} (the half-width of its 95% "
                    f"interval). {variance} *Equivalent*: the interval lies within ±{SCORE_MARGIN:g} of zero "
                    f"(±{SHARE_MARGIN:g} for shares of problems), so whatever the difference is, it is smaller than "
                    "that; *unresolved*: the interval holds zero and reaches past that margin, so a difference as "
                    "large as its half-width may be there.")


def verdict_style(verdict: str) -> str:
    """Inline CSS colouring a verdict cell (a verdict of one or two words kept on one line)."""
    background, colour = VERDICT_COLOURS[Verdict(verdict)]
    wrap = "; white-space: nowrap" if len(verdict.split()) <= 2 else ""
    return f"background-color: {background}; color: {colour}; font-weight: 600{wrap}"


class FindingsTable:
    """A chapter's findings as a table with coloured verdicts, carrying its rows (with the
    chapter and the scale) as output metadata for the landing page."""

    def __init__(self, findings: Sequence[Finding], chapter: str, scale_text: str):
        self.findings, self.chapter, self.scale = list(findings), chapter, scale_text

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame([f.row() for f in self.findings], columns=["claim", "measured", "verdict", "uncertainty"])

    def styled(self) -> Styler:
        return (self.frame().style.hide(axis="index").map(verdict_style, subset=["verdict"])
                .set_caption(f"Measured at {html.escape(self.scale)}. The uncertainty column gives the "
                             "contrast that decided each verdict, with its 95% interval over validation "
                             "problems and training seeds (the seed variance as the row states).")
                .set_table_styles([{"selector": "td, th", "props": f"{CELL_PADDING}; text-align: left"},
                                   {"selector": "caption", "props": "caption-side: bottom; text-align: left"}]))

    def metadata(self) -> dict[str, Any]:
        return {METADATA_KEY: {"chapter": self.chapter, "scale": self.scale,
                               "findings": [f.row() for f in self.findings]}}

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> tuple[dict[str, str], dict[str, Any]]:
        data = {"text/html": self.styled().to_html(), "text/plain": self.frame().to_string(index=False)}
        return data, self.metadata()


def findings_of_notebook(notebook: dict[str, Any]) -> list[dict[str, Any]]:
    """The `FindingsTable` metadata blocks of an executed notebook (nbformat JSON)."""
    blocks = []
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []):
            block = output.get("metadata", {}).get(METADATA_KEY)
            if block:
                blocks.append(block)
    return blocks


def landing_table(blocks: Sequence[dict[str, Any]], titles: dict[str, str]) -> str:
    """The landing page's HTML table: every finding of every chapter under a row naming
    the chapter (a link) and the scale it measured at, verdicts coloured, each LLM
    primary's verdict under Holm's control beside it and every other row marked
    exploratory (`holm_cell`); then the tallies, LLM and bandit rows apart, and the
    verdicts Holm's procedure changes.
    `titles`: chapter file name (no suffix) -> its title."""
    cell = f'style="{CELL_PADDING}"'
    rows = []
    every = iter(controlled([finding for block in blocks for finding in block["findings"]]))
    measured = []
    for block in blocks:
        chapter = block["chapter"]
        rows.append(f'<tr><td colspan="5" {cell}><a href="{chapter}.html"><strong>'
                    f"{html.escape(titles.get(chapter, chapter))}</strong></a> <small>(measured at "
                    f"{html.escape(block['scale'])})</small></td></tr>")
        for finding in block["findings"]:
            under = next(every)
            measured.append(under)
            shown = holm_cell(under)
            style = verdict_style(shown) if shown in set(Verdict) else ""
            rows.append(f"<tr><td {cell}>{html.escape(finding['claim'])}</td><td {cell}>"
                        f"{html.escape(finding['measured'])}</td><td style=\"{CELL_PADDING}; "
                        f"{verdict_style(finding['verdict'])}\">{html.escape(finding['verdict'])}</td>"
                        f"<td style=\"{CELL_PADDING}; {style}\">{html.escape(shown)}</td>"
                        f"<td {cell}><small>{html.escape(finding['uncertainty'])}</small></td></tr>")
    return (f'<table class="isobook-findings" style="font-size: 0.9em">\n<thead><tr><th {cell}>the paper\'s claim'
            f"</th><th {cell}>our numbers</th><th {cell}>verdict</th><th {cell}>under Holm (primaries)</th>"
            f"<th {cell}>what "
            "decided it (95% intervals)</th></tr></thead>\n<tbody>\n" + "\n".join(rows)
            + "\n</tbody>\n</table>\n\n" + tally_text(measured) + "\n")


def holm_cell(row: dict[str, Any]) -> str:
    """What a `multiplicity.controlled` row reads under Holm's procedure: a primary's verdict
    there (its own where Holm leaves it, ``unresolved`` where it does not hold; an
    unresolved primary stays unresolved, which confirms nothing), ``exploratory`` for every
    other row (outside the family), ``-`` for a primary decided without a test."""
    if row.get("primary") is None:
        return "exploratory"
    return "-" if row.get("holm p") is None else row["holm verdict"]


def tally(rows: Sequence[dict[str, Any]], column: str = "verdict") -> str:
    """``3 reproduced, 2 equivalent, ...`` of `rows` by `column`, in the verdicts' order."""
    counts = pd.Series([row[column] for row in rows], dtype=object).value_counts()
    return ", ".join(f"{counts[v]} {v}" for v in Verdict if v in counts) or "none"


def tally_text(rows: Sequence[dict[str, Any]]) -> str:
    """The findings counted, LLM and bandit rows apart, and the primaries under Holm's
    procedure (`rows`: `multiplicity.controlled` rows of a whole build)."""
    llm = [row for row in rows if row.get("family", LLM) == LLM]
    bandit = [row for row in rows if row.get("family", LLM) == BANDIT]
    primaries = [row for row in rows if row.get("primary") is not None]
    moved = changed(rows)
    listed = "; ".join(f"{row['claim']} ({row['verdict']})" for row in moved)
    if primaries:
        family = (f"Holm's procedure over the {len(primaries)} primary finding{'s' if len(primaries) != 1 else ''} "
                  f"keeps the chance of any wrongly resolved primary verdict at 5%; under it they read: "
                  f"{tally(primaries, 'holm verdict')}"
                  + (f". It turns {len(moved)} into unresolved: {listed}." if moved else "."))
    else:
        family = "No finding is primary in this build, so no verdict is under Holm's control."
    return (f"{len(rows)} findings. On the LLM, {len(llm)}: {tally(llm)}. On the bandits, {len(bandit)}: "
            f"{tally(bandit)}. {family} Every other finding is exploratory: it stands on its own 95% interval.")


def _primary_row(key: str, text: str, row: dict[str, Any]) -> str:
    """One decided primary on the landing page (`primaries_table`)."""
    cell = f'style="{CELL_PADDING}"'
    design = row.get("power") or {}

    def shown(name: str, form: str) -> str:
        value = design.get(name)
        return "-" if value is None or value != value else format(value, form)

    interval = "-" if "deciding" not in row else "{:+.3f} [{:+.3f}, {:+.3f}]".format(*row["deciding"])
    under = holm_cell(row)
    return (f"<tr><td {cell}><strong>{html.escape(key)}</strong>: {html.escape(text)}</td>"
            f"<td {cell}>{shown('effect', 'g')} {html.escape(str(design.get('unit', '')))}</td>"
            f"<td {cell}>{shown('seeds', '.0f')} x {shown('problems', '.0f')}</td>"
            f"<td {cell}>{shown('design power', '.2f')} / {shown('achieved power', '.2f')}</td>"
            f"<td style=\"{CELL_PADDING}; {verdict_style(row['verdict'])}\">{html.escape(row['verdict'])}</td>"
            f"<td style=\"{CELL_PADDING}; {verdict_style(under) if under in set(Verdict) else ''}\">"
            f"{html.escape(under)}</td><td {cell}><small>{html.escape(interval)}</small></td></tr>")


def primaries_table(claims: dict[str, str], rows: Sequence[dict[str, Any]]) -> str:
    """The landing page's primaries, named before any result: each pre-registered claim
    (`claims`: key -> what it decides, in ``primaries.claims``'s order), the design that
    decides it (smallest effect worth knowing, confirmatory seeds, problems, the power the
    design was sized for and the power it had on this build's own variances), its verdict
    and its verdict under Holm's procedure over the primaries. `rows`:
    `multiplicity.controlled` rows; a claim no executed chapter decided reads "not run"."""
    cell = f'style="{CELL_PADDING}"'
    lines = []
    for key, text in claims.items():
        decided = [row for row in rows if row.get("primary") == key]  # one per set a claim covers
        if not decided:
            lines.append(f"<tr><td {cell}><strong>{html.escape(key)}</strong>: {html.escape(text)}</td>"
                         f'<td colspan="6" {cell}>not run in this build</td></tr>')
        for row in decided:
            lines.append(_primary_row(key, text if len(decided) == 1 else row["claim"], row))
    return (f'<table class="isobook-primaries" style="font-size: 0.9em">\n<thead><tr><th {cell}>primary claim</th>'
            f"<th {cell}>smallest effect worth knowing</th><th {cell}>confirmatory seeds x problems</th>"
            f"<th {cell}>power: design / achieved</th><th {cell}>verdict</th><th {cell}>under Holm (primaries)"
            f"</th><th {cell}>deciding contrast (95%)</th></tr></thead>\n<tbody>\n" + "\n".join(lines)
            + "\n</tbody>\n</table>\n")
