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
# ("What constitutes a healthy RL recipe", Figures 3-4): KL and entropy terms on easy sets and neither on hard ones, no
# zero-variance filtering, AdamW with 10 warm-up updates (ours: 512 rollouts, the same share of a
# budget at every batch size), and a learning rate anchored by a
# grid at one batch size and scaled as $\mathrm{lr} = \mathrm{lr}_0 \sqrt{B / B_0}$. We
# rerun the three checks on our base model: the regulariser $\times$ zero-variance-filter
# ablation on easy and hard, the base-LR grid at the sweep's middle batch (B = 128, the
# anchor's reference batch), and the scaling rules at the grid's smallest batch, four times
# below it. Every run goes to half the sweep's budget; runs that coincide
# with another chapter's are shared through the run store.
#
# **How the verdicts are decided.** A run's score at a budget is the mean of its
# evaluations at half that budget and at it. Two cells compare problem by problem, and
# the 95% interval of their difference holds both evaluation noise and training-seed
# noise: the base-LR grid runs on two seeds, paired across learning rates; the other cells
# are one trained run each. All use the seed-to-seed variance measured on chapter 02's
# two-seed grid (the findings name it). A cell is "best"
# only where it leads every other beyond that interval. Entropy and response length
# compare over each run's last quarter of updates (Welch's 95% interval on block means,
# noise within one run only). The smallest difference this design resolves is printed
# beside the findings.

# %% tags=["parameters"]
params = "params/cpu.yaml"  # a preset from params/
# Overrides as on the command line: a list of "section.field=value" strings.
overrides = []
budget = None  # rollouts per sweep run; None keeps the params file's sweep.budget (this chapter uses half)

# %% tags=["book-declarations"]
# Read by `isobook book` before the chapter runs: its runs train to half the budget.
budget_share = 0.5
extra_base_models = []

# %%
import pandas as pd
from IPython.display import display

from isobook.analysis.findings.claims import best_candidate, training_statistic_rises
from isobook.analysis.findings.statistics import last_quarter, problem_scores, resolvable_difference
from isobook.analysis.findings.verdicts import headline
from isobook.book.charts import curves_chart, panels, use_offline_renderer
from isobook.book.designs import RECIPE_CELLS, lr_grid_seeds, recipe_n, recipe_runs
from isobook.book.kernel import chapter_config
from isobook.book.pages import FindingsTable, design_note, runs_note, scale, table
from isobook.book.seeds import book_seed_variance
from isobook.grpo.evaluation import metric_name
from isobook.grpo.recipe import LrScaling, scaled_lr
from isobook.sweeps import mean_over_seeds, run_configs, run_counts, run_history, run_points

use_offline_renderer()
config = chapter_config(params, overrides, budget)
avg, best, worst = (metric_name(kind, config.evaluation) for kind in ("avg", "best", "worst"))
half = round(config.sweep.budget * budget_share)  # rollouts per run in this chapter
batch_problems = config.sweep.batch_problems[0]
n = recipe_n(config)  # paper's Figure 3: n = 16

# %% [markdown]
# ## KL + entropy and the zero-variance filter (Figure 3)
#
# Four cells per set: the regularisers on or off, and with them on, zero-variance groups
# (every rollout right, or every one wrong) kept, dropped from the KL and entropy terms
# only, or dropped from every term, all at the preset's weights (the paper's 1e-3). The
# preset is the first cell on easy and "neither" on hard.

# %%
cells = RECIPE_CELLS
regularised = "KL+entropy, keep all"
presets = {"easy": "KL+entropy, keep all", "hard": "neither"}
# The LR and scaling runs of the next sections train now with these (one pool keeps every worker busy).
design = recipe_runs(config, half)
ablation, labels = design["ablation"].runs, design["ablation"].labels
lr_runs, lr_labels = design["lr"].runs, design["lr"].labels
scaling_runs, scaling_labels = design["scaling"].runs, design["scaling"].labels
anchor, lr_seeds = config.recipe.base_lr, lr_grid_seeds(config)
small_n = min(config.sweep.rollouts_per_problem)
outcomes = run_configs(ablation + lr_runs + scaling_runs, config, show_progress=False)
history = run_history(ablation, labels)
points = run_points(ablation, config.evaluation.k, labels)
counts = run_counts(ablation, "validation", labels)
runs_note(outcomes)

# %%
panels([curves_chart(part, avg, color="recipe", title=f"{set_name}: {avg}, B_p = {batch_problems}, n = {n}")
        for set_name, part in points.groupby("set")], shared_legend=True)

# %% [markdown]
# Entropy and response length over training, averaged over windows of updates: the paper
# sees entropy collapse on easy without the entropy bonus, and entropy and length blow up
# on hard with it.

# %%
training = history[history["step"] > 0]
window = max(1, int(training["step"].max()) // 8)
smoothed = (training.assign(window=(training["step"] - 1) // window)
            .groupby(["set", "recipe", "window"], as_index=False)[["rollouts", "entropy", "response_length"]].mean())
panels([curves_chart(part, column, color="recipe", title=f"{set_name}: {column.replace('_', ' ')}")
        for set_name, part in smoothed.groupby("set") for column in ("entropy", "response_length")], shared_legend=True)

# %% [markdown]
# Final scores, and the mean entropy and response length over each cell's last quarter of
# updates:

# %%
runs = {(s, r): part for (s, r), part in history.groupby(["set", "recipe"])}
final = points.sort_values("rollouts").groupby(["set", "recipe"]).tail(1).set_index(["set", "recipe"])
table(pd.DataFrame([{"set": s, "recipe": r, **final.loc[(s, r), [avg, best, worst]],
                     "entropy": last_quarter(runs[(s, r)], "entropy").mean(),
                     "length (tokens)": last_quarter(runs[(s, r)], "response_length").mean()}
                    for s in presets for r in cells if (s, r) in final.index]))

# %% [markdown]
# ## The learning rate: a base-LR grid, then the scaling rule (Figure 4)
#
# The grid varies the base LR (the LR at `recipe.reference_batch` rollouts per update)
# on easy at the ablation's batch, the reference batch; the preset's anchor should be best,
# with both neighbours turning down. Then, at the grid's smallest batch, four times below
# the reference, constant, square-root and linear scaling of that anchor compete.

# %%
lr_points = mean_over_seeds(run_points(lr_runs, config.evaluation.k, lr_labels))
scaling_points = run_points(scaling_runs, config.evaluation.k, scaling_labels)
small_batch = batch_problems * small_n
panels([curves_chart(lr_points, avg, color="base_lr", title=f"easy: base-LR grid at B = {batch_problems * n}, "
                                                             f"mean of {len(lr_seeds)} seeds"),
        curves_chart(scaling_points, avg, color="scaling", title=f"easy: LR scaling at B = {small_batch}")])

# %%
def lr_at(base_lr: float, batch: int, rule: str) -> float:
    return scaled_lr(base_lr, config.recipe.reference_batch, batch, LrScaling(rule))


lr_scores = problem_scores(run_counts(lr_runs, "validation", lr_labels), ["base_lr"], avg)
scaling_scores = problem_scores(run_counts(scaling_runs, "validation", scaling_labels), ["scaling"],
                                avg)
rows = [{"run": f"base LR {lr:g} ({len(lr_seeds)} seeds)",
         "LR at this batch": f"{lr_at(lr, batch_problems * n, config.recipe.lr_scaling):.2g}", avg: lr_scores[lr].mean()}
        for lr in lr_scores.columns]
rows += [{"run": f"{rule} scaling", "LR at this batch": f"{lr_at(anchor, small_batch, rule):.2g}",
          avg: scaling_scores[rule].mean()} for rule in scaling_scores.columns]
table(pd.DataFrame(rows))

# %% [markdown]
# ## Findings at our scale

# %%
seeds = book_seed_variance(config, avg)
findings = []
for set_name, preset in presets.items():
    scores = problem_scores(counts[counts["set"] == set_name], ["recipe"], avg)
    findings.append(best_candidate(scores, preset, f"{set_name}: the preset ({preset}) is the best cell (Fig. 3)", avg,
                                   seeds))
# The regularisers' effect on entropy, at the preset's (the paper's) weights.
empty = history.iloc[:0]
weights = f"KL+entropy at {config.recipe.kl:g}"
findings.append(training_statistic_rises(runs.get(("easy", regularised), empty), runs.get(("easy", "neither"), empty),
                                         ["entropy"], "easy: entropy collapses without KL+entropy (Fig. 3)",
                                         (f"with {weights}", "without")))
findings.append(training_statistic_rises(runs.get(("hard", regularised), empty), runs.get(("hard", "neither"), empty),
                                         ["entropy", "response_length"],
                                         "hard: entropy and length blow up with the entropy bonus (Fig. 3)",
                                         (f"with {weights}", "without")))
findings.append(headline(best_candidate(lr_scores, anchor, f"base-LR grid: the anchor {anchor:g} is best (Fig. 4)", avg,
                                        seeds)))
findings.append(best_candidate(scaling_scores, "sqrt", f"square-root LR scaling is best "
                               f"{config.recipe.reference_batch // small_batch}x below the anchor's batch, "
                               f"B = {small_batch} (Fig. 4)", avg, seeds))
display(design_note(f"the base-LR grid on seeds {', '.join(map(str, lr_seeds))}, the other cells on seed "
                    f"{config.sweep.seeds[0]}", resolvable_difference(lr_scores, seeds), seeds))
FindingsTable(findings, "01_recipe", scale(config, half))
