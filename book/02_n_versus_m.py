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
# **How the verdicts are decided.** Each $n$ is trained on two seeds. A run's score at a
# budget $C$ is the mean of its evaluations at $C/2$ and $C$. Every claim is decided by one
# contrast, fixed here before the data:
#
# * "$n^*$ grows with $C$": the large-$n$ advantage $A(C)$, the score of the largest $n$
#   minus the smallest, at each power-of-two budget: reproduced when its trend over
#   $\log_2 C$ is positive and large $n$ is ahead at the largest budget, both beyond noise;
# * "metric X peaks at a larger $n$ than metric Y" (and "hard peaks at a smaller $n^*$ than
#   easy"): X's large-$n$ advantage minus Y's at the budget.
#
# Each interval holds evaluation noise and training-seed noise: the two-way random-effects
# model of `isobook.analysis.findings.statistics`, with seeds paired across the arms that
# share them and the seed-to-seed variance pooled over this grid's neighbouring $n$. The
# design note above the findings says how small a difference these intervals resolve.

# %% tags=["parameters"]
params = "params/cpu.yaml"  # a preset from params/; the grid is its sweep section
# Overrides as on the command line: a list of "section.field=value" strings.
overrides = []
budget = None  # rollouts per run; None keeps the params file's sweep.budget

# %%
import pandas as pd
from IPython.display import display

from isobook.analysis.findings.claims import (
    n_star_grows,
    optima_by_budget,
    optimum_at_larger_n,
    optimum_of,
    scores_by_budget,
)
from isobook.analysis.findings.statistics import problem_scores, resolvable_difference
from isobook.analysis.findings.verdicts import headline
from isobook.analysis.frontier import analyse_frontier
from isobook.book.charts import curves_chart, frontier_chart, optimal_chart, panels, use_offline_renderer
from isobook.book.kernel import chapter_config
from isobook.book.pages import FindingsTable, design_note, note, runs_note, scale, table
from isobook.book.seeds import book_seed_variance, reference_grid
from isobook.grpo.evaluation import metric_name, power_of_two_budgets
from isobook.sweeps import mean_over_seeds, run_counts, run_sweep, sweep_configs, sweep_points

use_offline_renderer()
config = chapter_config(params, overrides, budget)
avg, best, worst = (metric_name(kind, config.evaluation) for kind in ("avg", "best", "worst"))
batch_problems = config.sweep.batch_problems[0]
grid = reference_grid(config)  # B_p fixed, two seeds: the grid every chapter's seed variance is measured on
budgets = power_of_two_budgets(config.evaluation, config.sweep.budget)

# %%
outcomes = run_sweep(grid, show_progress=False)
points = mean_over_seeds(sweep_points(grid))  # the curves and frontier fits read the mean of the seeds
counts = run_counts(sweep_configs(grid), "validation")
seeds = book_seed_variance(config, avg)
runs_note(outcomes)

# %% [markdown]
# ## Reward versus compute, one curve per n (mean of the seeds)

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
# The measured $n^*$ at each power-of-two budget (each run's mean of its evaluations at
# half the budget and at it, averaged over seeds), with the $n$ within noise of it and the
# best's lead over the runner-up:

# %%
optima = {set_name: optima_by_budget(counts[counts["set"] == set_name], ["n"], avg, budgets, seeds)
          for set_name in points["set"].unique()}
table(pd.concat([o.assign(set=s) for s, o in optima.items()])[["set", "rollouts", "n", "score", "within noise",
                                                                "lead"]],
      rename={"n": "n*", "score": avg, "within noise": "n within noise", "lead": "lead over runner-up"})

# %% [markdown]
# ## Coverage and sharpening: which n is best for best@k and for worst@k
#
# At the budget, the $n$ that maximises each metric, and the $n$ within noise of it.

# %%
final = {set_name: {metric: problem_scores(counts[counts["set"] == set_name], ["n"], metric)
                    for metric in (avg, best, worst)} for set_name in ("easy", "hard")}
at_budget = {set_name: {metric: optimum_of(scores, seeds) for metric, scores in by_metric.items()}
             for set_name, by_metric in final.items()}
table(pd.DataFrame([{"set": s, "metric": m, "n*": o.best, "score": o.value, "n within noise": tuple(levels)}
                    for s, by_metric in at_budget.items() for m, (o, levels) in by_metric.items() if o]))

# %% [markdown]
# ## Findings at our scale

# %%
findings = [headline(n_star_grows(scores_by_budget(counts[counts["set"] == s], ["n"], avg, budgets),
                                  f"{s}: n* grows with C (Fig. 5-6)", seeds)) for s in optima]
# Paper: sharpening (worst@k) wants large n on easy, coverage (best@k) wants large n on hard.
for set_name, wanted, other in (("easy", worst, best), ("hard", best, worst)):
    findings.append(optimum_at_larger_n((str(wanted), final[set_name][wanted], set_name),
                                        (str(other), final[set_name][other], set_name),
                                        f"{set_name}: {wanted} peaks at a larger n than {other} (Fig. 7)", seeds))
findings.append(optimum_at_larger_n(("easy", final["easy"][avg], "easy"), ("hard", final["hard"][avg], "hard"),
                                    "hard peaks at a smaller n* than easy at the budget (Fig. 6)", seeds))
display(design_note(f"every n on seeds {', '.join(map(str, grid.sweep.seeds))}",
                    resolvable_difference(final["hard"][avg], seeds), seeds))
FindingsTable(findings, "02_n_versus_m", scale(config))
