# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # How should a sampling budget be spent?
#
# On-policy GRPO spends its compute on rollouts. With $B_p$ distinct problems per batch,
# $n$ rollouts per problem and $M$ sequential updates, a run samples
#
# $$C = B_p \cdot n \cdot M \quad \text{rollouts,}$$
#
# and every rollout is trained on once. The IsoCompute Playbook (arXiv 2603.12151) asks
# how to split a fixed $C$ between $n$, $B_p$ and $M$ to maximise validation reward. This
# book repeats its workflow on a base model isobook trains itself, at a budget any laptop
# can pay, and states for each of the paper's findings whether it holds at our scale.
#
# | symbol | meaning |
# | --- | --- |
# | $n$ | rollouts per problem (the GRPO group size) |
# | $B_p$ | distinct problems per batch |
# | $M$ | gradient updates |
# | $B = B_p n$ | rollouts per update |
# | avg@k, best@k, worst@k | mean pass rate; at least one of k correct (coverage); all k correct (sharpening) |

# %% tags=["parameters"]
params = "params/cpu.yaml"  # a preset from params/; papermill: -p params params/smoke.yaml
# Overrides as on the command line: a list of "section.field=value" strings.
overrides = []

# %%
from pathlib import Path

import pandas as pd
from IPython.display import display

from isobook.book.charts import histogram_chart, use_offline_renderer
from isobook.book.kernel import chapter_config
from isobook.book.pages import note, table
from isobook.sets.build import prepare_sets
from isobook.sets.fresh import greedy_by_set

use_offline_renderer()
config = chapter_config(params, overrides)

# %%
summary = prepare_sets(config).summary

# %% [markdown]
# ## The base model and its problems
#
# Machines without network access cannot download a model, so isobook trains a small
# Qwen2 on chain arithmetic (`7a+5b-3c+8=` answered `a+5=12;b-3=9;c+8=17#17`) from a
# teacher that slips on carry and borrow steps. The base model inherits those slips as
# probabilities: a skill RL can sharpen. A pool of problems is profiled with avg@16 under
# the base model, and the paper's sets are binned from it (the paper's rules, Figure 2).

# %%
if config.model.source != "isobook" or config.task.family != "chain":  # a checkpoint, or a file of problems
    problems = (Path(config.task.math_file.path).name if config.task.family == "math-file"
                else f"isobook's {config.task.family} task")
    display(note(f"This book's base model is {Path(config.model.source).name} and its problems come from "
                 f"{problems}, profiled with avg@{config.sets.samples}: the paragraph above describes the "
                 "default book."))
table(pd.DataFrame({
    "base model": [summary["base_model"].split("/")[-1]],
    "parameters": [summary["parameters"]],
    "pool problems": [summary["pool_size"]],
    f"hard problems with pass@{summary['samples']} > 0": [summary["hard_pass_at_k_positive"]],
    "stability r (final vs earlier checkpoint)": [summary["stability"].get("pearson")],
}))

# %% [markdown]
# Each set's size, and how hard it is for the base model by a number that did not choose
# it: the share of its problems the greedy answer (temperature 0) gets right. (The avg@16
# that binned a set is biased towards its bin when read back on it.)

# %%
table(greedy_by_set(config))

# %% [markdown]
# ## Figure 2: how hard the pool is for the base model

# %%
samples = summary["samples"]
histogram = pd.DataFrame({
    f"avg@{samples}": [f"{c / samples:.4f}" for c in summary["histogram"]["correct"]],
    "problems": summary["histogram"]["problems"],
})
histogram_chart(histogram, f"avg@{samples}", "problems",
                title=f"Problems per avg@{samples} under the base model ({summary['pool_size']:,} problems)")
