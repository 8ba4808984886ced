# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Another base model, and the baseline's share of a larger n
#
# Two findings of the paper that the other chapters leave aside. **Base models** (Figure
# 13): Qwen3-4B and Llama-3.1-8B saturate at a smaller $n^*$ than Qwen2.5-7B (on easy,
# Qwen3-4B peaks at $n = 64$ and Llama-3.1-8B at $n = 16$) while their training reward
# keeps rising: the validation reward stops following the training reward, a train-test
# gap. We train a second base model of
# another layout and size (a Llama: no biases, untied embeddings, grouped-query attention;
# `second_model` in the params) on the same task with the same teacher, build its own sets
# from its own avg@16, and run the same $n$-versus-$M$ sweep on its easy set beside the
# main model's (chapter 02's runs). **The baseline** (Appendix C, Figure 22): at a fixed
# $B_p$, $n = 256$ for both the baseline and the gradient beats a decoupled run (the
# baseline from 256 rollouts, the gradient on a random 64 of them), which beats $n = 64$.
# A better baseline helps, but most of the gain of a larger $n$ is exploration. We run the
# three arms at our scale (`baseline` in the params) at matched sampling compute.
#
# **How the verdicts are decided.** Each model's runs score that model's validation
# problems with the same random numbers, so its $n$ compare problem by problem. "The second
# model peaks at a smaller $n^*$" is one contrast: the main model's large-$n$ advantage
# (largest minus smallest $n$) minus the second's, each on its own validation problems. The
# gap compares a run with itself halfway and at the end: how much more its training reward
# rose than its validation score (the training rise with a Welch interval on block means
# of updates, the validation rise as a contrast, the two combined). The baseline arms run
# on two seeds, paired across arms. Every 95% interval holds evaluation and training-seed
# noise, the seed-to-seed variance pooled over chapter 02's two-seed grid.

# %% tags=["parameters"]
params = "params/cpu.yaml"  # a preset from params/; the grid is its sweep section
# Overrides as on the command line: a list of "section.field=value" strings.
overrides = []
budget = None  # rollouts per run; None keeps the params file's sweep.budget

# %% tags=["book-declarations"]
# Read by `isobook book` before the chapter runs: the base models it trains beside the
# params file's, built with the book's other arms before any chapter starts, and what it
# needs to run at all (a second model; `isobook.book.applicability`).
budget_share = 1.0
extra_base_models = ["second-model"]
requirement = "second-model"

# %%
import numpy as np
import pandas as pd
from IPython.display import display

from isobook.analysis.findings.claims import (
    gap_widens,
    greater,
    optimum_at_larger_n,
    optimum_of,
    scores_by_budget,
    set_text,
)
from isobook.analysis.findings.statistics import problem_scores, resolvable_difference
from isobook.analysis.findings.verdicts import headline
from isobook.analysis.frontier import training_rewards
from isobook.analysis.n_star import n_star_table, regime_text
from isobook.book.charts import curves_chart, gap_chart, histogram_chart, n_star_chart, panels, use_offline_renderer
from isobook.book.designs import baseline_arms, model_runs
from isobook.book.kernel import chapter_config
from isobook.book.pages import FindingsTable, design_note, runs_note, scale, table
from isobook.book.seeds import book_seed_variance
from isobook.config import BINNED_SETS
from isobook.grpo.evaluation import metric_name
from isobook.sets.build import prepare_sets
from isobook.sweeps import model_arms, n_grid, run_configs, run_counts, run_history, run_points

use_offline_renderer()
config = chapter_config(params, overrides, budget)
avg = metric_name("avg", config.evaluation)
batch_problems, n_values, budgets = n_grid(config)

# %% [markdown]
# ## Two base models
#
# The same teacher, the same number of steps and batches, the same pool of problems and
# the same avg@16 bins; only the model differs. Its difficulty profile, and so its sets,
# are its own.

# %%
arms = model_arms(config)
summaries = {label: prepare_sets(arm).summary for label, arm in arms.items()}
rows = []
for label, summary in summaries.items():
    histogram = summary["histogram"]
    mean_pass = np.dot(histogram["correct"], histogram["problems"]) / (summary["samples"] * summary["pool_size"])
    rows.append({"model": label, "parameters": summary["parameters"], f"pool mean avg@{summary['samples']}": mean_pass,
                 **{f"{name} (train)": summary["sets"][name]["train"] for name in BINNED_SETS},
                 "stability r": summary["stability"].get("pearson")})
table(pd.DataFrame(rows))

# %%
samples = next(iter(summaries.values()))["samples"]
panels([histogram_chart(pd.DataFrame({f"avg@{samples}": [f"{c / samples:.4f}" for c in s["histogram"]["correct"]],
                                      "problems": s["histogram"]["problems"]}), f"avg@{samples}", "problems",
                        title=f"{label}: problems per avg@{samples} ({s['pool_size']:,} problems)")
        for label, s in summaries.items()], columns=1)

# %% [markdown]
# ## n versus M on each model's easy set
#
# One run per $n$ at the sweep's first $B_p$, to the sweep's budget, on each model's own
# set; the main model's are chapter 02's runs.

# %%
set_name = config.second_model.set
design = model_runs(config)  # the baseline arms below train later
runs, labels = design["arms"].runs, design["arms"].labels
outcomes = run_configs(runs, config, show_progress=False)
points = run_points(runs, config.evaluation.k, labels)
counts = run_counts(runs, "validation", labels)
history = run_history(runs, labels)
display(runs_note(outcomes))
panels([curves_chart(part, avg, title=f"{label}: {set_name}, {avg}, B_p = {batch_problems}")
        for label, part in points.groupby("model", sort=False)])

# %%
seeds = book_seed_variance(config, avg)
largest_batch = batch_problems * max(n_values)
problems = {label: summary["sets"][set_name]["train"] for label, summary in summaries.items()}  # D of each model's set
optima = pd.concat([n_star_table(scores_by_budget(part, ["n"], avg, budgets), ["n"], seeds, problems[label],
                                 largest_batch).assign(model=label)
                    for label, part in counts.groupby("model", sort=False)], ignore_index=True)
display(n_star_chart(optima, "model", title=[f"{set_name}: n* by budget, both base models",
                                             "; ".join(f"{label}: {regime_text(budgets, d, largest_batch)}"
                                                       for label, d in problems.items())]))
by_model = (optima.assign(**{"n*": optima["n"].astype(str) + " " + optima["within noise"].map(set_text)})
            .pivot(index=["rollouts", "updates"], columns="model", values="n*")[list(arms)])
regimes = pd.DataFrame({f"C/D, {label}": by_model.index.get_level_values("rollouts") / d
                        for label, d in problems.items()}, index=by_model.index)
table(pd.concat([regimes, by_model], axis=1).reset_index().rename(columns={"rollouts": "rollouts (n* {n within noise})"}))

# %% [markdown]
# ## Training reward against validation reward
#
# The training reward is the mean reward of the rollouts each run trained on since its
# previous evaluation (dashed), beside the validation score at that evaluation (solid): the
# first averages the policies of that interval, on problems it trains on, the second
# scores the policy at its end on problems it never sees, so the dashed line trails by
# about half an interval. What matters is whether the two move apart: a training reward
# that keeps rising while the validation curve flattens is the paper's train-test gap.

# %%
rewards = training_rewards(history, ["model", "n"], avg).merge(points[["model", "n", "seed", "rollouts", avg]],
                                                               on=["model", "n", "seed", "rollouts"])
panels([gap_chart(part, avg, title=f"{label}: training and validation reward")
        for label, part in rewards.groupby("model", sort=False)])

# %%
final = rewards.loc[rewards.groupby(["model", "n"])["rollouts"].transform("max") == rewards["rollouts"]]
table(final.assign(gap=final["reward"] - final[avg])[["model", "n", "rollouts", "reward", avg, "gap"]],
      rename={"reward": "training reward (last interval)", avg: f"validation {avg}", "gap": "training - validation"})

# %% [markdown]
# ## The baseline: larger n for the baseline alone, or for the gradient too (Appendix C)
#
# Three arms at $B_p$ = the sweep's first, on the same set, each to the same number of
# sampled rollouts: $n$ rollouts per problem for both the baseline and the gradient; the
# decoupled baseline (advantages from the mean and standard deviation of all $n$, the
# gradient on a random `n_train` of them, "decoupled $n$/`n_train`"); and `n_train`
# rollouts per problem alone, which makes $n$ / `n_train` times more updates for the same
# compute. The decoupled arm's learning rate and warm-up follow the batch its gradient sees
# ($B_p$ `n_train`), so update by update it has the `n_train` arm's learning rates: read at
# the same number of updates $M$ (a quarter of the rollouts for 16/4), the two differ only in
# the baseline. Against $n$ for both at matched compute (the same $M$), it differs in how
# many samples carry a gradient and in the learning rate the square-root rule gives that
# smaller batch.

# %%
b = config.baseline
arm_runs = baseline_arms(config)
baseline_runs, baseline_labels = design["baseline"].runs, design["baseline"].labels
display(runs_note(run_configs(baseline_runs, config, show_progress=False)))
baseline_points = run_points(baseline_runs, config.evaluation.k, baseline_labels)
baseline_counts = run_counts(baseline_runs, "validation", baseline_labels)
mean_curves = baseline_points.groupby(["arm", "rollouts"], as_index=False, sort=False)[avg].mean()
curves_chart(mean_curves, avg, color="arm", title=f"{b.set}: {avg}, mean of {len(b.seeds)} seeds, B_p = "
                                                  f"{batch_problems}")

# %%
at_end = baseline_points.loc[baseline_points.groupby(["arm", "seed"])["rollouts"].transform("max")
                             == baseline_points["rollouts"]]
per_seed = at_end.pivot_table(index="arm", columns="seed", values=avg, sort=False)
per_seed.columns = [f"{avg}, seed {seed}" for seed in per_seed.columns]
table(per_seed.assign(**{f"{avg}, mean": per_seed.mean(axis=1)}).reset_index())

# %% [markdown]
# ## Findings at our scale

# %%
main_label, second_label = arms
final = {label: problem_scores(counts[counts["model"] == label], ["n"], avg) for label in arms}
findings = [headline(optimum_at_larger_n((main_label, final[main_label], main_label),
                                         (second_label, final[second_label], second_label),
                                         f"{set_name}: the second base model ({second_label}) peaks at a smaller n* than "
                                         f"the main one ({main_label}) at {config.sweep.budget:,} rollouts (Fig. 13)",
                                         seeds))]
found, _ = optimum_of(final[second_label], seeds)
if found is not None:
    chosen = (history["model"] == second_label) & (history["n"] == found.best)
    findings.append(gap_widens(history[chosen], counts[(counts["model"] == second_label) & (counts["n"] == found.best)],
                               avg, f"{set_name}, {second_label} at its n* = {found.best}: over the second half the "
                               "training reward pulls away from the validation reward (train-test gap, Fig. 13)", seeds))
large, decoupled, small = arm_runs
equal_updates = config.sweep.budget * b.n_train // b.rollouts_per_problem  # the n_train arm's rollouts at the same M
small_at_equal_m = f"{small} at {equal_updates:,} rollouts"
arm_scores = pd.concat([problem_scores(baseline_counts, ["arm"], avg)[[large, decoupled]],
                        problem_scores(baseline_counts[baseline_counts["arm"] == small], ["arm"], avg,
                                       rollouts=equal_updates).rename(columns={small: small_at_equal_m})], axis=1)
for upper, lower, why in ((large, decoupled, "at matched compute, the same M: most of a larger n's gain is "
                           "exploration"),
                          (decoupled, small_at_equal_m, "at the same M and learning rate: a lower-variance baseline "
                           "helps")):
    finding = greater(arm_scores, upper, lower, f"{b.set}: {upper} beats {lower} ({why}; App. C, Fig. 22)",
                      (upper, lower), f"{avg}, {len(b.seeds)} seeds", seeds)
    findings.append(headline(finding) if upper == decoupled else finding)
display(design_note(f"the two models: one seed per n (seed {config.sweep.seeds[0]}); the baseline arms: seeds "
                    f"{', '.join(map(str, b.seeds))}", resolvable_difference(arm_scores, seeds), seeds))
FindingsTable(findings, "07_models_and_baselines", scale(config) + "; baseline arms: seeds "
              + ", ".join(str(seed) for seed in b.seeds))
