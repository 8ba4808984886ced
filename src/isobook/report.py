"""Console rendering of summaries (rich tables)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from rich.console import Console
from rich.table import Table

from isobook.tasks.metrics import Metric

if TYPE_CHECKING:
    from isobook.grpo.run import RunResult


def print_sets_summary(summary: dict[str, Any], console: Console | None = None) -> None:
    """The set sizes, the avg@k histogram (paper Figure 2) and the headline checks."""
    console = console or Console()
    console.print(f"base model: {summary['base_model']} ({summary['parameters']:,} parameters)")
    sets = Table(title=f"Problem sets ({summary['pool_size']} pool problems, avg@{summary['samples']})")
    for column in ("set", "train", "validation"):
        sets.add_column(column, justify="left" if column == "set" else "right")
    for name, counts in summary["sets"].items():
        sets.add_row(name, str(counts["train"]), str(counts["validation"]))
    console.print(sets)
    hist = summary["histogram"]
    most = max(hist["problems"]) or 1
    chart = Table(title=f"avg@{summary['samples']} under the base model")
    for column in ("avg", "problems", ""):
        chart.add_column(column, justify="right" if column else "left")
    for correct, problems in zip(hist["correct"], hist["problems"]):
        chart.add_row(f"{correct / summary['samples']:.4f}", str(problems), "#" * round(40 * problems / most))
    console.print(chart)
    stability = summary["stability"]
    if stability.get("problems"):
        console.print(f"stability: Pearson r = {stability['pearson']} between the final model and "
                      f"{stability['checkpoint']} over {stability['problems']} problems")
    console.print(f"hard problems with pass@{summary['samples']} > 0: {summary['hard_pass_at_k_positive']}")
    console.print(f"seconds: {summary['seconds']}; rollouts: {summary['rollouts']}")


def print_run_summary(run: RunResult, k: int, console: Console | None = None) -> None:
    """The run's evaluation points: validation avg/best/worst@k against rollouts spent."""
    console = console or Console()
    scores = [Metric(kind, k) for kind in Metric.KINDS]
    columns = ["step", "rollouts", *scores]
    evaluated = run.metrics.dropna(subset=scores[:1])[columns]
    table = Table(title=f"{run.folder.name}: validation over training")
    for column in columns:
        table.add_column(column, justify="right")
    for row in evaluated.itertuples(index=False):
        table.add_row(str(int(row[0])), f"{int(row[1]):,}", *(f"{v:.3f}" for v in row[2:]))
    console.print(table)
    if run.reason:
        console.print(f"[red]stopped: {run.reason}[/red]")


def print_sweep_summary(outcomes: pd.DataFrame, console: Console | None = None) -> None:
    """One line per run of a sweep: its grid point, status and, if it did not finish, why."""
    console = console or Console()
    table = Table(title=f"Sweep: {len(outcomes)} runs")
    for column in ("set", "B_p", "n", "seed", "status", "run"):
        table.add_column(column, justify="right" if column in ("B_p", "n", "seed") else "left")
    for row in outcomes.itertuples(index=False):
        detail = Path(row.folder).name if row.status == "finished" else f"{Path(row.folder).name}: {row.reason}"
        table.add_row(row.set, str(row.batch_problems), str(row.n), str(row.seed), row.status, detail)
    console.print(table)
