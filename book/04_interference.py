# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Interference: why larger n can win at all
#
# For a single problem with a tabular softmax policy, the expected suboptimality after $t$
# updates of $n$ rollouts behaves like $O(A/(n t) + B/t)$: at a fixed budget $C = n t$ the
# second term rewards many small updates, so the best $n$ should be the smallest. The
# paper (Figure 12) argues that LLM training breaks this because problems share
# parameters: an update that helps some problems hurts others (interference), and larger
# groups move all problems more evenly, while small groups let some problems run away to
# pass@1 = 1 as others fall to 0 ("rich get richer"). We run the base case exactly, beside
# our model's runs from chapter 02, and compare the training-set pass@1 histograms of the
# smallest and largest $n$ at the same compute.

# %% tags=["parameters"]
params = "params/cpu.yaml"  # a preset from params/; the grid is its sweep section
# Overrides as on the command line: a list of "section.field=value" strings.
overrides = []
budget = None  # rollouts per run; None keeps the params file's sweep.budget
metric = "val_avg@4"

# %%
import datasets
import numpy as np
import pandas as pd

from isobook.bandit import BanditSetup, best_n, suboptimality_curves
from isobook.book import chapter_config
from isobook.charts import curves_chart, panels, pass_chart, use_offline_renderer
from isobook.frontier import measured_frontier, pass_summary
from isobook.pipeline import prepare_sets
from isobook.sweeps import grid_run, run_configs, run_points, run_train_pass

use_offline_renderer()
config = chapter_config(params, overrides, budget)
batch_problems = config.sweep.batch_problems[0]
n_values = [n for n in config.sweep.rollouts_per_problem if batch_problems * n <= config.sweep.max_batch]
budgets = [2**e for e in range(int(np.log2(batch_problems * max(n_values))), int(np.log2(config.sweep.budget)) + 1)]
sets_folder = prepare_sets(config).folder

# %% [markdown]
# ## The base case: tabular softmax bandits
#
# One problem first, starting at pass@1 0.45 (the middle of the easy band) and at 0.03
# (hard), with one update per group of $n$ draws, at the sweep's budget. Then every
# problem of each training set at once, each starting from its own base-model avg@16 and
# keeping its own logits, $B_p$ problems per update as in the sweep. Nothing is shared
# between problems, so there is no interference by construction.

# %%
single = pd.concat({start: suboptimality_curves(BanditSetup(start_pass=np.array([start])), n_values,
                                                config.sweep.budget)
                    for start in (0.45, 0.03)}, names=["start pass@1"]).reset_index(0)
panels([curves_chart(part, "suboptimality", title=f"one problem, start pass@1 {start}")
        for start, part in single.groupby("start pass@1")])

# %%
many = {}
for set_name in config.sweep.sets:
    train = datasets.load_from_disk(str(sets_folder / set_name))["train"]
    start = np.clip(np.array(train["correct"]) / np.array(train["samples"]), 0.01, 0.99)
    setup = BanditSetup(start_pass=start, batch_problems=min(batch_problems, start.size), seeds=16)
    many[set_name] = suboptimality_curves(setup, n_values, config.sweep.budget)
panels([curves_chart(curves, "suboptimality", title=f"{set_name}: {len(curves)} tabular problems, B_p = "
                     f"{batch_problems}") for set_name, curves in many.items()])

# %% [markdown]
# ## The base case beside the LLM: n* at each budget
#
# The bandits' best $n$ (lowest suboptimality) against the LLM's measured $n^*$ (each
# curve's running best of validation reward) on the same grid, from chapter 02's runs.

# %%
runs = [grid_run(config, set_name, batch_problems, n) for set_name in config.sweep.sets for n in n_values]
run_configs(runs, config, show_progress=False)
points = run_points(runs, config.evaluation.k)
compare = []
for set_name, curves in many.items():
    bandit = best_n(curves, budgets).rename(columns={"n": "bandit n*"})
    llm = measured_frontier(points[points["set"] == set_name], np.log2(budgets), by=["n"], metric=metric)
    compare.append(bandit[["rollouts", "bandit n*"]].merge(
        llm[["rollouts", "n"]].rename(columns={"n": "LLM n*"}), on="rollouts", how="left").assign(set=set_name))
single_best = pd.concat({start: best_n(part, budgets) for start, part in single.groupby("start pass@1")})
comparison = pd.concat(compare, ignore_index=True).set_index(["set", "rollouts"])
comparison

# %% [markdown]
# ## Pass@1 histograms at matched compute (Figure 12)
#
# Per-problem pass@1 on a fixed sample of training problems, measured at the
# `evaluation.train_pass_rollouts` points, for the smallest and the largest $n$ at the same
# rollouts: same compute, $n_{max}/n_{min}$ times more updates (and epochs) for the small group.

# %%
extremes = [grid_run(config, set_name, batch_problems, n) for set_name in config.sweep.sets
            for n in (min(n_values), max(n_values))]
train_pass = run_train_pass(extremes)
panels([pass_chart(part, title=f"{set_name}: pass@1 of training problems") for set_name, part in
        train_pass.groupby("set")], columns=1) if not train_pass.empty else "no training-set measurements"

# %%
spread = pass_summary(train_pass, by=["set", "n"]).set_index(["set", "n", "rollouts"]) if not train_pass.empty else None
spread

# %% [markdown]
# ## Findings at our scale

# %%
rows = []
for start, table in single_best.groupby(level=0):
    smallest = table["n"].eq(min(n_values)).all()
    rows.append({"finding": f"base case, one problem (start {start}): the smallest n wins at every budget",
                 "measured": "bandit n* by budget: " + ", ".join(f"{r:,}: {n}" for r, n in
                                                                  zip(table["rollouts"], table["n"])),
                 "verdict": "reproduced" if smallest else "partly"})
for set_name, part in comparison.groupby(level="set"):
    final = part.dropna().iloc[-1:] if part["LLM n*"].notna().any() else None
    if final is None:
        continue
    bandit_n, llm_n = int(final["bandit n*"].iloc[0]), int(final["LLM n*"].iloc[0])
    rows.append({"finding": f"{set_name}: the LLM's n* exceeds the interference-free bandit's (Fig. 12)",
                 "measured": f"at {final.index[0][1]:,} rollouts: bandit n* {bandit_n}, LLM n* {llm_n}",
                 "verdict": "reproduced" if llm_n > bandit_n else ("partly" if llm_n == bandit_n else "not reproduced")})
if spread is not None:
    for set_name, part in spread.groupby(level="set"):
        last = part.xs(part.index.get_level_values("rollouts").max(), level="rollouts")
        small, large = last.loc[(set_name, min(n_values))], last.loc[(set_name, max(n_values))]
        rich = small["stuck"] > large["stuck"] and small["solved"] > large["solved"]
        rows.append({"finding": f"{set_name}: small n piles problems at pass@1 0 and 1, large n moves them evenly "
                                "(Fig. 12)",
                     "measured": f"n = {min(n_values)}: {small['stuck']:.0%} stuck at 0, {small['solved']:.0%} at 1, "
                                 f"std {small['std']:.2f}; n = {max(n_values)}: {large['stuck']:.0%}, "
                                 f"{large['solved']:.0%}, std {large['std']:.2f}",
                     "verdict": "reproduced" if rich else ("partly" if small["std"] > large["std"]
                                                           else "not reproduced")})
pd.DataFrame(rows).style.hide(axis="index")
