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
# our model's runs from chapter 02, and compare the training-set pass@1 histograms of the
# smallest and largest $n$ at the same compute and after the same epochs.
#
# **How the verdicts are decided.** The bandits average many seeds: an $n$ wins where its
# lead exceeds a 95% Student-t interval over seeds. The LLM's $n^*$ at each budget comes
# with the $n$ within noise of it; "$n^*$ grows" is decided by one contrast, the score of the
# largest $n$ minus the smallest, its trend over $\log_2 C$ and its value at the largest
# budget. Its 95% interval holds evaluation and training-seed noise (seeds paired across
# the $n$ that share them, the seed-to-seed variance pooled over chapter 02's grid and this
# chapter's two-seed arms); the pass@1 pile-ups compare the same training problems under
# both $n$, seed by seed. Our task's problems share one skill, so the
# chapter tests the explanation three ways: on the bandit with parameters shared across
# problems, on that bandit under the LLM's optimizer (Adam, with a constant and a
# $\sqrt{B}$-scaled step), and on the LLM with a knob that makes its problems compete.

# %% tags=["parameters"]
params = "params/cpu.yaml"  # a preset from params/; the grid is its sweep section
# Overrides as on the command line: a list of "section.field=value" strings.
overrides = []
budget = None  # rollouts per run; None keeps the params file's sweep.budget

# %% tags=["book-declarations"]
# Read by `isobook book` before the chapter runs: the base models it trains beside the
# params file's, built with the book's other arms before any chapter starts.
budget_share = 1.0
extra_base_models = ["knob"]

# %%
import numpy as np
import pandas as pd
from IPython.display import display

from isobook.analysis.bandit import (
    STEP_RULES,
    BanditSetup,
    bandit_curves_path,
    batch_split_curves,
    best_n,
    comparable_budgets,
    optimizer_curves,
    sharing_curves,
    suboptimality_curves,
)
from isobook.analysis.findings.bandit_claims import bandit_n_star_grows, bandit_optima, bandit_optimum, smallest_n_wins
from isobook.analysis.findings.claims import (
    greater,
    n_star_grows,
    optima_by_budget,
    optimum_above,
    optimum_of,
    piles_up,
    scores_by_budget,
    set_text,
)
from isobook.analysis.findings.statistics import grid_seed_variance, problem_scores, resolvable_difference
from isobook.analysis.frontier import measured_frontier, pass_summary
from isobook.book.charts import curves_chart, n_star_chart, panels, pass_chart, use_offline_renderer
from isobook.book.kernel import chapter_config
from isobook.book.pages import FindingsTable, design_note, note, runs_note, scale, table
from isobook.book.seeds import book_seed_variance
from isobook.grpo.evaluation import metric_name
from isobook.grpo.transfer import transfer_counts
from isobook.sets.build import dialects, load_set, prepare_sets
from isobook.store.atomic import cached_parquet
from isobook.sweeps import grid_run, knob_arms, n_grid, run_configs, run_counts, run_points, run_train_pass

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
                                                config.sweep.budget)
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
    many[set_name], sizes[set_name] = suboptimality_curves(setup, n_values, config.sweep.budget), start.size
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
sharing = cached_parquet(bandit_curves_path(config, "sharing"), lambda: sharing_curves(settings, config.system.seed))
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
n_star_chart(shared_optima, "policy", title="n* by budget: tabular and shared features")

# %%
table(shared_optima.assign(**{"n*": shared_optima["n"].astype(str) + " " + shared_optima["within noise"].map(set_text)})
      .pivot(index="rollouts", columns="policy", values="n*")[policies].reset_index()
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
split = pd.concat([cached_parquet(bandit_curves_path(config, f"batch-split-{rule.replace(' ', '-')}"),
                                  lambda rule=rule: batch_split_curves(settings, split_features, rule,
                                                                       config.system.seed)).assign(step=rule)
                   for rule in STEP_RULES], ignore_index=True)
split["pass@1"] = 1 - split["suboptimality"]
split["B_p x n"] = split["batch_problems"].astype(str) + " x " + split["n"].astype(str)
split_optima = pd.concat([bandit_optima(part, shared_budgets).assign(step=rule)
                          for rule, part in split.groupby("step", sort=False)], ignore_index=True)
panels([curves_chart(part.sort_values("n"), "pass@1", color="B_p x n",
                     title=f"d = {split_features}, B_p x n = {settings.fixed_batch}, same step {rule}")
        for rule, part in split.groupby("step", sort=False)])

# %%
table(split_optima.assign(**{"n within noise": split_optima["within noise"].map(set_text)})
      [["step", "rollouts", "n", "score", "n within noise"]], rename={"step": "same step", "n": "n*",
                                                                    "score": "pass@1 at n*"})

# %% [markdown]
# ## The bandit under the LLM's optimizer
#
# The steps above are plain gradient steps of a constant size. The LLM trains with Adam,
# whose step is normalised coordinate by coordinate (a noisy gradient takes as long a step
# as a clean one), and scales its learning rate with $\sqrt{B}$. The tabular policy and the
# largest $d$ run again under Adam, at a constant step and at that step times
# $\sqrt{B_p n / B_0}$, from the same problems, features and draws. If $n^*$ grows under
# Adam with shared features and not without them, sharing is still what makes it grow; if
# it grows under the $\sqrt{B}$ rule too, the LLM's learning-rate rule does not hide it.

# %%
largest = max(settings.features)
adam = cached_parquet(bandit_curves_path(config, "optimizers"), lambda: optimizer_curves(settings, config.system.seed))
adam["optimizer"] = "Adam, " + adam["lr_scaling"].map({"constant": "constant step", "sqrt": "sqrt(B) step"})
plain = sharing[sharing["features"].isin([settings.problems, largest])].assign(optimizer="gradient, constant step")
optimizers = pd.concat([plain[adam.columns.drop(["lr_scaling", "optimizer"]).tolist() + ["optimizer"]],
                        adam.drop(columns="lr_scaling")], ignore_index=True)
optimizers["pass@1"] = 1 - optimizers["suboptimality"]
optimizers["policy"] = optimizers["features"].map(lambda d: "tabular" if d == settings.problems else f"d = {d}")
optimizer_optima = pd.concat([bandit_optima(part, shared_budgets).assign(optimizer=name, policy=policy)
                              for (name, policy), part in optimizers.groupby(["optimizer", "policy"], sort=False)],
                             ignore_index=True)
adam_steps = {n: settings.adam_lr * (settings.batch_problems * n / settings.reference_batch) ** 0.5
              for n in (min(settings.rollouts_per_problem), max(settings.rollouts_per_problem))}
note(f"Adam: step {settings.adam_lr:g} (betas 0.9, 0.999); under the sqrt(B) rule it holds at B_0 = "
     f"{settings.reference_batch} rollouts per update, " + ", ".join(f"{step:.3g} at n = {n}" for n, step in
                                                                      adam_steps.items())
     + ". The plain-gradient curves are those above.")

# %%
optimizer_optima["curve"] = optimizer_optima["policy"] + ", " + optimizer_optima["optimizer"]
n_star_chart(optimizer_optima, "curve", title="n* by budget under each optimizer")

# %%
table(optimizer_optima.assign(**{"n*": optimizer_optima["n"].astype(str) + " "
                                 + optimizer_optima["within noise"].map(set_text)})
      .pivot(index="rollouts", columns="curve", values="n*")[list(dict.fromkeys(optimizer_optima["curve"]))]
      .reset_index().rename(columns={"rollouts": "rollouts (n* {n within noise})"}))

# %% [markdown]
# ## The base case beside the LLM: n* at each budget
#
# The bandits' best $n$ (lowest suboptimality) against the LLM's measured $n^*$ (each
# curve's running best of validation reward) on the same grid, from chapter 02's runs.

# %%
runs = [grid_run(config, set_name, batch_problems, n) for set_name in config.sweep.sets for n in n_values]
outcomes = run_configs(runs, config, show_progress=False)
points = run_points(runs, config.evaluation.k)
counts = run_counts(runs, "validation")
compare = []
for set_name, curves in many.items():
    bandit = best_n(curves, budgets).rename(columns={"n": "bandit n*"})
    llm = measured_frontier(points[points["set"] == set_name], np.log2(budgets), by=["n"], metric=avg)
    compare.append(bandit[["rollouts", "bandit n*"]].merge(
        llm[["rollouts", "n"]].rename(columns={"n": "LLM n*"}), on="rollouts", how="left").assign(set=set_name))
display(runs_note(outcomes))
table(pd.concat(compare, ignore_index=True)[["set", "rollouts", "bandit n*", "LLM n*"]])

# %% [markdown]
# ## Competing skills: the LLM with the knob off and on
#
# Our task's problems share one skill (carrying), so an update on one helps the others.
# The knob `task.chain.conflict` writes that share of problems in a second dialect, marked `<`,
# in which every carry or borrow step writes ten less, and each dialect's teacher slips into
# the other's rule: the two dialects pull the same weights in opposite directions. With the
# knob on, the base model learns both from the teacher, the difficulty profile and the sets
# are built from its avg@16 as before, and the same grid runs on them: the sweep's $n$ at
# its first $B_p$ on each set of `interference.sets`, once per seed of
# `interference.seeds`, and the same with the knob off (the chapter's runs above are its
# first seed). Each budget's $n^*$ averages each validation problem's score over the
# seeds; the per-seed columns show how far one trained run moves it.

# %%
knob = config.interference
arms = knob_arms(config)
by_set = {(arm, set_name): dialects(sets, set_name)  # easy too: the forgetting below
          for arm, sets in ((arm, prepare_sets(arm_config)) for arm, arm_config in arms.items())
          for set_name in dict.fromkeys([*knob.sets, "easy"])}
dialect = {arm: pd.concat([values for (of, _), values in by_set.items() if of == arm]) for arm in arms}
dialect = {arm: values[~values.index.duplicated()] for arm, values in dialect.items()}
composition_rows = [{"knob": arm, "set": set_name, **by_set[arm, set_name].value_counts()}
                    for arm in arms for set_name in knob.sets]
table(pd.DataFrame(composition_rows).fillna(0).astype({"standard": int, "ten-less": int}),
      rename={"standard": "standard problems", "ten-less": "ten-less problems"})

# %%
knob_runs, knob_labels = [], []
for arm, arm_config in arms.items():
    for set_name in knob.sets:
        for n in n_values:
            for seed in knob.seeds:
                knob_runs.append(grid_run(arm_config, set_name, batch_problems, n, seed=seed))
                knob_labels.append({"knob": arm})
knob_outcomes = run_configs(knob_runs, config, show_progress=False)
knob_counts = run_counts(knob_runs, "validation", knob_labels)
knob_points = run_points(knob_runs, config.evaluation.k, knob_labels)
knob_scores = {key: scores_by_budget(part, ["n"], avg, budgets)
               for key, part in knob_counts.groupby(["knob", "set"], sort=False)}
seeds = book_seed_variance(config, avg, *(grid_seed_variance(by_budget, "knob arms")
                                          for by_budget in knob_scores.values()))
knob_optima, seed_optima = [], {}
for (arm, set_name), part in knob_counts.groupby(["knob", "set"], sort=False):
    knob_optima.append(optima_by_budget(part, ["n"], avg, budgets, seeds).assign(knob=arm, set=set_name))
    seed_optima[arm, set_name] = {seed: optima_by_budget(part[part["seed"] == seed], ["n"], avg, budgets, seeds)
                                  for seed in sorted(part["seed"].unique())}  # the seeds trained (sweep.seed_shift)
knob_optima = pd.concat(knob_optima, ignore_index=True)
display(runs_note(knob_outcomes))
mean_points = knob_points.groupby(["knob", "set", "n", "rollouts"], as_index=False)[avg].mean()
panels([curves_chart(part, avg, title=f"{set_name}, {arm}: mean of {len(knob.seeds)} seeds")
        for (set_name, arm), part in mean_points.groupby(["set", "knob"], sort=False)])

# %%
panels([n_star_chart(part, "knob", title=f"{set_name}: n* by budget, knob off and on ({len(knob.seeds)} seeds)")
        for set_name, part in knob_optima.groupby("set", sort=False)], columns=1)

# %%
per_seed_rows = [part.assign(knob=arm, set=set_name, seed=seed)
                 for (arm, set_name), by_seed in seed_optima.items() for seed, part in by_seed.items()]
per_seed = pd.concat(per_seed_rows, ignore_index=True)
seed_columns = per_seed.pivot_table(index=["set", "rollouts"], columns=["knob", "seed"], values="n",
                                    aggfunc="first")
pooled = knob_optima.assign(**{"n*": knob_optima["n"].astype(str) + " " + knob_optima["within noise"].map(set_text)})
pooled_columns = pooled.pivot(index=["set", "rollouts"], columns="knob", values="n*")[list(arms)]
seed_columns.columns = [f"{arm}, seed {seed}" for arm, seed in seed_columns.columns]
table(pooled_columns.join(seed_columns).reset_index()
      .rename(columns={"rollouts": "rollouts (n* {n within noise})"}))

# %% [markdown]
# ## Pass@1 histograms at matched compute and matched epochs, by dialect (Figure 12)
#
# Per-problem pass@1 on a fixed sample of training problems, measured at the
# `evaluation.train_pass_rollouts` points, for the smallest and the largest $n$. Two
# pairings decide, each at the last point both sides measured: matched compute (the small
# group has made $n_{max}/n_{min}$ times the updates and epochs, as in the paper's Figure
# 12, 16 epochs at $n = 8$ against one at $n = 128$), and matched epochs, the large $n$
# against the small $n$ at $n_{min}/n_{max}$ of its rollouts, where both have drawn the same
# problems in the same number of updates. The second pairing removes the small group's
# extra passes but not its step size: at $B_p$ = 8, $n = 4$ reaches 512 rollouts inside its
# warm-up and at $\sqrt{4/32}$ of the learning rate of $n = 32$, so it has moved about a
# fifth as far, and its share at pass@1 = 0 leans towards the base model's. Bars are
# stacked by dialect; the charts show the first seed, the table every seed.

# %%
extremes = [(run, label) for run, label in zip(knob_runs, knob_labels)
            if run.train.rollouts_per_problem in (min(n_values), max(n_values))]
train_pass = run_train_pass([run for run, _ in extremes], [label for _, label in extremes])
if not train_pass.empty:
    train_pass["dialect"] = [dialect[arm].get(problem, "standard") for arm, problem in
                             zip(train_pass["knob"], train_pass["id"])]
    first_seed = train_pass[train_pass["seed"] == train_pass["seed"].min()]
    display(panels([pass_chart(part, title=f"{set_name}, {arm}: pass@1 of training problems, seed "
                               f"{train_pass['seed'].min()}",
                               color="dialect") for (set_name, arm), part in first_seed.groupby(["set", "knob"],
                                                                                              sort=False)],
                   columns=1, shared_legend=True))
    display(table(pass_summary(train_pass, by=["set", "knob", "dialect", "n"]),
                  rename={"stuck": "share at 0", "solved": "share at 1"}))
else:
    display(note("No training-set pass rates were measured (evaluation.train_pass_rollouts is empty)."))

# %% [markdown]
# ## Does hard-only training forget easy problems? (Figure 15)
#
# The final policies of the hard-set runs, and each arm's base model, on the easy
# validation problems, each problem's score averaged over the seeds, by dialect.

# %%
forgetting = {}
for arm, arm_config in arms.items():
    hard_runs = [run for run, label in zip(knob_runs, knob_labels) if label["knob"] == arm and run.train.set == "hard"]
    if hard_runs:
        counts_on_easy = transfer_counts(hard_runs, ["easy"])
        counts_on_easy["dialect"] = counts_on_easy["id"].map(dialect[arm]).fillna("standard")
        by_dialect = list(counts_on_easy.groupby("dialect")) if counts_on_easy["dialect"].nunique() > 1 else []
        for language, part in [("all", counts_on_easy), *by_dialect]:
            forgetting[arm, language] = problem_scores(part, ["train_set", "n"], avg)
if forgetting:
    display(table(pd.DataFrame([{"knob": arm, "easy problems": language, "problems": scores.index.get_level_values("id").nunique(),
                         f"base model {avg}": scores[("-", 0)].mean(),
                         **{f"hard-only n = {n}": scores[("hard", n)].mean() for n in n_values
                            if ("hard", n) in scores}}
                        for (arm, language), scores in forgetting.items()])))
else:
    display(note("Forgetting needs runs on the hard set (interference.sets)."))

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
    findings.append(bandit_n_star_grows(shared_optima[shared_optima["policy"] == policy],
                                 f"{settings.problems} problems sharing {policy} features: n* grows with compute (Fig. 12)"))
for name in dict.fromkeys(adam["optimizer"]):
    chosen = optimizers[optimizers["optimizer"] == name]
    findings.append(smallest_n_wins(chosen[chosen["policy"] == "tabular"], shared_budgets,
                                    f"{settings.problems} tabular problems under {name}: the smallest n wins at every "
                                    "budget"))
    findings.append(bandit_n_star_grows(optimizer_optima[(optimizer_optima["optimizer"] == name)
                                                         & (optimizer_optima["policy"] == f"d = {largest}")],
                                        f"{settings.problems} problems sharing d = {largest} features under {name}: "
                                        "n* grows with compute (Fig. 12)"))
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
for arm in arms:
    for set_name in knob.sets:
        findings.append(n_star_grows(knob_scores[arm, set_name], f"{set_name}, LLM at {arm}: n* grows with compute "
                                     "(Fig. 12)", seeds))
for (arm, set_name), part in train_pass.groupby(["knob", "set"], sort=False):
    for matched in ("compute", "epochs"):
        findings.append(piles_up(part, min(n_values), max(n_values),
                                 f"{set_name}, LLM at {arm}: small n piles training problems at pass@1 0 and 1, large "
                                 f"n moves them evenly, at matched {matched} (Fig. 12)", seeds, matched))
split_arms = {arm for arm, language in forgetting if language != "all"}
for (arm, language), scores in forgetting.items():
    if language == "all" and arm in split_arms:
        continue  # with two dialects, each dialect's row says more than the mixture's
    findings.append(greater(scores, ("-", 0), ("hard", min(n_values)),
                            f"LLM at {arm}: training on hard problems only forgets easy ones"
                            + (f" of the {language} dialect" if language != "all" else "")
                            + f" (n = {min(n_values)}; Fig. 15)",
                            ("base model", f"hard-only, n = {min(n_values)}"), f"{avg} on easy", seeds))
last_knob = knob_scores[next(iter(knob_scores))]
display(design_note(f"the bandits: {settings.seeds} seeds and more; the LLM's knob arms: seeds "
                    f"{', '.join(map(str, knob.seeds))}", resolvable_difference(last_knob[max(last_knob)], seeds), seeds))
FindingsTable(findings, "04_interference", scale(config) + f"; the rows on {' and '.join(arms)}: seeds "
              + ", ".join(str(seed) for seed in knob.seeds))
