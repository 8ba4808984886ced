"""The seed-to-seed variance the book's intervals use (`statistics.SeedVariance`): measured
on chapter 02's grid (B_p = the sweep's first, every n, every set of the sweep, two or more
seeds), the design every chapter shares, and pooled with a chapter's own multi-seed arms.

    from isobook.book.seeds import book_seed_variance
    seeds = book_seed_variance(config, avg)          # trains chapter 02's grid if not stored

A one-seed contrast borrows it; a multi-seed one moderates its own seed variance by it
(`analysis.findings.seed_variance`). The runs are those of chapter 02, whichever chapter
asks first, so every chapter reads one value.
"""

from __future__ import annotations

from dataclasses import replace

from isobook.analysis.findings.claims import scores_by_budget
from isobook.analysis.findings.statistics import SeedVariance, combined_seed_variance, grid_seed_variance
from isobook.config import Config
from isobook.grpo.evaluation import power_of_two_budgets
from isobook.sweeps import run_configs, run_counts, sweep_configs
from isobook.tasks.metrics import Metric


def reference_grid(config: Config) -> Config:
    """Chapter 02's grid: the sweep at its first B_p, on at least two seeds (the sweep's, or
    its first and the next)."""
    s = config.sweep
    seeds = s.seeds if len(s.seeds) >= 2 else (s.seeds[0], s.seeds[0] + 1)
    return replace(config, sweep=replace(s, batch_problems=(s.batch_problems[0],), seeds=seeds))


def book_seed_variance(config: Config, metric: Metric, *own: SeedVariance | None,
                       show_progress: bool = False) -> SeedVariance | None:
    """The ratio pooled over chapter 02's grid at every power-of-two budget (each set's
    neighbouring n), with `own` (a chapter's other multi-seed designs) added by their
    degrees of freedom. Trains the grid's runs that are not stored."""
    grid = reference_grid(config)
    runs = sweep_configs(grid)
    run_configs(runs, grid, show_progress=show_progress)
    counts = run_counts(runs, "validation")
    budgets = power_of_two_budgets(config.evaluation, config.sweep.budget)
    s = grid.sweep
    source = (f"chapter 02's grid: B_p = {s.batch_problems[0]}, n = {', '.join(map(str, s.rollouts_per_problem))} "
              f"on {' and '.join(s.sets)}, seeds {', '.join(map(str, s.seeds))}")
    parts = [grid_seed_variance(scores_by_budget(counts[counts["set"] == name], ["n"], metric, budgets), source)
             for name in s.sets] if not counts.empty else []
    extra = [p for p in own if p is not None]
    return combined_seed_variance([*parts, *extra], source + (" and this chapter's multi-seed arms" if extra else ""))
