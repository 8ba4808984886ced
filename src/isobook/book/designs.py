"""The runs each chapter trains, as functions of its config: the chapters build their
designs from these, and `isobook book --plan` (`book.plan`) adds them up before anything
trains.

    runs = chapter_runs("02_n_versus_m", config)   # every run it asks for before it reads any
    recipe = recipe_runs(config, budget=512)       # chapter 01's, by group: ablation, lr, scaling
    recipe["ablation"].labels                      # the arm each run is in the chapter's tables

`config` is the chapter's (`kernel.chapter_config`: the params file with the chapter's
budget as ``sweep.budget``). What a chapter decides from results is not here: chapter 02's
runs one rate step past a bracket's edge (at most ``lr_envelope.extensions`` rounds), and its
confirmatory and data-reuse runs train at each n's chosen rate, counted here at the rule's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace

from isobook.analysis.envelope import confirmatory_runs, envelope_runs, one_rate_changes
from isobook.analysis.reuse import reuse_runs
from isobook.book.seeds import reference_grid
from isobook.config import Config
from isobook.sets.build import prepare_sets
from isobook.store.names import sets_built
from isobook.sweeps import (
    grid_run,
    misconception_arms,
    model_arms,
    n_grid,
    sweep_configs,
)

# Chapter 01: the regulariser x zero-variance cells (Figure 3), the base-LR grid's factors of
# the anchor, and the scaling rules compared at the grid's smallest batch.
RECIPE_SETS = ("easy", "hard")
RECIPE_CELLS = {
    "KL+entropy, keep all": ["recipe.regularisers=kl+entropy", "recipe.zero_variance=none"],
    "KL+entropy, filter KL/entropy": ["recipe.regularisers=kl+entropy", "recipe.zero_variance=regularisers"],
    "KL+entropy, filter all": ["recipe.regularisers=kl+entropy", "recipe.zero_variance=all"],
    "neither": ["recipe.regularisers=none", "recipe.zero_variance=none"],
}
LR_FACTORS = (0.3, 1.0, 3.0, 10.0)
SCALING_RULES = ("constant", "sqrt", "linear")


@dataclass(frozen=True)
class Arms:
    """A design's runs in training order and, run by run, the columns that name its arm in
    the chapter's tables (the `labels` of `sweeps.run_points` and `run_counts`)."""

    runs: list[Config]
    labels: list[dict[str, object]]

    @classmethod
    def of(cls, labelled: list[tuple[dict[str, object], Config]]) -> Arms:
        return cls([run for _, run in labelled], [label for label, _ in labelled])


def recipe_n(config: Config) -> int:
    """Chapter 01's n: the largest of the sweep's up to 16 (the paper's Figure 3 uses 16)."""
    return max(v for v in config.sweep.rollouts_per_problem if v <= 16)


def lr_grid(config: Config) -> list[float]:
    """Chapter 01's base learning rates: the anchor (``recipe.base_lr``) times `LR_FACTORS`."""
    return sorted({config.recipe.base_lr * f for f in LR_FACTORS})


def lr_grid_seeds(config: Config) -> tuple[int, int]:
    """The base-LR grid's two seeds: the sweep's first and the next (the anchor is a central choice)."""
    return config.sweep.seeds[0], config.sweep.seeds[0] + 1


def recipe_runs(config: Config, budget: int) -> dict[str, Arms]:
    """Chapter 01's runs to `budget` rollouts: ``ablation`` (`RECIPE_SETS` x `RECIPE_CELLS`,
    labelled ``recipe``), ``lr`` (`lr_grid` x `lr_grid_seeds`, labelled ``base_lr``) and
    ``scaling`` (`SCALING_RULES` at the sweep's smallest n, labelled ``scaling``), all at the
    sweep's first B_p."""
    batch_problems, n = config.sweep.batch_problems[0], recipe_n(config)
    return {
        "ablation": Arms.of([({"recipe": cell}, grid_run(config, set_name, batch_problems, n, changes, budget=budget))
                             for set_name in RECIPE_SETS for cell, changes in RECIPE_CELLS.items()]),
        "lr": Arms.of([({"base_lr": lr}, grid_run(config, "easy", batch_problems, n, [f"recipe.base_lr={lr}"],
                                                  budget=budget, seed=seed))
                       for lr in lr_grid(config) for seed in lr_grid_seeds(config)]),
        "scaling": Arms.of([({"scaling": rule}, grid_run(config, "easy", batch_problems,
                                                         min(config.sweep.rollouts_per_problem),
                                                         [f"recipe.lr_scaling={rule}"], budget=budget))
                            for rule in SCALING_RULES]),
    }


def sensitivity_runs(config: Config) -> dict[str, list[Config]]:
    """Chapter 03's runs: ``fixed``, the sweep's runs at the batch size its grid splits in the
    most ways (the smallest among ties), and ``sensitivity``, those and chapter 02's runs at
    the grid's first B_p."""
    grid = sweep_configs(config)
    splits = Counter(run.train.batch_rollouts for run in grid)
    batch = min(splits, key=lambda b: (-splits[b], b))
    fixed = [run for run in grid if run.train.batch_rollouts == batch]
    return {"fixed": fixed,
            "sensitivity": fixed + [run for run in grid if run.train.batch_problems == config.sweep.batch_problems[0]]}


def interference_runs(config: Config) -> dict[str, list[Config]]:
    """Chapter 04's runs: ``grid``, every n at the first B_p on each sweep set, and ``piles``,
    the smallest and largest n with the pass@1 measurements of ``interference`` on its sets
    and seeds."""
    batch_problems, n_values, _ = n_grid(config)
    piles = config.interference
    return {"grid": [grid_run(config, set_name, batch_problems, n) for set_name in config.sweep.sets for n in n_values],
            "piles": [grid_run(config, set_name, batch_problems, n, piles.histogram_changes(), seed=seed)
                      for set_name in piles.sets for n in (min(n_values), max(n_values)) for seed in piles.seeds]}


def data_n_values(config: Config) -> list[int]:
    """Chapter 05's n: those of the sweep whose batch at its first B_p fits ``sweep.max_batch``."""
    return [n for n in config.sweep.rollouts_per_problem if config.sweep.batch_problems[0] * n <= config.sweep.max_batch]


def data_runs(config: Config, small_size: int, easy_size: int) -> dict[str, Arms]:
    """Chapter 05's runs at the sweep's first B_p and the smallest and largest of
    `data_n_values`: ``sizes``, the full easy set (`easy_size` training problems) then its
    first `small_size` problems, each at both n and labelled ``data``, and ``mixtures``, hard
    and mix-dual at both n and mix-tri at the largest."""
    batch_problems, n_values = config.sweep.batch_problems[0], data_n_values(config)
    small_n, large_n = min(n_values), max(n_values)
    sizes = {f"full (D = {easy_size:,})": [], f"small (D = {small_size:,})": [f"train.data_size={small_size}"]}
    return {"sizes": Arms.of([({"data": label}, grid_run(config, "easy", batch_problems, n, changes))
                              for label, changes in sizes.items() for n in (small_n, large_n)]),
            "mixtures": Arms.of([({}, run) for run in [*(grid_run(config, set_name, batch_problems, n)
                           for set_name in ("hard", "mix-dual") for n in (small_n, large_n)),
                         grid_run(config, "mix-tri", batch_problems, large_n)]])}


def small_data_size(config: Config, fraction: float, easy_size: int | None = None) -> int:
    """Chapter 05's small training set: `fraction` of the easy set's training problems
    (`easy_size`, read from the built sets when not given), at least one batch."""
    if easy_size is None:
        easy_size = prepare_sets(config).summary["sets"]["easy"]["train"]
    return max(config.sweep.batch_problems[0], round(easy_size * fraction))


def playbook_grid(config: Config) -> Config:
    """Chapter 06's sweep: every B_p and n of the sweep on its first set."""
    return replace(config, sweep=replace(config.sweep, sets=(config.sweep.sets[0],)))


def model_runs(config: Config) -> dict[str, Arms]:
    """Chapter 07's runs: ``arms``, every n at the first B_p on ``second_model.set`` for each
    base model (`model_arms`, labelled ``model``), and ``baseline``, the three arms of
    ``baseline`` (n, decoupled n / n_train, n_train) on its seeds, labelled ``arm``."""
    batch_problems, n_values, _ = n_grid(config)
    b = config.baseline
    return {"arms": Arms.of([({"model": label}, grid_run(arm, config.second_model.set, batch_problems, n))
                             for label, arm in model_arms(config).items() for n in n_values]),
            "baseline": Arms.of([({"arm": label}, grid_run(config, b.set, batch_problems, n, changes, seed=seed))
                                 for label, (n, changes) in baseline_arms(config).items() for seed in b.seeds])}


def baseline_arms(config: Config) -> dict[str, tuple[int, list[str]]]:
    """Chapter 07's baseline arms by label: each one's n and overrides."""
    b = config.baseline
    return {f"n = {b.rollouts_per_problem}": (b.rollouts_per_problem, ["train.n_train=null"]),
            f"decoupled {b.rollouts_per_problem}/{b.n_train}": (b.rollouts_per_problem, [f"train.n_train={b.n_train}"]),
            f"n = {b.n_train}": (b.n_train, ["train.n_train=null"])}


def growth_runs(config: Config) -> dict[str, list[Config]]:
    """Chapter 08's runs on the hard set at the first B_p: ``rule``, every n under the
    config's rule and every n but the largest at the largest's rate (``interference.seeds``),
    and ``misconceptions``, every n on the misconception task's base model (its seeds), the
    extremes with the pass@1 measurements of ``interference``."""
    batch_problems, n_values, _ = n_grid(config)
    small, large = min(n_values), max(n_values)
    one_rate = one_rate_changes(config, batch_problems * large)
    seeds = config.interference.seeds
    arm = misconception_arms(config)[f"misconceptions {config.misconceptions.kinds}"]
    return {"rule": [*(grid_run(config, "hard", batch_problems, n, seed=seed) for seed in seeds for n in n_values),
                     *(grid_run(config, "hard", batch_problems, n, one_rate, seed=seed)
                       for seed in seeds for n in n_values if n != large)],
            "misconceptions": [grid_run(arm, "hard", batch_problems, n,
                                        config.interference.histogram_changes() if n in (small, large) else [],
                                        seed=seed)
                               for seed in config.misconceptions.seeds for n in n_values]}


def _n_versus_m(config: Config) -> list[Config]:
    return [run for set_name in config.lr_envelope.sets for run in envelope_runs(config, set_name)]


def _data(config: Config) -> list[Config]:
    built = sets_built(config)  # before the sets exist, a stand-in size: the count is the same
    size = small_data_size(config, 0.125) if built else config.sweep.batch_problems[0]
    return [run for arms in data_runs(config, size, easy_size=0).values() for run in arms.runs]


# Each executed chapter's runs beside chapter 02's grid (which every chapter that states a
# seed-to-seed variance trains through `seeds.book_seed_variance`), by file name.
# Each takes the chapter's config and its declared ``budget_share``.
CHAPTER_RUNS: dict[str, Callable[[Config, float], list[Config]]] = {
    "00_introduction": lambda config, share: [],
    "01_recipe": lambda config, share: [run for arms in recipe_runs(config, round(config.sweep.budget * share)).values()
                                        for run in arms.runs],
    "02_n_versus_m": lambda config, share: _n_versus_m(config),  # and `RATED_RUNS`
    "03_bp_versus_n": lambda config, share: sensitivity_runs(config)["sensitivity"],
    "04_interference": lambda config, share: [run for runs in interference_runs(config).values() for run in runs],
    "05_data": lambda config, share: _data(config),
    "06_playbook": lambda config, share: sweep_configs(playbook_grid(config)),
    "07_models_and_baselines": lambda config, share: [run for arms in model_runs(config).values() for run in arms.runs],
    "08_what_makes_n_grow": lambda config, share: [run for runs in growth_runs(config).values() for run in runs],
}
SEEDLESS_CHAPTERS = ("00_introduction",)  # the chapters that state no seed-to-seed variance
# The runs whose learning rate a chapter chooses from its results, here at the rule's rate:
# chapter 02's confirmatory runs and data-reuse runs, at each n's best rate on the envelope.
RATED_RUNS: dict[str, Callable[[Config], list[Config]]] = {
    "02_n_versus_m": lambda config: [*(run for set_name in config.lr_envelope.sets
                                       for run in confirmatory_runs(config, set_name, {})), *reuse_runs(config, {})]}


def chapter_runs(name: str, config: Config, budget_share: float = 1.0) -> list[Config]:
    """Every run the chapter `name` (its file name in book/, no suffix) asks for whatever
    its results, under its `config` and declared `budget_share`; chapter 02's grid included
    where it trains it. `RATED_RUNS` come on top."""
    grid = [] if name in SEEDLESS_CHAPTERS else sweep_configs(reference_grid(config))
    return [*grid, *CHAPTER_RUNS[name](config, budget_share)]
