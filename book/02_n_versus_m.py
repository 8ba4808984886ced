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
# **How the verdicts are decided.** The grid trains each $n$ on two seeds. A run's score at
# a budget $C$ is the mean of its evaluations at $C/2$ and $C$. Every claim is decided by one
# contrast, fixed here before the data:
#
# * "$n^*$ grows with $C$": the every-$n$ advantage $S(C)$, every larger $n$'s mean score
#   minus the smallest $n$'s on the logit scale (where a deficit does not shrink merely
#   because every $n$ nears a pass rate of 1), at each power-of-two budget. Reproduced when
#   its trend over $\log_2 C$ is positive beyond noise and larger $n$ are no longer behind
#   at the largest budget; *in the paper's direction, not reached* when the trend is
#   positive but larger $n$ are still behind beyond noise (the paper's law below its
#   crossing: the row says where the trend reaches zero); not reproduced only when the
#   trend is resolved negative or equivalent to zero;
# * "metric X peaks at a larger $n$ than metric Y" (and "hard peaks at a smaller $n^*$ than
#   easy"): X's large-$n$ advantage minus Y's at the budget.
#
# Each interval holds evaluation noise and training-seed noise: the two-way random-effects
# model of `isobook.analysis.findings.statistics`, with seeds paired across the arms that
# share them and the seed-to-seed variance pooled over this grid's neighbouring $n$. The
# design note above the findings says how small a difference these intervals resolve.
#
# **The primary claims.** Two claims of this chapter are the book's primaries, named in the
# params file before any run (`primaries.claims`): $n^*(C)$ grows with every $n$ at its own
# best learning rate, and it grows when a small training set is reused. Each $n$'s rate is
# chosen on the envelope's selection seeds (`lr_envelope.seeds`); the primaries are decided
# on runs at those rates on other seeds (`primaries.seeds`), sized to resolve a trend of
# `primaries.trend_effect` per doubling with `primaries.power` (80%) under Holm's control.
# The power table under the findings states the power the design had.
#
# **Two rules this grid leans on, and the runs that test them.** Every $n$ here trains at
# the $\sqrt{B}$ rule's learning rate from chapter 01's anchor (tuned on easy, at one batch):
# a rule, not each $n$'s best. And a run on the hard set draws each training problem a few
# times (C/D, rollouts per training problem, of a few), where the paper's hard runs reach
# several hundred. So the chapter ends with two more studies: every $n$ at its own best
# learning rate (the envelope over a bracket of rates), and every $n$ on a small training
# set reused until C/D reaches `data_reuse.budget` / `data_reuse.problems` (128 in the
# default preset). Every $n^*$ table carries C/D and the updates of the largest batch
# beside the rollouts.

# %% tags=["parameters"]
params = "params/cpu.yaml"  # a preset from params/; the grid is its sweep section
# Overrides as on the command line: a list of "section.field=value" strings.
overrides = []
budget = None  # rollouts per run; None keeps the params file's sweep.budget

# %%
import numpy as np
import pandas as pd
from IPython.display import display

from isobook.analysis.envelope import (
    confirmatory_runs,
    edge_runs,
    envelope_runs,
    lr_envelope,
    preferred_rates,
    rate_counts,
    rule_peak,
    selection_budget,
)
from isobook.analysis.findings.claims import n_star_grows, optimum_at_larger_n, optimum_of, scores_by_budget
from isobook.analysis.findings.power import growth_design
from isobook.analysis.findings.statistics import grid_seed_variance, problem_scores, resolvable_difference
from isobook.analysis.findings.verdicts import headline, primary
from isobook.analysis.frontier import analyse_frontier
from isobook.analysis.n_star import n_star_path, n_star_table, regime_text
from isobook.analysis.reuse import envelope_rates, reuse_runs
from isobook.book.charts import curves_chart, frontier_chart, optimal_chart, panels, rate_chart, use_offline_renderer
from isobook.book.kernel import chapter_config
from isobook.book.pages import FindingsTable, design_note, note, runs_note, scale, table
from isobook.book.seeds import book_seed_variance, reference_grid
from isobook.grpo.evaluation import metric_name, power_of_two_budgets
from isobook.sets.build import prepare_sets
from isobook.sweeps import mean_over_seeds, n_grid, run_configs, run_counts, run_points, run_sweep, sweep_configs

use_offline_renderer()
config = chapter_config(params, overrides, budget)
avg, best, worst = (metric_name(kind, config.evaluation) for kind in ("avg", "best", "worst"))
batch_problems, n_values, _ = n_grid(config)
small, largest_batch = min(n_values), batch_problems * max(n_values)
grid = reference_grid(config)  # B_p fixed, two seeds: the grid every chapter's seed variance is measured on
budgets = power_of_two_budgets(config.evaluation, config.sweep.budget)
reuse = config.data_reuse
reuse_budgets = [b for b in power_of_two_budgets(config.evaluation, reuse.budget) if b >= largest_batch]

# %%
outcomes = [run_sweep(grid, show_progress=False)]
problems = {name: sizes["train"] for name, sizes in prepare_sets(config).summary["sets"].items()}  # D of each set
tuned = {set_name: envelope_runs(config, set_name) for set_name in config.lr_envelope.sets}
if tuned:
    outcomes.append(run_configs([run for runs in tuned.values() for run in runs], config, show_progress=False))
for _ in range(config.lr_envelope.extensions):  # a bracket whose best rate sits at an edge grows past it
    grown = {s: edge_runs(config, s, rate_counts(runs, config), avg, selection_budget(config))
             for s, runs in tuned.items()}
    if not any(grown.values()):
        break
    outcomes.append(run_configs([run for runs in grown.values() for run in runs], config, show_progress=False))
    tuned = {s: tuned[s] + grown[s] for s in tuned}
rates = {set_name: rate_counts(runs, config) for set_name, runs in tuned.items()}
selection_budgets = [b for b in budgets if b <= selection_budget(config)]  # where the envelope's runs stop
envelopes = {set_name: lr_envelope(table_, avg, selection_budgets) for set_name, table_ in rates.items()}
# Each n's rate, chosen on the selection seeds (every problem) at the budget; the primaries read it on other seeds.
chosen = {set_name: envelope_rates(envelope, selection_budget(config)) for set_name, envelope in envelopes.items()}
confirmed = {set_name: confirmatory_runs(config, set_name, chosen[set_name]) for set_name in envelopes}
reuse_rates = chosen.get(reuse.set, {})
reused = reuse_runs(config, reuse_rates)
outcomes.append(run_configs([*(run for runs in confirmed.values() for run in runs), *reused], config,
                            show_progress=False))
confirmed_scores = {set_name: scores_by_budget(rate_counts(runs, config), ["n"], avg, budgets)
                    for set_name, runs in confirmed.items()}
# The selection seeds at the chosen rates: the design a primary's power is read from before its own runs.
selected_scores = {set_name: scores_by_budget(table_[[chosen[set_name].get(n) == m for n, m in
                                                      zip(table_["n"], table_["multiplier"])]], ["n"], avg,
                                              selection_budgets) for set_name, table_ in rates.items()}
reuse_counts = rate_counts(reused, config)
points = mean_over_seeds(run_points(sweep_configs(grid), config.evaluation.k))  # curves and fits: mean of seeds
counts = run_counts(sweep_configs(grid), "validation")
reuse_scores = scores_by_budget(reuse_counts, ["n"], avg, reuse_budgets)
# The pool: the grid and the envelope's selection seeds, none of the primaries' own runs (a pool independent of them).
seeds = book_seed_variance(config, avg, *(grid_seed_variance(scores_by_budget(table_, ["n", "multiplier"], avg,
                                                                              selection_budgets),
                                                             f"chapter 02's envelope on {set_name}")
                                          for set_name, table_ in rates.items()))
runs_note(pd.concat(outcomes, ignore_index=True))

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
panels([frontier_chart(a.fits, a.fitted, avg, title=[f"{set_name}: frontier coloured by n*",
                                                      regime_text(budgets, problems[set_name], largest_batch)])
        for set_name, a in analysis.items() if not a.fitted.empty])

# %% [markdown]
# The sigmoid of $\log_2 n^*$ against $\log_2 C$ (paper Figure 6), where $n^*$ changes
# along the frontier:

# %%
fitted = {set_name: a for set_name, a in analysis.items() if a.n_star is not None}
for set_name, a in analysis.items():
    if a.n_star is None:
        display(note(f"{set_name}: {a.why_no_fit}"))
panels([optimal_chart(a.fitted, a.n_star, title=[f"{set_name}: log2 n* vs rollouts, sigmoid fit",
                                                  regime_text(budgets, problems[set_name], largest_batch)])
        for set_name, a in fitted.items()]) if fitted else None

# %% [markdown]
# The measured $n^*$ at each power-of-two budget (each run's mean of its evaluations at
# half the budget and at it, averaged over seeds), with the $n$ within noise of it and the
# best's lead over the runner-up; C/D is rollouts per training problem, and the updates
# are those of the largest batch ($B_p$ times the largest $n$):

# %%
N_STAR_COLUMNS = {"n": "n*", "score": avg, "within noise": "n within noise", "lead": "lead over runner-up"}
optima = {set_name: n_star_table(scores_by_budget(counts[counts["set"] == set_name], ["n"], avg, budgets), ["n"],
                                 seeds, problems[set_name], largest_batch) for set_name in points["set"].unique()}
table(pd.concat([o.assign(set=s) for s, o in optima.items()])[["set", "rollouts", "C/D", "updates", "n", "score",
                                                                "within noise", "lead"]], rename=N_STAR_COLUMNS)

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
# ## Each n at its own best learning rate
#
# Every $n$ of the grid on each set of `lr_envelope.sets` (hard in the default preset)
# trains at a bracket of peak learning rates: the $\sqrt{B}$
# rule's times each of `lr_envelope.multipliers`, and the rate of the largest $n$ (chapter
# 08's one-rate arm), on the same seeds; where the best rate of an $n$ sits at an edge of
# its bracket, the bracket grows past it. At each budget the rate of each $n$ is chosen on
# one half of the validation problems and scored on the other half (and the other way
# round), so no problem scores the rate it chose; $n^*(C)$ read on these scores is the
# **envelope**, the paper's "tune the learning rate per configuration". These runs train on
# the selection seeds, whose luck stays in their scores: the envelope is exploratory. The
# primary claim trains each $n$ at the rate it preferred at the budget (every problem, mean
# of the selection seeds) on the confirmatory seeds. Each $n$'s score against its peak
# learning rate, at each budget (mean of the selection seeds, every problem):

# %%
if not envelopes:
    display(note("No envelope in this book (`lr_envelope.sets` is empty): every n trains at the sqrt(B) rule's "
                 "rate only, so n* here is read at that one rate per n, not at each n's own best."))
for set_name, envelope in envelopes.items():
    display(panels([rate_chart(part, avg, title=f"{set_name}, B_p = {batch_problems}: {budget:,} rollouts "
                                               f"(C/D {budget / problems[set_name]:.2g})")
                    for budget, part in envelope.curves.groupby("rollouts")]))

# %% [markdown]
# The rate each $n$ preferred at the budget (on every problem, mean of the seeds), the
# rates within noise of it, and whether chapter 01's anchor (the rule's own rate, 1) is
# among them:

# %%
preferred = {set_name: preferred_rates(table_, avg, selection_budget(config), seeds)
             for set_name, table_ in rates.items()}
if preferred:
    shown = pd.concat([p.assign(set=s) for s, p in preferred.items()])
    display(table(shown.assign(best=shown["best"].map(lambda m: f"x{m:g}"), lr=shown["lr"].map(lambda v: f"{v:.2g}"),
                               **{"rule within noise": shown["rule within noise"].map({True: "yes", False: "no"})})
                  [["set", "n", "best", "lr", "within noise", "rule within noise"]],
                  rename={"best": "best multiplier", "lr": "its peak rate", "within noise": "multipliers within noise",
                          "rule within noise": "the rule's rate within noise"}))
for set_name, p in preferred.items():
    off = p[~p["rule within noise"]]
    display(note(f"{set_name}: the rule's rate is within noise of the best for every n." if off.empty else
                 f"{set_name}: the rule's rate is beaten beyond noise for n = {', '.join(map(str, off['n']))} "
                 f"(best at {', '.join(f'x{m:g}' for m in off['best'])} the rule's rate): chapter 01's anchor, "
                 "tuned on easy, is not each n's best here."))

# %% [markdown]
# $n^*$ at each budget with each $n$ at its own best rate, on the confirmatory seeds (the
# primary) and on the selection seeds (the envelope), beside the $\sqrt{B}$ rule's (this
# chapter's grid) and the one-rate arm's (every $n$ at the largest $n$'s rate):

# %%
arms = {}
for set_name, table_ in rates.items():
    one_rate = np.isclose(table_["lr"], rule_peak(config, largest_batch), rtol=1e-9)
    arms[set_name] = {"own best, confirmatory seeds": confirmed_scores[set_name],
                      "own best, selection seeds": envelopes[set_name].scores,
                      "sqrt rule": scores_by_budget(table_[table_["multiplier"] == 1.0], ["n"], avg, selection_budgets),
                      "one rate": scores_by_budget(table_[one_rate], ["n"], avg, selection_budgets)}
envelope_optima = {(set_name, arm): n_star_table(by_budget, ["n"], seeds, problems[set_name], largest_batch)
                   for set_name, by_arm in arms.items() for arm, by_budget in by_arm.items()}
if envelope_optima:
    display(table(pd.concat([o.assign(set=s, rate=arm) for (s, arm), o in envelope_optima.items()])
                  [["set", "rate", "rollouts", "C/D", "updates", "n", "score", "within noise", "lead"]],
                  rename={**N_STAR_COLUMNS, "rate": "learning rate"}))
else:
    display(note("No envelope: the rule's n* at each budget is the grid's table above."))

# %% [markdown]
# ## The data-reuse regime
#
# The paper's mechanisms for a growing $n^*$ (problems revisited until they stop giving
# signal, interference between them) need data reuse. Here every $n$ trains on the first
# `data_reuse.problems` training problems of `data_reuse.set` (hard by default), at the
# rate the envelope chose for it at the budget (the rule's rate where the envelope does not
# train that set), until each problem has been drawn `data_reuse.budget` /
# `data_reuse.problems` times; scores are on the same validation problems as above.

# %%
reuse_points = mean_over_seeds(run_points(reused, config.evaluation.k))
reuse_multipliers = {n: reuse_rates.get(n, 1.0) for n in n_values}
display(note(f"D = {reuse.problems} problems of {reuse.set}, to {reuse.budget:,} rollouts; peak rates "
             + (f"x{reuse_multipliers[small]:g} the rule's at every n" if len(set(reuse_multipliers.values())) == 1
                else ", ".join(f"x{m:g} the rule's at n = {n}" for n, m in reuse_multipliers.items()))
             + f"; confirmatory seeds {', '.join(map(str, config.primaries.seeds))}."))
curves_chart(reuse_points, avg, title=f"{reuse.set}, D = {reuse.problems}: {avg}, B_p = {batch_problems} "
                                      f"(mean of {len(config.primaries.seeds)} seeds)")

# %%
reuse_optima = n_star_table(reuse_scores, ["n"], seeds, reuse.problems, largest_batch)
table(reuse_optima[["rollouts", "C/D", "updates", "n", "score", "within noise", "lead"]], rename=N_STAR_COLUMNS)

# %% [markdown]
# ## Findings at our scale

# %%
findings = [headline(n_star_grows(scores_by_budget(counts[counts["set"] == s], ["n"], avg, budgets),
                                  f"{s}: n* grows with C (Fig. 5-6)", seeds)) for s in optima]
claims = config.primaries.claims
# Power at what Holm's first step asks over the primaries (so at least the power under Holm).
sizing = {"trend_effect": config.primaries.trend_effect, "pool": seeds, "target": config.primaries.power,
          "alpha": 0.05 / max(len(claims), 1)}
for set_name in envelopes:
    findings.append(primary(n_star_grows(confirmed_scores[set_name], f"{set_name}, every n at its own best learning "
                                         "rate: n* grows with C (Fig. 5-6)", seeds), "own-best-rate", claims,
                            growth_design(selected_scores[set_name], confirmed_scores[set_name], **sizing)))
# The reuse grid has no selection-seed runs: its design reads the nearest arms that have (the envelope's chosen rates).
reuse_design = selected_scores.get(reuse.set, {})
findings.append(primary(n_star_grows(reuse_scores, f"{reuse.set}, D = {reuse.problems} reused to C/D "
                                     f"{reuse.budget / reuse.problems:g}: n* grows with C (Fig. 5-6)", seeds),
                        "data-reuse", claims, growth_design(reuse_design, reuse_scores, **sizing)))
# Paper: sharpening (worst@k) wants large n on easy, coverage (best@k) wants large n on hard.
for set_name, wanted, other in (("easy", worst, best), ("hard", best, worst)):
    findings.append(optimum_at_larger_n((str(wanted), final[set_name][wanted], set_name),
                                        (str(other), final[set_name][other], set_name),
                                        f"{set_name}: {wanted} peaks at a larger n than {other} (Fig. 7)", seeds))
findings.append(optimum_at_larger_n(("easy", final["easy"][avg], "easy"), ("hard", final["hard"][avg], "hard"),
                                    "hard peaks at a smaller n* than easy at the budget (Fig. 6)", seeds))
resolvable = {s: resolvable_difference(final[s][avg], seeds) for s in optima if s in final}  # sets the grid trains
resolvable = [width for width in resolvable.values() if width == width]
display(design_note(f"every n on {' and '.join(s for s in optima if s in final)}, seeds "
                    f"{', '.join(map(str, grid.sweep.seeds))}",
                    float(np.median(resolvable)) if resolvable else float("nan"), seeds))
FindingsTable(findings, "02_n_versus_m", scale(config))

# %% [markdown]
# **Power of the primary claims.** For each, the smallest trend worth knowing (in pass rate
# per doubling of $C$, and on the logit scale the verdict reads), the confirmatory seeds and
# validation problems, the power the design had by the selection seeds' variances (before
# the confirmatory runs were read), the seeds that design needed for `primaries.power` (and
# the validation problems it would need at these seeds, up to 16 times as many; none: more
# seeds, not problems), and the power on the confirmatory runs' own variances; each at 0.05
# over the number of primaries, what Holm's first step asks:

# %%
designs = pd.DataFrame([{"claim": f.claim, **f.power} for f in findings if f.primary is not None],
                       columns=["claim", "effect", "effect (logit)", "seeds", "problems", "design power",
                                "seeds needed", "problems needed", "achieved power"])
table(designs.astype({"seeds": "Int64", "problems": "Int64", "seeds needed": "Int64", "problems needed": "Int64"}),
      rename={"effect": "effect (pass rate / doubling)"}) if len(designs) else note(
    "No primary claim in this chapter under this config (primaries.claims).")

# %% [markdown]
# **Where each verdict stands against the paper's regime.** The paper's matched hard runs
# reach C/D of several hundred and hundreds of updates; the runs here reach:

# %%
paths = {**{f"{s}, sqrt rule": n_star_path(o) for s, o in optima.items() if s not in envelopes},
         **{f"{s}, {arm}": n_star_path(o) for (s, arm), o in envelope_optima.items()},
         f"{reuse.set}, D = {reuse.problems}": n_star_path(reuse_optima)}
trained = {s: " and ".join(part for part, on in (("the grid", s in optima), ("the envelope", s in envelopes)) if on)
           for s in dict.fromkeys([*optima, *envelopes])}
display(note("".join(f"{what} on {s}: {regime_text(budgets, problems[s], largest_batch)}; " for s, what in trained.items())
             + f"the data-reuse grid: {regime_text(reuse_budgets, reuse.problems, largest_batch)}. n* by budget: "
             + "; ".join(f"{name}: {path}" for name, path in paths.items())
             + ". A verdict here is about the first updates of the paper's runs."))
