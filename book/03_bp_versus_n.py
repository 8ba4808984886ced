# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # B_p versus n at a fixed batch
#
# Fix the rollouts per update, $B = B_p \cdot n$. Then compute is proportional to the
# number of updates $M$, and the only choice left is how to split a batch between many
# problems (large $B_p$) and many rollouts per problem (large $n$). The paper (Figures 8-9)
# finds that $n^*(M)$ rises with $M$ while $B_p^*(M)$ falls (few updates favour many
# problems, many updates favour large groups), and that varying $B_p$ at fixed $n$ moves
# the final reward much less than varying $n$ at fixed $B_p$.

# %% tags=["parameters"]
params = "params/cpu.yaml"  # a preset from params/; the grid is its sweep section
# Overrides as on the command line: a list of "section.field=value" strings.
overrides = []
budget = None  # rollouts per run; None keeps the params file's sweep.budget
metric = "val_avg@4"

# %%
from collections import Counter

import numpy as np
import pandas as pd

from isobook.book import chapter_config
from isobook.charts import frontier_chart, use_offline_renderer
from isobook.frontier import fit_curves, frontier, measured_frontier, sensitivity_spread
from isobook.sweeps import run_configs, run_points, sweep_configs

use_offline_renderer()
config = chapter_config(params, overrides, budget)
grid = sweep_configs(config)
# The batch size that the sweep's grid splits in the most ways (the smallest among ties).
splits = Counter(c.train.batch_rollouts for c in grid)
batch = min(splits, key=lambda b: (-splits[b], b))
fixed = [c for c in grid if c.train.batch_rollouts == batch]
outcomes = run_configs(fixed, config, show_progress=False)
points = run_points(fixed, config.evaluation.k)
outcomes[["set", "batch_problems", "n", "status"]]

# %% [markdown]
# ## Which split wins after M updates

# %%
tables, charts = {}, {}
for set_name, part in points.groupby("set"):
    fits = fit_curves(part, by=["batch_problems", "n"], metric=metric)
    lowest = np.log2(part.loc[part["rollouts"] > 0, "rollouts"].min())
    compute = np.arange(lowest, np.log2(config.sweep.budget) + 1e-9, 0.5)
    measured = measured_frontier(part, compute, by=["batch_problems", "n"], metric=metric)
    tables[set_name] = measured.assign(updates=(measured["rollouts"] / batch).round(1))
    charts[set_name] = frontier_chart({(n,): f for (_, n), f in fits.items()},
                                      frontier(fits, compute, by=["batch_problems", "n"]), metric,
                                      title=f"{set_name}: B = {batch}, frontier coloured by n*")
set_name = next(iter(tables))
charts[set_name]

# %%
tables[set_name][["updates", "rollouts", "batch_problems", "n", "reward"]].rename(
    columns={"batch_problems": "B_p*", "n": "n*", "reward": metric})

# %% [markdown]
# ## Sensitivity: B_p at fixed n versus n at fixed B_p (Figure 9)
#
# The fixed-B runs above and chapter 02's runs at the grid's first B_p (shared through the
# run store): pairs with equal n and different B_p, and a row of n at one B_p, each at
# the sweep's budget. (Chapter 06 repeats this over the whole easy grid.)

# %%
sensitivity = fixed + [c for c in grid if c.train.batch_problems == config.sweep.batch_problems[0]]
run_configs(sensitivity, config, show_progress=False)
everything = run_points(sensitivity, config.evaluation.k).drop_duplicates(["set", "batch_problems", "n", "rollouts"])
final = everything[everything["rollouts"] == config.sweep.budget]
spreads = {name: sensitivity_spread(part, metric) for name, part in final.groupby("set")}
pd.DataFrame(spreads).T.rename(columns={"over_batch_problems": "spread over B_p (fixed n)",
                                        "over_n": "spread over n (fixed B_p)"})

# %% [markdown]
# ## Findings at our scale

# %%
rows = []
for name, table in tables.items():
    if table.empty:
        continue
    n_first, n_last = table["n"].iloc[0], table["n"].iloc[-1]
    rows.append({"set": name, "finding": "n*(M) rises with M, B_p*(M) falls (Fig. 8)",
                 "measured": f"B = {batch}: (B_p*, n*) = ({table['batch_problems'].iloc[0]}, {n_first}) after "
                             f"{table['updates'].iloc[0]:g} updates -> ({table['batch_problems'].iloc[-1]}, {n_last}) "
                             f"after {table['updates'].iloc[-1]:g}",
                 "verdict": "reproduced" if n_last > n_first else "not reproduced"})
    spread = spreads.get(name, {})
    over_bp, over_n = spread.get("over_batch_problems", np.nan), spread.get("over_n", np.nan)
    known = not (np.isnan(over_bp) or np.isnan(over_n))
    rows.append({"set": name, "finding": "B_p matters less than n (Fig. 9)",
                 "measured": f"final {metric} spread {over_bp:.3f} over B_p vs {over_n:.3f} over n"
                             if known else "too few runs at the budget to compare",
                 "verdict": ("reproduced" if over_bp < over_n else "not reproduced") if known else "not measured"})
pd.DataFrame(rows).style.hide(axis="index")
