"""Finished runs' policies scored on other sets' validation splits (the mixtures study,
paper Figure 15): does training on hard problems forget easy ones, does very-easy data help?

    from isobook.grpo.transfer import transfer_counts
    counts = transfer_counts(configs, ["easy", "hard", "veryeasy"])   # one row per (policy, set, problem)

Scores use the same estimators, samples and seed as a run's own evaluation, on the first
`evaluation.validation_problems` problems of each set's validation split, by the policy
trained to each config's budget (an extended run keeps its earlier ones, `run_store.policy_at`).
The base model is scored too (``run`` = "base"), as the point nothing was trained.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import NamedTuple, Sequence

import pandas as pd

from isobook.config import Config
from isobook.grpo.evaluation import correct_counts
from isobook.grpo.run import problems_of
from isobook.model.pretrain import stored_base_model
from isobook.rollout import inference_engine
from isobook.sets.build import load_set, stored_sets
from isobook.store.atomic import StoreError, cached_json
from isobook.store.names import Seed, base_scores_path, run_folder, run_name, step_seed, transfer_cache_name
from isobook.store.runs import policy_at, read_status
from isobook.tasks import Problem, make_task


class Policy(NamedTuple):
    """A policy to score: who it is (``run``, ``train_set``, ``n``, ``rollouts``), the
    training seeds its scores stand on (a run's own; every seed of the configs for the base
    model, which no seed trains), its weights, and the folder its scores are kept in."""

    identity: dict[str, object]
    seeds: tuple[int, ...]
    weights: Path
    cache: Path


def finished_policies(configs: list[Config]) -> list[Policy]:
    """The base model of ``configs[0]`` (``run`` = "base", the point nothing was trained),
    then the policy of every finished run in `configs` at its config's budget (an extended
    run keeps its earlier ones, `run_store.policy_at`). A run that holds no policy at its
    config's budget is refused (StoreError)."""
    if not configs:
        raise ValueError("configs: at least one run config is needed")
    first = configs[0]
    policies = [Policy({"run": "base", "train_set": "-", "n": 0, "rollouts": 0},
                       tuple(sorted({config.train.seed for config in configs})), stored_base_model(first),
                       base_scores_path(first).parent)]
    for config in configs:
        folder = run_folder(config)
        status = read_status(folder)
        if status and status["status"] == "finished":
            rollouts = config.train.steps * config.train.batch_rollouts
            weights = policy_at(folder, rollouts)
            if weights is None:
                raise StoreError(f"{folder}: holds no policy trained to {rollouts:,} rollouts, the run's budget here "
                                 f"(it finished at {status['rollouts']:,}; a run keeps the policy of each budget it "
                                 "finished at before being extended, and this one never stopped there or was extended "
                                 f"before isobook kept policies); ask for {status['rollouts']:,} rollouts (a chapter's "
                                 "budget, book.budgets), or build the book at the smaller budget first in a fresh "
                                 "outputs folder")
            policies.append(Policy({"run": run_name(config), "train_set": config.train.set,
                                    "n": config.train.rollouts_per_problem, "rollouts": rollouts},
                                   (config.train.seed,), weights, folder if weights.name == "policy" else weights))
    return policies


def transfer_counts(configs: list[Config], set_names: Sequence[str]) -> pd.DataFrame:
    """Per-problem correct counts of the base model and of every finished run's policy at
    its config's budget in `configs` on each set in `set_names`: one row per (``run``,
    ``train_set``, ``n``, ``seed``, ``rollouts``, ``set``, ``id``) with ``correct`` and
    ``samples`` (the base model's rows repeated on every seed of `configs`: no seed trains it).
    Every policy draws with the same seed, so counts pair problem by problem across
    policies. Counts are kept as ``transfer-<set>-<hash>.json`` (in the run's folder for
    ``policy/``, inside ``policies/<rollouts>/`` for a kept one) and reused while the policy
    is unchanged. A run that holds no policy at its config's budget is refused (StoreError)."""
    policies = finished_policies(configs)
    first = configs[0]
    ev, sampling = first.evaluation, first.sampling
    sets = stored_sets(first)
    task, draw_seed = make_task(first.task), step_seed(first.train.seed, Seed.EVALUATION, 0)
    cache_names = {name: transfer_cache_name(first, name) for name in set_names}

    @functools.cache
    def validation(name: str) -> list[Problem]:  # read on first need, once
        return problems_of(load_set(sets, name)["validation"])[: ev.validation_problems]

    frames = []
    for identity, seeds, weights, cache in policies:
        engine = None
        for name in set_names:

            def score() -> dict[str, object]:
                nonlocal engine
                if engine is None:
                    engine, _ = inference_engine(first, weights)
                correct = correct_counts(engine, task, validation(name), ev.samples, sampling, draw_seed)
                return {"rollouts": identity["rollouts"], "correct": [int(c) for c in correct]}

            # Kept by an older store without per-problem counts, or for an earlier policy: score again.
            cached = cached_json(cache / cache_names[name],
                                 lambda kept: "correct" in kept and kept["rollouts"] == identity["rollouts"], score)
            ids = [problem.id for problem in validation(name)]
            for train_seed in seeds:
                frames.append(pd.DataFrame({**identity, "seed": train_seed, "set": name, "id": ids,
                                            "correct": cached["correct"], "samples": ev.samples}))
    return pd.concat(frames, ignore_index=True)
