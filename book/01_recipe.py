# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Recipe validation: what a healthy GRPO run needs
#
# Before spending compute on the allocation questions, the paper settles the recipe
# (Figures 3-4): KL and entropy terms on easy sets and neither on hard ones, no
# zero-variance filtering, AdamW with 10 warm-up updates, and a learning rate anchored by a
# grid at one batch size and scaled as $\mathrm{lr} = \mathrm{lr}_0 \sqrt{B / B_0}$. We
# rerun the three checks on our base model: the regulariser $\times$ zero-variance-filter
# ablation on easy and hard, the base-LR grid, and the scaling rules at a batch eight times
# away from the anchor's. Every run goes to half the sweep's budget; runs that coincide
# with another chapter's (the preset cell) are shared through the run store.

# %% tags=["parameters"]
params = "params/cpu.yaml"  # a preset from params/
# Overrides as on the command line: a list of "section.field=value" strings.
overrides = []
budget = None  # rollouts per sweep run; None keeps the params file's sweep.budget (this chapter uses half)
metric = "val_avg@4"

# %%
import pandas as pd

from isobook.book import chapter_config
from isobook.charts import curves_chart, panels, use_offline_renderer
from isobook.evaluation import tie_tolerance
from isobook.recipe import LrScaling, scaled_lr
from isobook.sweeps import grid_run, run_configs, run_history, run_points

use_offline_renderer()
config = chapter_config(params, overrides, budget)
half = config.sweep.budget // 2  # rollouts per run in this chapter
batch_problems = config.sweep.batch_problems[0]
n = max(v for v in config.sweep.rollouts_per_problem if v <= 16)  # paper's Figure 3: n = 16
tolerance = tie_tolerance(config.evaluation)
margin = 0.1  # a collapse or blow-up must move entropy (or length) by more than 10%

# %% [markdown]
# ## KL + entropy and the zero-variance filter (Figure 3)
#
# Four cells per set: the regularisers on or off, and with them on, zero-variance groups
# (every rollout right, or every one wrong) kept, dropped from the KL and entropy terms
# only, or dropped from every term.

# %%
cells = {
    "KL+entropy, keep all": ["recipe.regularisers=kl+entropy", "recipe.zero_variance=none"],
    "KL+entropy, filter KL/entropy": ["recipe.regularisers=kl+entropy", "recipe.zero_variance=regularisers"],
    "KL+entropy, filter all": ["recipe.regularisers=kl+entropy", "recipe.zero_variance=all"],
    "neither": ["recipe.regularisers=none", "recipe.zero_variance=none"],
}
ablation, labels = [], []
for set_name in ("easy", "hard"):
    for cell, changes in cells.items():
        ablation.append(grid_run(config, set_name, batch_problems, n, changes, budget=half))
        labels.append({"recipe": cell})
# The LR runs of the next section, trained now with these (one pool keeps both cores busy).
anchor = config.recipe.base_lr
grid_lrs = sorted({anchor * f for f in (0.3, 1.0, 3.0, 10.0)})
lr_runs = [grid_run(config, "easy", batch_problems, n, [f"recipe.base_lr={lr}"], budget=half) for lr in grid_lrs]
small_n = min(config.sweep.rollouts_per_problem)
rules = ("constant", "sqrt", "linear")
scaling_runs = [grid_run(config, "easy", batch_problems, small_n, [f"recipe.lr_scaling={rule}"], budget=half)
                for rule in rules]
outcomes = run_configs(ablation + lr_runs + scaling_runs, config, show_progress=False).iloc[: len(ablation)]
history = run_history(ablation, labels)
points = run_points(ablation, config.evaluation.k, labels)
outcomes[["set", "batch_problems", "n", "status"]].assign(recipe=[label["recipe"] for label in labels])

# %%
panels([curves_chart(part, metric, color="recipe", title=f"{set_name}: {metric}, B_p = {batch_problems}, n = {n}")
        for set_name, part in points.groupby("set")])

# %% [markdown]
# Entropy and response length over training, averaged over windows of updates: the paper
# sees entropy collapse on easy without the entropy bonus, and entropy and length blow up
# on hard with it.

# %%
training = history[history["step"] > 0]
window = max(1, int(training["step"].max()) // 8)
smoothed = (training.assign(window=(training["step"] - 1) // window)
            .groupby(["set", "recipe", "window"], as_index=False)[["rollouts", "entropy", "response_length"]].mean())
panels([curves_chart(part, column, color="recipe", title=f"{set_name}: {column}")
        for set_name, part in smoothed.groupby("set") for column in ("entropy", "response_length")])

# %%
last = smoothed.sort_values("window").groupby(["set", "recipe"]).tail(1).set_index(["set", "recipe"])
final = points.sort_values("rollouts").groupby(["set", "recipe"]).tail(1).set_index(["set", "recipe"])
ablation_table = final[[metric, "val_best@4", "val_worst@4"]].join(
    last[["entropy", "response_length"]].add_suffix(" (last window)"))
ablation_table

# %% [markdown]
# ## The learning rate: a base-LR grid, then the scaling rule (Figure 4)
#
# The grid varies the base LR (the LR at `recipe.reference_batch` rollouts per update)
# on easy at the ablation's batch; the preset's anchor should be best or tied, with both
# neighbours turning down. Then, at the grid's smallest batch, eight times or more away
# from the reference, constant, square-root and linear scaling of that anchor compete.

# %%
lr_points = run_points(lr_runs, config.evaluation.k, [{"base_lr": lr} for lr in grid_lrs])
scaling_points = run_points(scaling_runs, config.evaluation.k, [{"scaling": rule} for rule in rules])
small_batch = batch_problems * small_n
panels([curves_chart(lr_points, metric, color="base_lr", title=f"easy: base-LR grid at B = {batch_problems * n}"),
        curves_chart(scaling_points, metric, color="scaling", title=f"easy: LR scaling at B = {small_batch}")])

# %%
lr_final = (lr_points.sort_values("rollouts").groupby("base_lr").tail(1).set_index("base_lr")
            [[metric, "val_best@4"]].sort_index())
lr_final = lr_final.assign(peak=lr_points.groupby("base_lr")[metric].max())
scaling_final = scaling_points.sort_values("rollouts").groupby("scaling").tail(1).set_index("scaling")[[metric]]
scaling_final = scaling_final.assign(lr=[scaled_lr(anchor, config.recipe.reference_batch, small_batch, LrScaling(rule))
                                         for rule in scaling_final.index])
lr_final, scaling_final

# %% [markdown]
# ## Findings at our scale


# %%
def verdict(holds: bool, partly: bool = False) -> str:
    return "reproduced" if holds else ("partly" if partly else "not reproduced")


rows = []
for set_name, preset, other in (("easy", "KL+entropy, keep all", "neither"), ("hard", "neither", "KL+entropy, keep all")):
    if set_name not in ablation_table.index.get_level_values("set"):
        continue
    table = ablation_table.loc[set_name]
    best = table[metric].max()
    gap = best - table.loc[preset, metric]
    rows.append({"finding": f"{set_name}: the preset ({preset}) is the best cell (Fig. 3)",
                 "measured": f"final {metric}: " + ", ".join(f"{c} {v:.3f}" for c, v in table[metric].items()),
                 "verdict": verdict(gap == 0, gap <= tolerance)})
entropy = ablation_table["entropy (last window)"]
if {("easy", "neither"), ("easy", "KL+entropy, keep all")} <= set(entropy.index):
    low, high = entropy[("easy", "neither")], entropy[("easy", "KL+entropy, keep all")]
    rows.append({"finding": "easy: entropy collapses without KL+entropy (Fig. 3)",
                 "measured": f"last-window entropy {low:.4f} without vs {high:.4f} with",
                 "verdict": verdict(low < (1 - margin) * high, low < high)})
if {("hard", "neither"), ("hard", "KL+entropy, keep all")} <= set(entropy.index):
    length = ablation_table["response_length (last window)"]
    on, off = ("hard", "KL+entropy, keep all"), ("hard", "neither")
    grows = entropy[on] > (1 + margin) * entropy[off] and length[on] > (1 + margin) * length[off]
    rows.append({"finding": "hard: entropy and length blow up with the entropy bonus (Fig. 3)",
                 "measured": f"entropy {entropy[on]:.4f} with vs {entropy[off]:.4f} without; "
                             f"length {length[on]:.1f} vs {length[off]:.1f} tokens",
                 "verdict": verdict(grows, entropy[on] > entropy[off] or length[on] > length[off])})
if anchor in lr_final.index:
    gap = lr_final[metric].max() - lr_final.loc[anchor, metric]
    largest = lr_final.index.max()
    rows.append({"finding": f"base-LR grid: the anchor {anchor:g} is best or tied (Fig. 4)",
                 "measured": ", ".join(f"{lr:g}: {v:.3f}" for lr, v in lr_final[metric].items())
                             + f" (largest LR peaked at {lr_final.loc[largest, 'peak']:.3f})",
                 "verdict": verdict(gap == 0, gap <= tolerance)})
if "sqrt" in scaling_final.index:
    gap = scaling_final[metric].max() - scaling_final.loc["sqrt", metric]
    rows.append({"finding": f"square-root scaling is best away from the anchor's batch (Fig. 4), B = {small_batch}",
                 "measured": ", ".join(f"{rule} (lr {row.lr:.2g}): {row[metric]:.3f}"
                                       for rule, row in scaling_final.iterrows()),
                 "verdict": verdict(gap == 0, gap <= tolerance)})
pd.DataFrame(rows).style.hide(axis="index")
