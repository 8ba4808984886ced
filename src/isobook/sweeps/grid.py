"""Building a grid: one run config per (set, B_p, n, seed) point, or one run anywhere.

    from isobook.sweeps import grid_run, sweep_configs
    configs = sweep_configs(config)                                       # every grid point
    ablation = grid_run(config, "easy", 8, 16, ["recipe.regularisers=none"])  # off the grid

Whatever coincides with a grid point is the same run in the store (`names.run_name`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from isobook.config import Config, ConfigError, with_overrides
from isobook.grpo.evaluation import power_of_two_budgets

GRID_COLUMNS = ["set", "batch_problems", "n", "seed"]


def sweep_configs(config: Config) -> list[Config]:
    """One config per grid point with B_p * n <= max_batch, each run to the sweep's budget,
    with the sweep's threads per run and an absolute outputs folder (workers may start
    elsewhere)."""
    s = config.sweep
    return [_sweep_run(config, set_name, batch_problems, n, seed, s.budget)
            for set_name, batch_problems, n, seed in itertools.product(s.sets, s.batch_problems,
                                                                       s.rollouts_per_problem, s.seeds)
            if batch_problems * n <= s.max_batch]


def grid_run(config: Config, set_name: str, batch_problems: int, n: int, changes: Sequence[str] = (),
             budget: int | None = None, seed: int | None = None) -> Config:
    """One run like the sweep's, but anywhere: `changes` are ``section.field=value``
    overrides (e.g. a recipe variant), `budget` defaults to the sweep's, `seed` to the
    sweep's first. Whatever coincides with a grid point is the same run in the store."""
    varied = with_overrides(config, changes)
    return _sweep_run(varied, set_name, batch_problems, n, config.sweep.seeds[0] if seed is None else seed,
                      budget or config.sweep.budget)


def _sweep_run(config: Config, set_name: str, batch_problems: int, n: int, seed: int, budget: int) -> Config:
    system = replace(config.system, threads=config.sweep.threads_per_worker,
                     outputs=str(Path(config.system.outputs).resolve()))
    train = replace(config.train, set=set_name, batch_problems=batch_problems, rollouts_per_problem=n,
                    seed=seed + config.sweep.seed_shift, budget=budget)
    return replace(config, train=train, system=system)


def grid_row(config: Config) -> dict[str, object]:
    """The grid columns of a run config."""
    t = config.train
    return {"set": t.set, "batch_problems": t.batch_problems, "n": t.rollouts_per_problem, "seed": t.seed}


def misconception_arms(config: Config) -> dict[str, Config]:
    """Today's task and the coverage-limited one, by their labels (``misconceptions 0``,
    ``misconceptions 12``): the config as it is, and the same with the chain task's
    misconceptions, their slip and the other carry steps' slip at the ``misconceptions``
    section's values (its own base model, sets and runs)."""
    m, chain = config.misconceptions, config.task.chain
    if chain.misconceptions == m.kinds:
        raise ConfigError(f"misconceptions.kinds: the arm needs a number of misconceptions unlike "
                          f"task.chain.misconceptions ({chain.misconceptions}); allowed: 1..90 but "
                          f"{chain.misconceptions}")
    on = with_overrides(config, [f"task.chain.misconceptions={m.kinds}", f"task.chain.misconception_slip={m.slip}",
                                 f"task.chain.slip_carry={m.slip_carry}"])
    return {f"misconceptions {chain.misconceptions}": config, f"misconceptions {m.kinds}": on}


def model_arms(config: Config) -> dict[str, Config]:
    """Two base models, by their labels: the config as it is, and the same with
    ``model`` replaced by ``second_model.model`` (with ``model.max_positions``; same task, teacher, base-model training and set
    rules; its own base model, sets and runs). An isobook model is labelled by its layout
    and size (``qwen2-h96-l3``), a checkpoint by its folder name."""
    # The same task's prompts and completions: the main model's sequence length.
    other = replace(config, model=replace(config.second_model.model, max_positions=config.model.max_positions))
    labels = [_model_label(arm) for arm in (config, other)]
    if labels[0] == labels[1]:
        raise ConfigError(f"second_model: labelled like the main model ({labels[0]}); allowed: another "
                          "architecture, width, depth or source")
    return dict(zip(labels, (config, other)))


# The base-model arms a chapter may declare (``extra_base_models``), by the name it uses.
ARMS: dict[str, Callable[[Config], dict[str, Config]]] = {"second-model": model_arms,
                                                           "misconceptions": misconception_arms}


def _model_label(config: Config) -> str:
    """``qwen2-h96-l3`` for isobook's own model (layout, width, depth), else the folder name."""
    m = config.model
    return f"{m.architecture}-h{m.hidden_size}-l{m.num_layers}" if m.source == "isobook" else Path(m.source).name


class NGrid(NamedTuple):
    """The n-versus-M comparison at the sweep's first B_p (chapters 04 and 07)."""

    batch_problems: int  # the sweep's first B_p
    n_values: list[int]  # the sweep's n with B_p * n <= max_batch
    budgets: list[int]  # power-of-two budgets (rollouts) at which every n has made an update


def n_grid(config: Config) -> NGrid:
    """The sweep's n at its first B_p, and the budgets where all of them compare."""
    batch_problems = config.sweep.batch_problems[0]
    n_values = [n for n in config.sweep.rollouts_per_problem if batch_problems * n <= config.sweep.max_batch]
    budgets = [b for b in power_of_two_budgets(config.evaluation, config.sweep.budget)
               if b >= batch_problems * max(n_values)]
    return NGrid(batch_problems, n_values, budgets)
