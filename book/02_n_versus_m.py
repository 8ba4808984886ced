# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # n versus M at a fixed number of problems per batch
#
# Fix $B_p$. A budget $C$ then buys either many rollouts per problem ($n$) or many
# updates ($M = C / (B_p n)$). The paper (Figures 5-7) finds that the compute-optimal
# $n^*(C)$ grows with $C$ as a sigmoid in log-log and saturates: small $n$ rises fast and
# plateaus, large $n$ keeps improving. We run one GRPO run per $n$, each to the sweep's
# budget (one run yields its whole reward-versus-compute curve), keep each curve's
# record-breaking points, fit a monotone sigmoid per $n$, and take the upper envelope.

# %% tags=["parameters"]
params = "params/cpu.yaml"  # a preset from params/; the grid is its sweep section
# Overrides as on the command line: a list of "section.field=value" strings.
overrides = []
budget = None  # rollouts per run; None keeps the params file's sweep.budget
metric = "val_avg@4"

# %%
from dataclasses import replace

import numpy as np
import pandas as pd

from isobook.book import chapter_config
from isobook.charts import curves_chart, frontier_chart, optimal_chart, panels, use_offline_renderer
from isobook.frontier import fit_curves, fit_optimal, frontier, measured_frontier
from isobook.sweeps import run_sweep, sweep_points

use_offline_renderer()
config = chapter_config(params, overrides, budget)
batch_problems = config.sweep.batch_problems[0]
grid = replace(config, sweep=replace(config.sweep, batch_problems=(batch_problems,)))
outcomes = run_sweep(grid, show_progress=False)
points = sweep_points(grid)
outcomes[["set", "batch_problems", "n", "status"]]

# %% [markdown]
# ## Reward versus compute, one curve per n

# %%
panels([curves_chart(part, metric, title=f"{set_name}: {metric} vs rollouts, B_p = {batch_problems}")
        for set_name, part in points.groupby("set")])

# %% [markdown]
# ## The compute-optimal frontier and n*(C)

# %%
analysis = {}
for set_name, part in points.groupby("set"):
    fits = fit_curves(part, by=["n"], metric=metric)
    lowest = np.log2(part.loc[part["rollouts"] > 0, "rollouts"].min())
    compute = np.arange(lowest, np.log2(config.sweep.budget) + 1e-9, 0.25)
    edge = frontier(fits, compute, by=["n"])
    optimal = fit_optimal(edge) if edge["n"].nunique() > 1 and len(edge) >= 3 else None
    measured = measured_frontier(part, compute, by=["n"], metric=metric)
    analysis[set_name] = (fits, edge, optimal, measured)
panels([frontier_chart(fits, edge, metric, title=f"{set_name}: frontier coloured by n*")
        for set_name, (fits, edge, _, _) in analysis.items()])

# %%
panels([optimal_chart(edge, optimal, title=f"{set_name}: log2 n* vs rollouts, sigmoid fit")
        for set_name, (_, edge, optimal, _) in analysis.items() if optimal])

# %% [markdown]
# The fitted envelope and the measured one (each curve's running best, no fit) side by
# side: where curves lie within the evaluation noise of each other (about 0.015 here),
# the two can name different n.

# %%
pd.concat({set_name: edge[["rollouts", "n", "reward"]].merge(measured[["rollouts", "n", "reward"]], on="rollouts",
                                                             suffixes=(" (fit)", " (measured)")).iloc[::2]
           for set_name, (_, edge, _, measured) in analysis.items()})

# %% [markdown]
# ## Coverage and sharpening: which n is best for best@4 and for worst@4

# %%
final = points.sort_values("rollouts").groupby(["set", "n"]).tail(1)
best_n = final.loc[final.groupby("set")["val_best@4"].idxmax(), ["set", "n", "val_best@4"]]
worst_n = final.loc[final.groupby("set")["val_worst@4"].idxmax(), ["set", "n", "val_worst@4"]]
optima = best_n.merge(worst_n, on="set", suffixes=(" for best@4", " for worst@4")).set_index("set")
optima

# %% [markdown]
# ## Findings at our scale

# %%
rows = []
for set_name, (_, edge, _, measured) in analysis.items():
    if measured.empty:
        rows.append({"set": set_name, "finding": "n* grows with C, then saturates (Fig. 5-6)",
                     "measured": "no finished curve", "verdict": "not measured"})
        continue
    first, last = measured["n"].iloc[0], measured["n"].iloc[-1]
    grows = last > first
    tail = measured[measured["log2_rollouts"] >= measured["log2_rollouts"].max() - 1]
    saturates = tail["n"].nunique() == 1
    rows.append({
        "set": set_name,
        "finding": "n* grows with C, then saturates (Fig. 5-6)",
        "measured": f"measured n* {first} at {measured['rollouts'].iloc[0]:,.0f} rollouts -> {last} at "
                    f"{measured['rollouts'].iloc[-1]:,.0f} (fitted: {edge['n'].iloc[0]} -> {edge['n'].iloc[-1]}); "
                    f"last doubling n* = {sorted(int(n) for n in tail['n'].unique())}",
        "verdict": "reproduced" if grows and saturates else ("partly" if grows else "not reproduced"),
    })
# Paper: sharpening (worst@4) wants large n on easy, coverage (best@4) wants large n on hard.
for set_name, wanted, other in (("easy", "worst@4", "best@4"), ("hard", "best@4", "worst@4")):
    if set_name in optima.index:
        row = optima.loc[set_name]
        large, small = int(row[f"n for {wanted}"]), int(row[f"n for {other}"])
        rows.append({"set": set_name, "finding": f"{set_name}: {wanted} is best at a larger n than {other} (Fig. 7)",
                     "measured": f"{wanted} best at n = {large} ({row[f'val_{wanted}']:.3f}), "
                                 f"{other} at n = {small} ({row[f'val_{other}']:.3f})",
                     "verdict": "reproduced" if large > small else ("partly" if large == small else "not reproduced")})
if {"easy", "hard"} <= set(analysis) and not analysis["easy"][3].empty and not analysis["hard"][3].empty:
    easy_n, hard_n = analysis["easy"][3]["n"].iloc[-1], analysis["hard"][3]["n"].iloc[-1]
    rows.append({"set": "easy, hard", "finding": "hard saturates at a smaller n* than easy (Fig. 6)",
                 "measured": f"measured n* at the budget: easy {easy_n}, hard {hard_n}",
                 "verdict": "reproduced" if hard_n < easy_n else ("partly" if hard_n == easy_n else "not reproduced")})
pd.DataFrame(rows).style.hide(axis="index")
