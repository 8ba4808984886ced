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
# **How the verdicts are decided.** At each power-of-two budget the splits compare problem
# by problem (95% paired bootstrap over validation problems); $n^*(M)$ "rises" only when
# every $n$ within noise of the best split after the most updates exceeds every $n$ within
# noise after the fewest. The sensitivity claim compares the two spreads of final reward
# through the same bootstrap. Each split is one trained run (one seed): the intervals hold
# evaluation noise, not seed-to-seed training noise. More updates (a larger `budget`) are
# what would let $n^*(M)$ move.

# %% tags=["parameters"]
params = "params/cpu.yaml"  # a preset from params/; the grid is its sweep section
# Overrides as on the command line: a list of "section.field=value" strings.
overrides = []
budget = None  # rollouts per run; None keeps the params file's sweep.budget

# %%
from collections import Counter

import pandas as pd

from isobook.analysis.findings.claims import n_star_grows, optima_by_budget, spread_comparison
from isobook.analysis.findings.statistics import problem_scores
from isobook.analysis.frontier import analyse_frontier
from isobook.book.charts import frontier_chart, panels, use_offline_renderer
from isobook.book.kernel import chapter_config
from isobook.book.pages import FindingsTable, runs_note, scale, table
from isobook.grpo.evaluation import metric_name, power_of_two_budgets
from isobook.sweeps import run_configs, run_counts, run_points, sweep_configs

use_offline_renderer()
config = chapter_config(params, overrides, budget)
avg = metric_name("avg", config.evaluation)
grid = sweep_configs(config)
# The batch size that the sweep's grid splits in the most ways (the smallest among ties).
splits = Counter(c.train.batch_rollouts for c in grid)
batch = min(splits, key=lambda b: (-splits[b], b))
fixed = [c for c in grid if c.train.batch_rollouts == batch]
# For the sensitivity study: the fixed-B runs and chapter 02's runs at the grid's first B_p.
sensitivity = fixed + [c for c in grid if c.train.batch_problems == config.sweep.batch_problems[0]]
budgets = [b for b in power_of_two_budgets(config.evaluation, config.sweep.budget) if b >= batch]

# %%
outcomes = run_configs(sensitivity, config, show_progress=False)
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
                       title=f"{set_name}: B = {batch}, frontier coloured by n*")
        for set_name, a in analysis.items() if not a.fitted.empty])

# %% [markdown]
# The best split after $M$ updates, each run read at its latest evaluation within the
# budget, with the $n$ within noise of it:

# %%
optima = {set_name: optima_by_budget(counts[counts["set"] == set_name], ["batch_problems", "n"], avg, budgets)
          for set_name in points["set"].unique()}
table(pd.concat([o.assign(set=s, updates=o["rollouts"] / batch) for s, o in optima.items()])
      [["set", "updates", "rollouts", "batch_problems", "n", "score", "within noise", "lead"]],
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
    findings.append(n_star_grows(optima[set_name], f"{set_name}: at B = {batch}, n*(M) rises with M and B_p*(M) "
                                                   "falls (Fig. 8)"))
    findings.append(spread_comparison(final[set_name], f"{set_name}: B_p matters less than n (Fig. 9)", avg))
FindingsTable(findings, "03_bp_versus_n", scale(config))
