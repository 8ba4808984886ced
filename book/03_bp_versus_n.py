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
# problems (large $B_p$) and many rollouts per problem (large $n$). The paper (Figures
# 8-9) finds that $n^*(M)$ rises with $M$ while $B_p^*(M)$ falls (few updates
# favour many problems, many updates favour large groups), and that varying $B_p$ at fixed
# $n$ moves the final reward much less than varying $n$ at fixed $B_p$.
#
# **How the verdicts are decided.** A run's score at a budget is the mean of its
# evaluations at half that budget and at it. "$n^*(M)$ rises" is decided as chapter 02's
# "$n^*$ grows", fixed here: every larger-$n$ split's score minus the smallest-$n$ split's on
# the logit scale, its trend over $\log_2$ of the budget (resolved positive) and its value
# after the most updates. The sensitivity claim is the mean change between runs differing only in $n$
# minus that between runs differing only in $B_p$; "$B_p$ matters little" is the mean
# change between runs differing only in $B_p$, which must stay within ±0.03 (an
# equivalence test: the paper calls its 1.9- and 2.2-point spreads little). Each split is
# one trained run (one seed); its intervals hold evaluation noise and the seed-to-seed
# variance borrowed from chapter 02's two-seed grid. More updates (a larger `budget`) are
# what would let $n^*(M)$ move.

# %% tags=["parameters"]
params = "params/cpu.yaml"  # a preset from params/; the grid is its sweep section
# Overrides as on the command line: a list of "section.field=value" strings.
overrides = []
budget = None  # rollouts per run; None keeps the params file's sweep.budget

# %%

import pandas as pd
from IPython.display import display

from isobook.analysis.findings.claims import (
    matters_little,
    n_star_grows,
    scores_by_budget,
    spread_comparison,
)
from isobook.analysis.findings.statistics import problem_scores, resolvable_difference
from isobook.analysis.findings.verdicts import headline
from isobook.analysis.frontier import analyse_frontier
from isobook.analysis.n_star import n_star_table, regime_text
from isobook.book.charts import frontier_chart, panels, use_offline_renderer
from isobook.book.designs import sensitivity_runs
from isobook.book.kernel import chapter_config
from isobook.book.pages import FindingsTable, design_note, runs_note, scale, table
from isobook.book.seeds import book_seed_variance
from isobook.grpo.evaluation import metric_name, power_of_two_budgets
from isobook.sets.build import prepare_sets
from isobook.sweeps import run_configs, run_counts, run_points

use_offline_renderer()
config = chapter_config(params, overrides, budget)
avg = metric_name("avg", config.evaluation)
design = sensitivity_runs(config)  # the fixed-B runs, and with them chapter 02's at the grid's first B_p
fixed, sensitivity = design["fixed"], design["sensitivity"]
batch = fixed[0].train.batch_rollouts  # the batch size the sweep's grid splits in the most ways
budgets = [b for b in power_of_two_budgets(config.evaluation, config.sweep.budget) if b >= batch]

# %%
outcomes = run_configs(sensitivity, config, show_progress=False)
problems = {name: sizes["train"] for name, sizes in prepare_sets(config).summary["sets"].items()}  # D of each set
points = run_points(fixed, config.evaluation.k)
counts = run_counts(fixed, "validation")
runs_note(outcomes)

# %% [markdown]
# ## Which split wins after M updates
#
# Every split of $B$ = `batch` rollouts per update, on each set: grey, the fitted curve
# of each $(B_p, n)$; dots, their envelope coloured by the $n$ attaining it.

# %%
analysis = {set_name: analyse_frontier(part, ["batch_problems", "n"], avg, config.sweep.budget, step=0.5)
            for set_name, part in points.groupby("set")}
panels([frontier_chart({(n,): f for (_, n), f in a.fits.items()}, a.fitted, avg,
                       title=[f"{set_name}: B = {batch}, frontier coloured by n*",
                              regime_text(budgets, problems[set_name], batch)])
        for set_name, a in analysis.items() if not a.fitted.empty])

# %% [markdown]
# The best split after $M$ updates, each run read as the mean of its evaluations at half
# the budget and at it, with the $n$ within noise of it (C/D: rollouts per training
# problem; updates: of the fixed batch):

# %%
seeds = book_seed_variance(config, avg)
optima = {set_name: n_star_table(scores_by_budget(counts[counts["set"] == set_name], ["batch_problems", "n"], avg,
                                                  budgets), ["batch_problems", "n"], seeds, problems[set_name], batch)
          for set_name in points["set"].unique()}
table(pd.concat([o.assign(set=s) for s, o in optima.items()])
      [["set", "rollouts", "C/D", "updates", "batch_problems", "n", "score", "within noise", "lead"]],
      rename={"batch_problems": "B_p*", "n": "n*", "score": avg, "within noise": "n within noise",
              "lead": "lead over runner-up"})

# %% [markdown]
# ## Sensitivity: B_p at fixed n versus n at fixed B_p (Figure 9)
#
# The fixed-$B$ runs above and chapter 02's runs at the grid's first $B_p$ (shared through
# the run store), each at the sweep's budget. The paper compares the range of final reward
# over $B_p$ at fixed $n$ with the range over $n$ at fixed $B_p$; these runs have four $n$
# at the first $B_p$ but at most two $B_p$ at any $n$, and a range grows with the runs it
# spans, so we compare the mean change between two runs that differ only in $B_p$ with that
# between two runs that differ only in $n$.

# %%
final = {set_name: problem_scores(part, ["batch_problems", "n"], avg, rollouts=config.sweep.budget)
         for set_name, part in run_counts(sensitivity, "validation").groupby("set")}
table(pd.concat([pd.DataFrame({"set": s, "B_p": [bp for bp, _ in f.columns], "n": [n for _, n in f.columns],
                               avg: f.mean().to_numpy()}) for s, f in final.items()]))

# %% [markdown]
# ## Findings at our scale

# %%
findings = []
for set_name in optima:
    by_budget = scores_by_budget(counts[counts["set"] == set_name], ["batch_problems", "n"], avg, budgets)
    findings.append(n_star_grows(by_budget, f"{set_name}: at B = {batch}, n*(M) rises with M and B_p*(M) falls (Fig. 8)",
                                 seeds))
    findings.append(spread_comparison(final[set_name], f"{set_name}: B_p matters less than n (Fig. 9)", avg, seeds))
    findings.append(headline(matters_little(final[set_name], f"{set_name}: at fixed n, B_p matters little (Fig. 9: a "
                                            "spread of about 2 points)", avg, seeds)))
display(design_note(f"one seed per split (seed {config.sweep.seeds[0]})",
                    resolvable_difference(next(iter(final.values())), seeds), seeds))
FindingsTable(findings, "03_bp_versus_n", scale(config))
