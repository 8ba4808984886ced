"""Finished runs' policies scored on other sets' validation splits (the mixtures study,
paper Figure 15): does training on hard problems forget easy ones, does very-easy data help?

    from isobook.transfer import transfer_counts
    counts = transfer_counts(configs, ["easy", "hard", "veryeasy"])   # one row per (policy, set, problem)

Scores use the same estimators, samples and seed as a run's own evaluation, on the first
`evaluation.validation_problems` problems of each set's validation split. The base model
is scored too (``run`` = "base"), as the point nothing was trained.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Sequence

import pandas as pd

from isobook.base_model import ensure_base_model
from isobook.config import Config
from isobook.evaluation import correct_counts
from isobook.names import Seed, base_scores_path, run_folder, run_name, step_seed, transfer_cache_name
from isobook.pipeline import load_set, prepare_sets
from isobook.rollout import inference_engine
from isobook.run_store import read_status
from isobook.runs import problems_of
from isobook.storage import cached_json
from isobook.tasks import Problem, make_task


def transfer_counts(configs: list[Config], set_names: Sequence[str]) -> pd.DataFrame:
    """Per-problem correct counts of the base model and of every finished run's final
    policy in `configs` on each set in `set_names`: one row per (``run``, ``train_set``,
    ``n``, ``rollouts``, ``set``, ``id``) with ``correct`` and ``samples``. Every policy
    draws with the same seed, so counts pair problem by problem across policies. Counts
    are kept beside each policy (``transfer-<set>-<hash>.json``) and reused while the
    policy is unchanged."""
    if not configs:
        raise ValueError("configs: at least one run config is needed")
    first = configs[0]
    ev, sampling = first.evaluation, first.sampling
    sets = prepare_sets(first)
    policies: list[tuple[dict[str, object], Path, Path]] = [  # (identity, weights, cache folder)
        ({"run": "base", "train_set": "-", "n": 0, "rollouts": 0}, ensure_base_model(first),
         base_scores_path(first).parent)]
    for config in configs:
        status = read_status(run_folder(config))
        if status and status["status"] == "finished":
            policies.append(({"run": run_name(config), "train_set": config.train.set,
                              "n": config.train.rollouts_per_problem, "rollouts": status["rollouts"]},
                             run_folder(config) / "policy", run_folder(config)))
    task, seed = make_task(first.task), step_seed(first.train.seed, Seed.EVALUATION, 0)
    cache_names = {name: transfer_cache_name(first, name) for name in set_names}

    @functools.cache
    def validation(name: str) -> list[Problem]:  # read on first need, once
        return problems_of(load_set(sets, name)["validation"])[: ev.validation_problems]

    frames = []
    for identity, weights, cache in policies:
        engine = None
        for name in set_names:

            def score() -> dict[str, object]:
                nonlocal engine
                if engine is None:
                    engine, _ = inference_engine(first, weights)
                correct = correct_counts(engine, task, validation(name), ev.samples, sampling, seed)
                return {"rollouts": identity["rollouts"], "correct": [int(c) for c in correct]}

            # Kept by an older store without per-problem counts, or for an earlier policy: score again.
            cached = cached_json(cache / cache_names[name],
                                 lambda kept: "correct" in kept and kept["rollouts"] == identity["rollouts"], score)
            ids = [problem.id for problem in validation(name)]
            frames.append(pd.DataFrame({**identity, "set": name, "id": ids, "correct": cached["correct"],
                                        "samples": ev.samples}))
    return pd.concat(frames, ignore_index=True)
