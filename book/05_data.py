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
# Two questions about the training set (paper Figures 14-15). **Size**: with
# few distinct problems every extra rollout revisits the same ones, so the paper's frontier
# with $D = 500$ stops at a smaller $n$ than with $D = 6\mathrm{k}$ (larger $n$ even
# degrades). **Skew**: trained on mixtures of hard, easy and very easy problems, larger $n$
# wins past a data-dependent compute threshold on most validation sets, all-hard training
# forgets easy problems, and very easy data does not help. We train on a small slice of the
# easy set beside the full set (both scored on easy validation), and on the hard set and
# two mixtures, whose final policies, and the base model, are scored on the easy, hard and
# very easy validation splits.
#
# **How the verdicts are decided.** Every policy scores each validation split with the
# same random numbers, so policies compare problem by problem. Each run is one seed, so
# its 95% interval holds the evaluation noise and the seed-to-seed variance borrowed from
# chapter 02's two-seed grid, on the few degrees of freedom that keep it safe for a
# contrast more variable than the pool. "A small set stops the frontier at a smaller $n$"
# is decided by one contrast: the full set's large-$n$ advantage (largest minus smallest
# $n$) minus the small set's. "Very easy data does not help" is a claim of no gain: it
# holds when the gain's interval stays below the margin (+0.03), and fails when it lies
# above it.

# %% tags=["parameters"]
params = "params/cpu.yaml"  # a preset from params/; the grid is its sweep section
# Overrides as on the command line: a list of "section.field=value" strings.
overrides = []
budget = None  # rollouts per run; None keeps the params file's sweep.budget
data_fraction = 0.125  # the small training set's share of the easy set (paper: 500 of 6k, 1/12)

# %% tags=["book-declarations"]
# Read by `isobook book` before the chapter runs: what it needs to run at all (the mixtures
# it trains on; `isobook.book.applicability`).
requirement = "mixtures"

# %%
import pandas as pd
from IPython.display import display

from isobook.analysis.findings.claims import gains_nothing, greater, optimum_at_larger_n, wins_on_most
from isobook.analysis.findings.statistics import Contrast, problem_scores, resolvable_difference
from isobook.analysis.findings.verdicts import headline
from isobook.book.charts import curves_chart, panels, use_offline_renderer
from isobook.book.designs import data_n_values, data_runs, small_data_size
from isobook.book.kernel import chapter_config
from isobook.book.pages import FindingsTable, design_note, runs_note, scale, table
from isobook.book.seeds import book_seed_variance
from isobook.config import BINNED_SETS
from isobook.grpo.evaluation import metric_name
from isobook.grpo.transfer import transfer_counts
from isobook.sets.build import load_set, prepare_sets
from isobook.sweeps import run_configs, run_counts, run_points

use_offline_renderer()
config = chapter_config(params, overrides, budget)
avg = metric_name("avg", config.evaluation)
batch_problems = config.sweep.batch_problems[0]
n_values = data_n_values(config)
small_n, large_n = min(n_values), max(n_values)

# %% [markdown]
# ## Data size (Figure 14)
#
# The full easy set and a small slice of it (its first problems), at the smallest and the
# largest $n$ of the grid ($B_p$ fixed at the grid's first value). The full-set runs are
# chapter 02's.

# %%
easy_size = load_set(prepare_sets(config), "easy")["train"].num_rows
small_size = small_data_size(config, data_fraction, easy_size)
# The mixture runs of the next section train now with these (one pool keeps every worker busy).
design = data_runs(config, small_size, easy_size)
size_runs, size_labels, mixture_runs = design["sizes"].runs, design["sizes"].labels, design["mixtures"].runs
sizes = list(dict.fromkeys(label["data"] for label in size_labels))  # the full set's label, then the small one's
outcomes = run_configs(size_runs + mixture_runs, config, show_progress=False)
size_points = run_points(size_runs, config.evaluation.k, size_labels)
size_counts = run_counts(size_runs, "validation", size_labels)
runs_note(outcomes)

# %%
panels([curves_chart(part, avg, title=f"easy, {data}, B_p = {batch_problems}")
        for data, part in size_points.groupby("data", sort=False)])

# %% [markdown]
# ## Mixtures (Figure 15)
#
# Runs on the hard set (chapter 02's), on `mix-dual` (50% hard, 50% easy) at both $n$, and
# on `mix-tri` (50% hard, 25% easy, 25% very easy) at the largest; then each final policy,
# and the base model, on three validation splits.

# %%
validation_sets = list(BINNED_SETS)
transfer = transfer_counts(mixture_runs, validation_sets)
scores = {name: problem_scores(part, ["train_set", "n"], avg) for name, part in transfer.groupby("set")}
table(pd.DataFrame([{"trained on": "base model" if t == "-" else t, "n": n,
                     **{f"{avg} on {name}": scores[name][(t, n)].mean() for name in validation_sets}}
                    for t, n in scores[validation_sets[0]].columns]))

# %% [markdown]
# ## Findings at our scale

# %%
seeds = book_seed_variance(config, avg)
full_label, small_label = sizes
by_size = {label: problem_scores(size_counts[size_counts["data"] == label], ["n"], avg) for label in sizes}
findings = [headline(optimum_at_larger_n((full_label, by_size[full_label], "easy"),
                                         (small_label, by_size[small_label], "easy"),
                                         f"a small training set stops the frontier at a smaller n (Fig. 14; n in "
                                         f"{{{small_n}, {large_n}}}, {config.sweep.budget:,} rollouts)", seeds))]
easy, hard = scores["easy"], scores["hard"]  # columns (train_set, n); the base model is ("-", 0)
findings.append(headline(greater(easy, ("-", 0), ("hard", large_n),
                                 "training on hard problems only forgets easy ones (Fig. 15)",
                                 ("base model", f"hard-only, n = {large_n}"), f"{avg} on easy", seeds)))
findings.append(gains_nothing(hard, ("mix-tri", large_n), ("mix-dual", large_n),
                              "very easy data does not help: mix-tri gains nothing over mix-dual on hard (Fig. 15)",
                              (f"mix-tri, n = {large_n}", f"mix-dual, n = {large_n}"), f"{avg} on hard", seeds))
mixture = ("mix-dual", large_n), ("mix-dual", small_n)
findings.append(wins_on_most({name: Contrast.difference(s, *mixture, problems=name) if set(mixture) <= set(s.columns)
                              else None for name, s in scores.items()},
                             "on a mixture, larger n wins on most validation sets at the budget (Fig. 15)",
                             (f"mix-dual n = {large_n}", f"n = {small_n}"), avg, seeds))
display(design_note(f"one seed per run (seed {config.sweep.seeds[0]})",
                    resolvable_difference(by_size[full_label], seeds), seeds))
FindingsTable(findings, "05_data", scale(config))
