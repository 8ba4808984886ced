# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Data: how many problems, and which
#
# Two questions about the training set (paper Figures 14-15). **Size**: with few distinct
# problems every extra rollout revisits the same ones, so the paper's frontier with
# $D = 500$ stops at a smaller $n$ than with $D = 6\mathrm{k}$ (larger $n$ even degrades).
# **Skew**: trained on mixtures of hard, easy and very easy problems, larger $n$ wins past
# a data-dependent compute threshold on most validation sets, all-hard training forgets
# easy problems, and very easy data does not help. We train on a small slice of the easy
# set beside the full set, and on the hard set and two mixtures, then score every final
# policy on the easy, hard and very easy validation splits.

# %% tags=["parameters"]
params = "params/cpu.yaml"  # a preset from params/; the grid is its sweep section
# Overrides as on the command line: a list of "section.field=value" strings.
overrides = []
budget = None  # rollouts per run; None keeps the params file's sweep.budget
metric = "val_avg@4"
data_fraction = 0.125  # the small training set's share of the easy set (paper: 500 of 6k)

# %%
import datasets
import numpy as np
import pandas as pd

from isobook.book import chapter_config
from isobook.charts import curves_chart, panels, use_offline_renderer
from isobook.evaluation import tie_tolerance
from isobook.frontier import measured_frontier
from isobook.pipeline import prepare_sets
from isobook.sweeps import grid_run, run_configs, run_points
from isobook.transfer import transfer_scores

use_offline_renderer()
config = chapter_config(params, overrides, budget)
batch_problems = config.sweep.batch_problems[0]
n_values = [n for n in config.sweep.rollouts_per_problem if batch_problems * n <= config.sweep.max_batch]
small_n, large_n = min(n_values), max(n_values)
sets_folder = prepare_sets(config).folder
easy_size = datasets.load_from_disk(str(sets_folder / "easy"))["train"].num_rows
small_size = max(batch_problems, round(easy_size * data_fraction))
tolerance = tie_tolerance(config.evaluation)

# %% [markdown]
# ## Data size (Figure 14)
#
# The full easy set and its first `small_size` problems, at the smallest and the largest
# $n$ of the grid ($B_p$ fixed at the grid's first value). The full-set runs are chapter
# 02's.

# %%
sizes = {"full": [], "small": [f"train.data_size={small_size}"]}
size_runs, size_labels = [], []
for label, changes in sizes.items():
    for n in (small_n, large_n):
        size_runs.append(grid_run(config, "easy", batch_problems, n, changes))
        size_labels.append({"data": f"{label} (D = {easy_size if label == 'full' else small_size})"})
# The mixture runs of the next section, trained now with these (one pool keeps both cores busy).
mixture_runs = [grid_run(config, "hard", batch_problems, small_n), grid_run(config, "hard", batch_problems, large_n),
                grid_run(config, "mix-dual", batch_problems, small_n),
                grid_run(config, "mix-dual", batch_problems, large_n),
                grid_run(config, "mix-tri", batch_problems, large_n)]
run_configs(size_runs + mixture_runs, config, show_progress=False)
size_points = run_points(size_runs, config.evaluation.k, size_labels)
panels([curves_chart(part, metric, title=f"easy, {data}, B_p = {batch_problems}")
        for data, part in size_points.groupby("data")])

# %%
compute = np.log2(sorted(size_points.loc[size_points["rollouts"] > 0, "rollouts"].unique()))
size_frontiers = {data: measured_frontier(part, compute, by=["n"], metric=metric)
                  for data, part in size_points.groupby("data")}
size_table = pd.concat({data: edge.set_index("rollouts")[["n", "reward"]] for data, edge in size_frontiers.items()},
                       axis=1).iloc[::2]
size_table

# %% [markdown]
# ## Mixtures (Figure 15)
#
# Runs on the hard set (chapter 02's), on `mix-dual` (50% hard, 50% easy) at both $n$, and
# on `mix-tri` (50% hard, 25% easy, 25% very easy) at the largest; then each final policy,
# and the base model, on three validation splits.

# %%
transfer = transfer_scores(mixture_runs, ["easy", "hard", "veryeasy"])
transfer_table = transfer.pivot_table(index=["train_set", "n"], columns="set", values=metric)
transfer_table

# %% [markdown]
# ## Findings at our scale

# %%
rows = []
full_key = next((d for d in size_frontiers if d.startswith("full")), None)
small_key = next((d for d in size_frontiers if d.startswith("small")), None)
if full_key and small_key and not size_frontiers[full_key].empty and not size_frontiers[small_key].empty:
    full_edge, small_edge = size_frontiers[full_key], size_frontiers[small_key]
    full_final = size_points[(size_points["data"] == full_key) & (size_points["n"] == large_n)][metric].iloc[-1]
    small_final = size_points[(size_points["data"] == small_key) & (size_points["n"] == large_n)][metric].iloc[-1]
    small_n_star, full_n_star = small_edge["n"].iloc[-1], full_edge["n"].iloc[-1]
    rows.append({"finding": "a small training set stops the frontier at a smaller n (Fig. 14)",
                 "measured": f"n* at {full_edge['rollouts'].iloc[-1]:,.0f} rollouts: {small_n_star} with D = {small_size}, "
                             f"{full_n_star} with D = {easy_size}; {metric} at n = {large_n}: "
                             f"{small_final:.3f} vs {full_final:.3f}",
                 "verdict": "reproduced" if small_n_star < full_n_star else
                            ("partly" if small_final < full_final - tolerance else "not reproduced")})
scores = transfer_table
if ("-", 0) in scores.index and ("hard", large_n) in scores.index:
    base_easy, hard_easy = scores.loc[("-", 0), "easy"], scores.loc[("hard", large_n), "easy"]
    rows.append({"finding": "training on hard problems only forgets easy ones (Fig. 15)",
                 "measured": f"easy {metric}: base {base_easy:.3f}, after hard-only training (n = {large_n}) "
                             f"{hard_easy:.3f}",
                 "verdict": "reproduced" if hard_easy < base_easy - tolerance else "not reproduced"})
if ("mix-tri", large_n) in scores.index and ("mix-dual", large_n) in scores.index:
    tri, dual = scores.loc[("mix-tri", large_n)], scores.loc[("mix-dual", large_n)]
    rows.append({"finding": "very easy data does not help (Fig. 15)",
                 "measured": "mix-tri vs mix-dual at n = " + str(large_n) + ": "
                             + ", ".join(f"{s} {tri[s]:.3f} vs {dual[s]:.3f}" for s in scores.columns),
                 "verdict": "reproduced" if (tri["hard"] <= dual["hard"] + tolerance) else "not reproduced"})
if ("mix-dual", small_n) in scores.index and ("mix-dual", large_n) in scores.index:
    wins = [s for s in scores.columns if scores.loc[("mix-dual", large_n), s] > scores.loc[("mix-dual", small_n), s]]
    rows.append({"finding": "on a mixture, larger n wins on most validation sets at the budget (Fig. 15)",
                 "measured": f"mix-dual, n = {large_n} beats n = {small_n} on {len(wins)} of {len(scores.columns)} "
                             f"sets ({', '.join(wins) or 'none'})",
                 "verdict": "reproduced" if 2 * len(wins) > len(scores.columns) else
                            ("partly" if wins else "not reproduced")})
pd.DataFrame(rows).style.hide(axis="index")
