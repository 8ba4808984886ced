# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Putting it together: the joint sweep and the playbook
#
# Now all three of $B_p$, $n$ and $M$ are free (paper Figures 10-11): every
# grid point with $B_p n \le B_{max}$, one run each, on the easy set. The paper finds that
# $n^*(C)$ is still a rising sigmoid, that the $B_p$ on the frontier jumps around but
# matters little, and distils a workflow: choose $n$ from the sigmoid for the budget, set
# $B_p$ moderate, give $M$ the rest. We fit that rule, test it on a budget it never saw
# (fit on budgets up to $C/4$, predict at $C$), and end with the playbook in our numbers.
#
# **How the verdicts are decided.** As in chapters 02-03: runs compare problem by problem
# on the same validation problems, each read as the mean of its evaluations at half the
# budget and at it; one seed per run, so the 95% intervals hold evaluation noise and the
# seed-to-seed variance borrowed from chapter 02's two-seed grid. "$n^*(C)$ still rises" is
# decided as in chapter 02, by the every-$n$ advantage on the logit scale (within each $B_p$,
# every larger $n$ minus its smallest, averaged over $B_p$): its trend over $\log_2 C$ and
# its value at the budget. "$B_p$ matters little" and the
# planner's "loses nothing" are claims of no difference: they hold when the interval of
# the change (the mean change between runs that differ only in $B_p$; the best $n$'s lead
# over the planner's) stays within the margin of 0.03.

# %% tags=["parameters"]
params = "params/cpu.yaml"  # a preset from params/; the grid is its sweep section
# Overrides as on the command line: a list of "section.field=value" strings.
overrides = []
budget = None  # rollouts per run; None keeps the params file's sweep.budget

# %%
import warnings

import numpy as np
import pandas as pd
from IPython.display import display

from isobook.analysis.findings.claims import (
    matters_little,
    n_star_grows,
    planner_regret,
    scores_by_budget,
)
from isobook.analysis.findings.statistics import problem_scores, resolvable_difference
from isobook.analysis.findings.verdicts import headline
from isobook.analysis.frontier import analyse_frontier
from isobook.analysis.n_star import n_star_table, regime_text
from isobook.analysis.planner import ExtrapolationWarning, held_out_check, plan
from isobook.book.charts import curves_chart, frontier_chart, optimal_chart, use_offline_renderer
from isobook.book.designs import playbook_grid
from isobook.book.kernel import chapter_config
from isobook.book.pages import FindingsTable, design_note, note, runs_note, scale, table
from isobook.book.seeds import book_seed_variance
from isobook.grpo.evaluation import metric_name, power_of_two_budgets
from isobook.sets.build import prepare_sets
from isobook.sweeps import run_counts, run_sweep, sweep_configs, sweep_points

use_offline_renderer()
config = chapter_config(params, overrides, budget)
avg = metric_name("avg", config.evaluation)
set_name = config.sweep.sets[0]
grid = playbook_grid(config)  # every B_p and n on the sweep's first set
budgets = power_of_two_budgets(config.evaluation, config.sweep.budget)
largest_batch = max(run.train.batch_problems * run.train.rollouts_per_problem for run in sweep_configs(grid))

# %%
outcomes = run_sweep(grid, show_progress=False)
problems = prepare_sets(config).summary["sets"][set_name]["train"]  # D
points = sweep_points(grid)
counts = run_counts(sweep_configs(grid), "validation")
runs_note(outcomes)

# %% [markdown]
# ## Every (B_p, n) of the grid

# %%
ordered = points.sort_values(["batch_problems", "n", "rollouts"])  # legend entries in numeric order
curves_chart(ordered.assign(**{"B_p x n": ordered["batch_problems"].astype(str) + " x " + ordered["n"].astype(str)}),
             avg, color="B_p x n", title=f"{set_name}: every (B_p, n) of the grid")

# %% [markdown]
# ## The joint frontier: n* and B_p* along it

# %%
analysis = analyse_frontier(points, ["n", "batch_problems"], avg, config.sweep.budget)
frontier_chart(analysis.fits, analysis.fitted, avg, title=[f"{set_name}: joint frontier coloured by n*",
                                                           regime_text(budgets, problems, largest_batch)]) \
    if not analysis.fitted.empty else note("No curve could be fitted, so there is no frontier to draw.")

# %%
optimal_chart(analysis.fitted, analysis.n_star, title="log2 n* vs rollouts, sigmoid fit") if analysis.n_star \
    else note(analysis.why_no_fit)

# %% [markdown]
# The best $(B_p, n)$ at each power-of-two budget, each run read as the mean of its
# evaluations at half the budget and at it, with the $n$ within noise of the best (C/D:
# rollouts per training problem; updates: of the grid's largest batch):

# %%
seeds = book_seed_variance(config, avg)
optima = n_star_table(scores_by_budget(counts, ["batch_problems", "n"], avg, budgets), ["batch_problems", "n"], seeds,
                      problems, largest_batch)
table(optima[["rollouts", "C/D", "updates", "batch_problems", "n", "score", "within noise", "lead", "candidates"]],
      rename={"batch_problems": "B_p*", "n": "n*", "score": avg, "within noise": "n within noise",
              "lead": "lead over runner-up", "candidates": "runs compared"})

# %% [markdown]
# ## The planner and a budget it never saw
#
# At the grid's first $B_p$ (the one with the most $n$ values), fit $n^*$ on the frontier up
# to a quarter of the sweep's budget, predict $n$ at the budget, and compare that choice
# with the best $n$ there. The budget lies beyond the fitted range, so the planner caps $n$
# at the largest $n^*$ measured below it: a bet that $n^*$ saturates there.

# %%
batch_problems = config.sweep.batch_problems[0]
row_fits = {(n,): fit for (n, bp), fit in analysis.fits.items() if bp == batch_problems}
try:
    check = held_out_check(row_fits, config.sweep.budget)
    capped = (f" (the sigmoid asks for n = {check['sigmoid_n']:.0f}, capped at the largest n* measured)"
              if check["sigmoid_n"] != check["predicted_n"] else "")
    display(note(f"Fitted on budgets up to {config.sweep.budget // 4:,} rollouts, the planner predicts "
                 f"n = {check['predicted_n']:.0f}{capped} at {config.sweep.budget:,}; the fitted frontier's n* "
                 f"there is {check['measured_n']:.0f}."))
except ValueError as error:  # too few frontier points below C/4, or no curve reaching C
    check = None
    display(note(f"The planner cannot be checked on this grid: {error}."))

# %% [markdown]
# The plan for budgets around the sweep's. Those beyond the range $n^*$ was fitted on are
# marked, with $n$ capped at the largest $n^*$ the frontier measured.

# %%
n_values = sorted({n for n, _ in analysis.fits})
top = int(np.log2(config.sweep.budget))
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ExtrapolationWarning)  # the table's last column says it for each budget
    plans = pd.DataFrame([vars(plan(2**e, analysis.n_star, batch_problems, n_values,
                                    largest_measured_n=int(analysis.fitted["n"].max())))
                          for e in range(top - 3, top + 3) if 2**e >= batch_problems * max(n_values)]) \
        if analysis.n_star else None
table(plans.rename(columns={"budget": "budget (rollouts)", "batch_problems": "B_p", "steps": "M (updates)",
                            "extrapolated": "beyond the fit (n capped)"})) \
    if plans is not None else note("No sigmoid of n* to plan with: " + analysis.why_no_fit)

# %% [markdown]
# ## Findings at our scale

# %%
final = problem_scores(counts, ["batch_problems", "n"], avg, rollouts=config.sweep.budget)
row = counts[counts["batch_problems"] == batch_problems]
findings = [
    headline(n_star_grows(scores_by_budget(counts, ["batch_problems", "n"], avg, budgets),
                          f"{set_name}: with B_p, n and M all free, n*(C) still rises (Fig. 10)", seeds)),
    matters_little(final, f"{set_name}: at fixed n, B_p matters little (Fig. 11)", avg, seeds),
    headline(planner_regret(problem_scores(row, ["n"], avg, rollouts=config.sweep.budget),
                            int(check["predicted_n"]) if check else None,
                            f"the planner, fitted on budgets up to C/4, loses nothing against the best n at C = "
                            f"{config.sweep.budget:,} (B_p = {batch_problems})", avg, seeds)),
]
display(design_note(f"one seed per run (seed {config.sweep.seeds[0]})", resolvable_difference(final, seeds), seeds))
FindingsTable(findings, "06_playbook", scale(config))

# %% [markdown]
# ## The playbook in our numbers
#
# The paper's workflow, each rule beside what this book measured at its scale (the
# findings above, and chapters 02-03 for each set).

# %%
last = optima.iloc[-1] if not optima.empty else None
table(pd.DataFrame([
    {"rule": "Count compute in rollouts, C = B_p n M; one run per (B_p, n) gives every budget on its curve.",
     "in our numbers": f"{len(outcomes)} runs of {config.sweep.budget:,} rollouts cover budgets "
                       f"{budgets[0]:,} to {budgets[-1]:,}"},
    {"rule": "Choose n from the fitted sigmoid of n*(C) at your budget; it grows with C and saturates.",
     "in our numbers": (f"n* = {last['n']} at {last['rollouts']:,} rollouts, n within noise "
                        f"{{{', '.join(str(v) for v in last['within noise'])}}}; " if last is not None else "")
                       + f"n*(C): {findings[0].verdict}"},
    {"rule": "Set B_p moderate: it matters less than n.",
     "in our numbers": f"{findings[1].measured} ({findings[1].verdict})"},
    {"rule": "Give M, the number of updates, the rest of the budget.",
     "in our numbers": (f"M = C / (B_p n) = {config.sweep.budget:,} / ({last['batch_problems']} x {last['n']}) = "
                        f"{config.sweep.budget // (int(last['batch_problems']) * int(last['n'])):,} updates"
                        if last is not None else "-")},
]))
