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
# updates ($M = C / (B_p n)$). The paper (Figures 5-7) finds that the
# compute-optimal $n^*(C)$ grows with $C$ as a sigmoid in log-log and saturates: small $n$
# rises fast and plateaus, large $n$ keeps improving. It also finds that the metric
# matters: on easy problems a large $n$ is best for worst@k (sharpening), on hard ones for
# best@k (coverage). We run one GRPO run per $n$ to the sweep's budget (one run yields its
# whole reward-versus-compute curve), fit a monotone sigmoid per $n$ on its
# record-breaking points, and take the upper envelope.
#
# **How the verdicts are decided.** Every run scores the same validation problems with the
# same random numbers, so two values of $n$ compare problem by problem; an $n$ is "within
# noise" of $n^*$ when the 95% paired-bootstrap interval of its deficit to $n^*$ holds zero.
# "$n^*$ grows" is reproduced only when every $n$ within noise at the largest budget
# exceeds every $n$ within noise at the smallest. Each $n$ is one trained run (one seed),
# so the intervals hold evaluation noise, not seed-to-seed training noise. A larger budget
# (`budget`), more validation problems or more seeds would sharpen or overturn the
# verdicts below.

# %% tags=["parameters"]
params = "params/cpu.yaml"  # a preset from params/; the grid is its sweep section
# Overrides as on the command line: a list of "section.field=value" strings.
overrides = []
budget = None  # rollouts per run; None keeps the params file's sweep.budget

# %%
from dataclasses import replace

import pandas as pd
from IPython.display import display

from isobook.analysis.findings.claims import n_star_grows, optima_by_budget, optimum_above, optimum_of
from isobook.analysis.frontier import analyse_frontier
from isobook.book.charts import curves_chart, frontier_chart, optimal_chart, panels, use_offline_renderer
from isobook.book.kernel import chapter_config
from isobook.book.pages import FindingsTable, note, runs_note, scale, table
from isobook.grpo.evaluation import metric_name, power_of_two_budgets
from isobook.sweeps import run_counts, run_sweep, sweep_configs, sweep_points

use_offline_renderer()
config = chapter_config(params, overrides, budget)
avg, best, worst = (metric_name(kind, config.evaluation) for kind in ("avg", "best", "worst"))
batch_problems = config.sweep.batch_problems[0]
grid = replace(config, sweep=replace(config.sweep, batch_problems=(batch_problems,)))
budgets = power_of_two_budgets(config.evaluation, config.sweep.budget)

# %%
outcomes = run_sweep(grid, show_progress=False)
points = sweep_points(grid)
counts = run_counts(sweep_configs(grid), "validation")
runs_note(outcomes)

# %% [markdown]
# ## Reward versus compute, one curve per n

# %%
panels([curves_chart(part, avg, title=f"{set_name}: {avg}, B_p = {batch_problems}")
        for set_name, part in points.groupby("set")])

# %% [markdown]
# ## The compute-optimal frontier and n*(C)
#
# Grey: the fitted sigmoid of each $n$; dots: their upper envelope, coloured by the $n$
# attaining it.

# %%
analysis = {set_name: analyse_frontier(part, ["n"], avg, config.sweep.budget)
            for set_name, part in points.groupby("set")}
for set_name, a in analysis.items():
    if a.fitted.empty:
        display(note(f"{set_name}: no curve could be fitted, so there is no frontier to draw."))
panels([frontier_chart(a.fits, a.fitted, avg, title=f"{set_name}: frontier coloured by n*")
        for set_name, a in analysis.items() if not a.fitted.empty])

# %% [markdown]
# The sigmoid of $\log_2 n^*$ against $\log_2 C$ (paper Figure 6), where $n^*$ changes
# along the frontier:

# %%
fitted = {set_name: a for set_name, a in analysis.items() if a.n_star is not None}
for set_name, a in analysis.items():
    if a.n_star is None:
        display(note(f"{set_name}: {a.why_no_fit}"))
panels([optimal_chart(a.fitted, a.n_star, title=f"{set_name}: log2 n* vs rollouts, sigmoid fit")
        for set_name, a in fitted.items()]) if fitted else None

# %% [markdown]
# The measured $n^*$ at each power-of-two budget, each run read at its latest evaluation
# within the budget, with the $n$ within noise of it and the best's lead over the
# runner-up:

# %%
optima = {set_name: optima_by_budget(counts[counts["set"] == set_name], ["n"], avg, budgets)
          for set_name in points["set"].unique()}
table(pd.concat([o.assign(set=s) for s, o in optima.items()])[["set", "rollouts", "n", "score", "within noise",
                                                                "lead"]],
      rename={"n": "n*", "score": avg, "within noise": "n within noise", "lead": "lead over runner-up"})

# %% [markdown]
# ## Coverage and sharpening: which n is best for best@k and for worst@k
#
# At the budget, the $n$ that maximises each metric, and the $n$ within noise of it.

# %%
at_budget = {set_name: {metric: optimum_of(counts[counts["set"] == set_name], ["n"], metric)
                        for metric in (avg, best, worst)} for set_name in ("easy", "hard")}
table(pd.DataFrame([{"set": s, "metric": m, "n*": o.best, "score": o.value, "n within noise": tuple(levels)}
                    for s, by_metric in at_budget.items() for m, (o, levels) in by_metric.items() if o]))

# %% [markdown]
# ## Findings at our scale

# %%
findings = [n_star_grows(optima[s], f"{s}: n* grows with C (Fig. 5-6)") for s in optima]
# Paper: sharpening (worst@k) wants large n on easy, coverage (best@k) wants large n on hard.
for set_name, wanted, other in (("easy", worst, best), ("hard", best, worst)):
    findings.append(optimum_above((wanted, *at_budget[set_name][wanted]), (other, *at_budget[set_name][other]),
                                  f"{set_name}: {wanted} peaks at a larger n than {other} (Fig. 7)"))
findings.append(optimum_above(("easy", *at_budget["easy"][avg]), ("hard", *at_budget["hard"][avg]),
                              "hard peaks at a smaller n* than easy at the budget (Fig. 6)"))
FindingsTable(findings, "02_n_versus_m", scale(config))
