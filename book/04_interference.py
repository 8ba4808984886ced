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
# our model's runs from chapter 02, and compare the pass@1 histograms of the smallest and
# largest $n$ at the same compute and after the same epochs.
#
# **How the verdicts are decided.** The bandits average many seeds: an $n$ wins where its
# lead exceeds a 95% Student-t interval over seeds. The LLM's $n^*$ at each budget comes
# with the $n$ within noise of it; "$n^*$ grows" is decided by one contrast, the score of the
# largest $n$ minus the smallest, its trend over $\log_2 C$ and its value at the largest
# budget. Its 95% interval holds evaluation and training-seed noise (seeds paired across
# the $n$ that share them, each contrast's seed variance moderated by the pool of chapter
# 02's two-seed grid); the pass@1 pile-ups compare the same validation problems under
# both $n$, seed by seed. Our task's problems share one skill, so the chapter tests the
# explanation on the bandit with parameters shared across problems; chapter 08 takes the
# question further (the bandits under the LLM's optimizer, the learning-rate rule,
# problems made to compete, a task whose hard problems need exploration).

# %% tags=["parameters"]
params = "params/cpu.yaml"  # a preset from params/; the grid is its sweep section
# Overrides as on the command line: a list of "section.field=value" strings.
overrides = []
budget = None  # rollouts per run; None keeps the params file's sweep.budget

# %%
import numpy as np
import pandas as pd
from IPython.display import display

from isobook.analysis.bandit import (
    STEP_RULES,
    BanditSetup,
    bandit_seed,
    best_n,
    comparable_budgets,
    interference_curves,
    suboptimality_curves,
)
from isobook.analysis.findings.bandit_claims import bandit_n_star_grows, bandit_optima, bandit_optimum, smallest_n_wins
from isobook.analysis.findings.claims import optimum_above, optimum_of, piles_up, set_text
from isobook.analysis.findings.statistics import problem_scores, resolvable_difference
from isobook.analysis.findings.verdicts import headline
from isobook.analysis.frontier import measured_frontier, pass_summary
from isobook.analysis.n_star import regime_text, with_regime
from isobook.book.charts import curves_chart, n_star_chart, panels, pass_chart, use_offline_renderer
from isobook.book.designs import interference_runs
from isobook.book.kernel import chapter_config
from isobook.book.pages import FindingsTable, design_note, note, runs_note, scale, table
from isobook.book.seeds import book_seed_variance
from isobook.grpo.evaluation import metric_name
from isobook.sets.build import load_set, prepare_sets
from isobook.sweeps import n_grid, run_configs, run_counts, run_points, run_train_pass

use_offline_renderer()
config = chapter_config(params, overrides, budget)
avg = metric_name("avg", config.evaluation)
batch_problems, n_values, budgets = n_grid(config)

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
                                                config.sweep.budget, seed=bandit_seed(config))
                    for start in (0.45, 0.03)}, names=["start pass@1"]).reset_index(0)
panels([curves_chart(part, "suboptimality", title=f"one problem, start pass@1 {start}")
        for start, part in single.groupby("start pass@1")])

# %%
main_sets = prepare_sets(config)
many, sizes = {}, {}
for set_name in config.sweep.sets:
    train = load_set(main_sets, set_name)["train"]
    start = np.clip(np.array(train["correct"]) / np.array(train["samples"]), 0.01, 0.99)
    setup = BanditSetup(start_pass=start, batch_problems=min(batch_problems, start.size), seeds=16)
    many[set_name] = suboptimality_curves(setup, n_values, config.sweep.budget, seed=bandit_seed(config))
    sizes[set_name] = start.size
panels([curves_chart(curves, "suboptimality", title=f"{set_name}: {sizes[set_name]:,} tabular problems, "
                                                    f"B_p = {batch_problems}") for set_name, curves in many.items()])

# %% [markdown]
# ## The same bandit with shared parameters
#
# The paper's explanation needs problems that share parameters, so the base case gains a
# twin that differs in that alone. Every problem now answers from one shared set of
# answers, its own correct one drawn at random, and its logits are $b_p + W x_p$: fixed
# random features $x_p \sim N(0, I/d)$ per problem and one weight matrix $W$ for all. A
# step on problem $p$ moves its own logits as the tabular step does ($|x_p|^2 \approx 1$)
# and every other problem's by $x_p \cdot x_q$ times as much: with $d$ smaller than the
# number of problems, they compete for $W$. One-hot features ($d = P$) make $W$ a table,
# the tabular bandit (a test checks it draw for draw), which runs here at the same
# settings. The curves are kept in the run store (`outputs/bandits/`), so a rebuild reads
# them. All start at pass@1 = 1/answers and take GRPO steps of the same constant size
# on each drawn problem; $n^*$ at each budget comes with the $n$ within noise of it: a
# deficit within a 95% Student-t interval over seeds.

# %%
settings = config.bandit
shared_budgets = comparable_budgets(settings)
sharing, split = interference_curves(config)  # kept in the run store; `isobook book` computes them early
sharing["pass@1"] = 1 - sharing["suboptimality"]
sharing["policy"] = sharing["features"].map(lambda d: f"tabular (d = P = {d})" if d == settings.problems
                                            else f"d = {d}")
policies = list(dict.fromkeys(sharing["policy"]))
shared_optima = pd.concat([bandit_optima(part, shared_budgets).assign(policy=policy)
                           for policy, part in sharing.groupby("policy", sort=False)], ignore_index=True)
note(f"{settings.problems} problems of {settings.actions} answers, B_p = {settings.batch_problems}, step size "
     f"{settings.lr:g}, {settings.seeds} seeds, up to {settings.budget:,} rollouts per curve.")

# %%
panels([curves_chart(sharing[sharing["policy"] == policy], "pass@1", title=policy) for policy in policies])

# %%
n_star_chart(shared_optima, "policy", title=[
    "n* by budget: tabular and shared features",
    regime_text(shared_budgets, settings.problems, settings.batch_problems * max(settings.rollouts_per_problem))])

# %%
bandit_batch = settings.batch_problems * max(settings.rollouts_per_problem)
table(with_regime(shared_optima.assign(**{"n*": shared_optima["n"].astype(str) + " "
                                          + shared_optima["within noise"].map(set_text)})
                  .pivot(index="rollouts", columns="policy", values="n*")[policies].reset_index(),
                  settings.problems, bandit_batch)
      .rename(columns={"rollouts": "rollouts (n* {n within noise})"}))

# %% [markdown]
# ### Is it n, or the batch?
#
# At a fixed $B_p$ a larger $n$ is also a larger batch. Holding the batch $B_p \times n$
# fixed and moving its split between problems and rollouts per problem tells the two
# apart: if $n^*$ still grows with compute at a fixed batch, what the budget buys is $n$
# itself; if the split does not matter, it is the batch. How large a step each split
# takes matters too, so it runs under two rules: the same step on each drawn problem (as
# above: a larger $B_p$ then moves $W$ more per update) and the same step per update (the
# step on each problem scaled by $B_p$ above over this split's $B_p$: a smaller $B_p$ then
# takes larger steps per problem). Where both rules agree, the step size does not decide.

# %%
split_features = sorted(settings.features)[len(settings.features) // 2]
split["pass@1"] = 1 - split["suboptimality"]
split["B_p x n"] = split["batch_problems"].astype(str) + " x " + split["n"].astype(str)
split_optima = pd.concat([bandit_optima(part, shared_budgets).assign(step=rule)
                          for rule, part in split.groupby("step", sort=False)], ignore_index=True)
panels([curves_chart(part.sort_values("n"), "pass@1", color="B_p x n",
                     title=f"d = {split_features}, B_p x n = {settings.fixed_batch}, same step {rule}")
        for rule, part in split.groupby("step", sort=False)])

# %%
table(with_regime(split_optima.assign(**{"n within noise": split_optima["within noise"].map(set_text)})
                  [["step", "rollouts", "n", "score", "n within noise"]], settings.problems, settings.fixed_batch),
      rename={"step": "same step", "n": "n*", "score": "pass@1 at n*"})

# %% [markdown]
# ## The base case beside the LLM: n* at each budget
#
# The bandits' best $n$ (lowest suboptimality) against the LLM's measured $n^*$ (each
# curve's running best of validation reward) on the same grid, from chapter 02's runs.

# %%
runs = interference_runs(config)["grid"]
outcomes = run_configs(runs, config, show_progress=False)
seeds = book_seed_variance(config, avg)
points = run_points(runs, config.evaluation.k)
counts = run_counts(runs, "validation")
compare = []
for set_name, curves in many.items():
    bandit = best_n(curves, budgets).rename(columns={"n": "bandit n*"})
    llm = measured_frontier(points[points["set"] == set_name], np.log2(budgets), by=["n"], metric=avg)
    compare.append(bandit[["rollouts", "bandit n*"]].merge(
        llm[["rollouts", "n"]].rename(columns={"n": "LLM n*"}), on="rollouts", how="left").pipe(
        with_regime, sizes[set_name], batch_problems * max(n_values)).assign(set=set_name))
display(runs_note(outcomes))
table(pd.concat(compare, ignore_index=True)[["set", "rollouts", "C/D", "updates", "bandit n*", "LLM n*"]])

# %% [markdown]
# ## Pass@1 histograms at matched compute and matched epochs (Figure 12)
#
# The charts and the first table: per-problem pass@1 (8 samples) on the set's first
# training problems, measured at the `interference.train_pass_rollouts` points, for the
# smallest and the largest $n$ of chapter 02's grid (trained here with that measurement,
# on the same seeds) on each set of `interference.sets`, on every seed of
# `interference.seeds` (the charts show the first seed). The two $n$ did not
# visit those problems equally: by the budget the small group has drawn about every
# training problem once, the large group only the problems its 16 updates drew, a few of
# these. So the verdicts read the same runs on their validation problems, which neither
# trained on: a problem is at 0 when none of its samples is right and at 1 when all are.
#
# Two pairings decide, each at the last point both sides measured: matched compute (the
# small group has made $n_{max}/n_{min}$ times the updates and epochs, as in the paper's
# Figure 12, 16 epochs at $n = 8$ against one at $n = 128$), and matched epochs, the large
# $n$ against the small $n$ at $n_{min}/n_{max}$ of its rollouts, where both have drawn the
# same problems in the same number of updates. The second pairing removes the small
# group's extra passes but not its step size: at $B_p$ = 8, $n = 4$ reaches 512 rollouts
# inside its warm-up and at $\sqrt{4/32}$ of the learning rate of $n = 32$, so it has moved
# about a fifth as far, and its share at 0 leans towards the base model's. (Problems made
# to compete, the dialects of `task.chain.conflict`, are not trained here: the reference
# page says why.)

# %%
histograms = config.interference
pile_runs = interference_runs(config)["piles"]
display(runs_note(run_configs(pile_runs, config, show_progress=False)))
train_pass = run_train_pass(pile_runs)
if not train_pass.empty:
    first_seed = train_pass[train_pass["seed"] == train_pass["seed"].min()]
    display(panels([pass_chart(part, title=f"{set_name}: pass@1 of training problems, seed "
                               f"{train_pass['seed'].min()}") for set_name, part in first_seed.groupby("set")],
                   columns=1))
    display(table(pass_summary(train_pass, by=["set", "seed", "n"]),
                  rename={"stuck": "share at 0", "solved": "share at 1"}))
else:
    display(note("No training-set pass rates were measured (interference.train_pass_rollouts is empty)."))

# %% [markdown]
# ## Findings at our scale

# %%
findings = [smallest_n_wins(part, budgets, f"one tabular problem (start pass@1 {start}): the smallest n wins at "
                                           "every budget (Fig. 12)")
            for start, part in single.groupby("start pass@1")]
findings.append(smallest_n_wins(sharing[sharing["features"] == settings.problems], shared_budgets,
                                f"{settings.problems} tabular problems from pass@1 1/{settings.actions}: the smallest n "
                                "wins at every budget (Fig. 12)"))
for policy in policies[1:]:
    findings.append(headline(bandit_n_star_grows(shared_optima[shared_optima["policy"] == policy],
                                                 f"{settings.problems} problems sharing {policy} features: n* grows "
                                                 "with compute (Fig. 12)")))
for rule in STEP_RULES:
    findings.append(bandit_n_star_grows(split_optima[split_optima["step"] == rule],
                                 f"at a fixed batch B_p x n = {settings.fixed_batch} (d = {split_features}, the same "
                                 f"step {rule}): n* still grows with compute, so what grows is n, not only the batch"))
for set_name, curves in many.items():
    part = counts[counts["set"] == set_name]
    bandit = bandit_optimum(curves, config.sweep.budget)
    findings.append(optimum_above((f"LLM ({avg})", *optimum_of(problem_scores(part, ["n"], avg), seeds)),
                                  ("bandit (pass@1)", bandit, list(bandit.tied)),
                                  f"{set_name}: the LLM's n* exceeds the interference-free bandit's at "
                                  f"{config.sweep.budget:,} rollouts (Fig. 12)"))
pile_counts = run_counts(pile_runs, "validation")
for set_name, part in pile_counts.groupby("set", sort=False):
    for matched in ("compute", "epochs"):
        finding = piles_up(part, min(n_values), max(n_values),
                           f"{set_name}, LLM: small n piles problems at pass@1 0 and 1, large n moves them evenly, at "
                           f"matched {matched} (validation problems; Fig. 12)", seeds, matched)
        findings.append(headline(finding) if matched == "compute" else finding)
at_budget = problem_scores(pile_counts[pile_counts["set"] == histograms.sets[0]], ["n"], avg)
display(design_note(f"the bandits: {settings.seeds} seeds and more; the LLM's pile-ups: seeds "
                    f"{', '.join(map(str, histograms.seeds))}", resolvable_difference(at_budget, seeds), seeds))
FindingsTable(findings, "04_interference", scale(config) + "; the pile-ups on seeds "
              + ", ".join(str(seed) for seed in histograms.seeds))
