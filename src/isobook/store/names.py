"""Every name the store uses, and what every random stream is for.

    <outputs>/models/<base_model_id>/                    isobook's own base model
    <outputs>/sets/<sets_id>/                            its difficulty profile and problem sets
    <outputs>/base_scores/<set>-s<seed>-<hash>.json      the base model's step-0 scores
    <outputs>/runs/<run_name>/                           one GRPO run (`run_store`)
    <outputs>/runs/<run_name>/transfer-<set>-<hash>.json its policy's counts on another set
    <outputs>/runs/<run_name>/skills-<set>-r<rollouts>-<hash>.parquet  its carry-step accuracies
    <outputs>/runs/<run_name>/policies/<rollouts>/       a policy kept when the run was extended,
                                                         with its transfer counts

A name is readable (``easy-bp32-n8-s0``) plus six hex digits hashing everything else that
changes the result (`fingerprint`). What enters the hash of a config section: every field
it had when the naming froze (`FROZEN_FIELDS`), and any field added since *only when it
differs from its default*. A field whose default reproduces the old behaviour therefore
keeps every stored name, and an upgrade of isobook does not retrain a store. The flip side:
changing a default that changes results must change `FROZEN_FIELDS` or the name's text
(``tests/test_names.py`` pins the default names, so such a change cannot go unnoticed).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterator
from dataclasses import replace
from enum import IntEnum
from pathlib import Path
from typing import Any

import numpy as np

from isobook.config import Config, regularised
from isobook.config.fields import default_of
from isobook.device import numerics


class Seed(IntEnum):
    """What a random stream of a run is for. With the run's seed and an index (the update;
    the epoch for the problem order, which seeds ``default_rng([seed, 0, epoch])`` directly)
    it seeds one stream (`step_seed`), independent of every other, so a resumed run draws
    exactly what an uninterrupted one would."""

    PROBLEM_ORDER = 0  # the permutation of the training set in each epoch
    SAMPLING = 1  # the rollouts of each update
    EVALUATION = 2  # the validation samples (the same at every evaluation: common random numbers)
    TRAIN_PASS = 3  # the training-set pass@1 samples
    DECOUPLED_SUBSET = 4  # which n_train of the n rollouts the decoupled baseline trains on


POOL_SEED_OFFSET = 1_000_003  # keeps the sets' pool problems apart from the base model's training draws


def step_seed(seed: int, purpose: Seed, step: int) -> int:
    """A 62-bit seed for one purpose at one step, independent of everything else."""
    return int(np.random.default_rng([seed, int(purpose), step]).integers(2**62))


# The fields of each hashed config section when the naming froze (December 2026).
FROZEN_FIELDS: dict[str, tuple[str, ...]] = {
    "ModelConfig": ("source", "hidden_size", "num_layers", "num_heads", "intermediate_size", "max_positions"),
    "TaskConfig": ("family", "min_ops", "max_ops", "min_carries", "max_carries", "max_value", "slip_carry",
                   "slip_plain", "path", "question_field", "answer_field", "prompt_template"),
    "BaseModelConfig": ("steps", "batch_size", "lr", "warmup_steps", "min_lr_ratio", "weight_decay",
                        "checkpoint_every", "earlier_checkpoint"),
    "SamplingConfig": ("temperature", "top_p", "max_new_tokens", "batch_rollouts"),
    "SetsConfig": ("pool_size", "samples", "xhard_samples", "xhard_candidates", "validation_size", "easy", "hard",
                   "veryeasy", "mixtures", "stability_problems"),
    "TrainConfig": ("set", "batch_problems", "rollouts_per_problem", "budget", "seed", "n_train", "data_size"),
    "RecipeConfig": ("regularisers", "kl", "entropy", "track_kl", "zero_variance", "base_lr", "reference_batch",
                     "lr_scaling", "warmup_steps", "clip", "tis_cap", "grad_clip", "weight_decay"),
    "EvaluationConfig": ("k", "samples", "validation_problems", "first_rollouts", "points_per_doubling",
                         "train_pass_rollouts", "train_pass_problems", "train_pass_samples", "checkpoint_every"),
    "BanditConfig": ("problems", "actions", "features", "batch_problems", "rollouts_per_problem", "budget", "lr",
                     "seeds", "fixed_batch"),
}
# ``evaluation.points_per_doubling`` when the naming froze (the default is 1 since 03b1181).
# Step-0 scores do not depend on the schedule, so `base_scores_path` hashes it at this value.
FROZEN_POINTS_PER_DOUBLING = 2
# Frozen fields since replaced, hashed at the value their replacement's default reproduces:
# ``recipe.normalize_std: true`` is ``recipe.advantage: grpo``.
RETIRED_FIELDS: dict[str, dict[str, Any]] = {"RecipeConfig": {"normalize_std": True}}


# Subsections hashed as the fields of their section, which was flat when the naming froze
# (``task.chain.min_ops`` was ``task.min_ops``); their field names do not overlap.
FLAT_SUBSECTIONS: dict[str, tuple[str, ...]] = {"TaskConfig": ("chain", "math_file")}


def identity(section: Any) -> dict[str, Any]:
    """What of a config section enters a name: its frozen fields, its retired fields at
    their old values, and its newer fields where they differ from their defaults."""
    kind = type(section).__name__
    if kind not in FROZEN_FIELDS:  # else every field of a new section would count as added later
        raise KeyError(f"{kind}: not a config section names hash; add its fields to FROZEN_FIELDS")
    frozen = FROZEN_FIELDS[kind]
    kept = dict(RETIRED_FIELDS.get(kind, {}))
    for name, value, default in _flat_fields(section):
        if name in frozen or value != default:
            kept[name] = value
    return kept


def _flat_fields(section: Any) -> Iterator[tuple[str, Any, Any]]:
    """(name, value, default) of each field of `section`, a `FLAT_SUBSECTIONS` subsection's
    fields in its place."""
    for field in dataclasses.fields(section):
        value = getattr(section, field.name)
        if field.name in FLAT_SUBSECTIONS.get(type(section).__name__, ()):
            yield from _flat_fields(value)
        else:
            yield field.name, value, default_of(field)


def fingerprint(*parts: Any) -> str:
    """Six hex digits identifying `parts` (config sections or plain data), stable across
    runs and across isobook versions that only add defaulted fields."""
    plain = [identity(p) if dataclasses.is_dataclass(p) else p for p in parts]
    text = json.dumps(plain, sort_keys=True, default=list)
    return hashlib.sha256(text.encode()).hexdigest()[:6]


def base_model_id(config: Config) -> str:
    """isobook's own base model, e.g. ``qwen2-h96-l3-chain-s0-1a2b3c`` (``llama-...`` for
    the other layout)."""
    m = config.model
    digest = fingerprint(m, config.task, config.base_model, config.system.seed)
    return f"{m.architecture}-h{m.hidden_size}-l{m.num_layers}-{config.task.family}-s{config.system.seed}-{digest}"


def base_model_path(config: Config) -> Path:
    """The folder of the base model `config` names (isobook's cache, or the user's own)."""
    if config.model.source != "isobook":
        return Path(config.model.source)
    return Path(config.system.outputs) / "models" / base_model_id(config)


def sets_id(config: Config) -> str:
    """The sets a config produces, e.g. ``qwen2-h96-...-pool14000-1a2b3c``.

    The rollout engine and precision (``system``) are left out: sets are data, built once by
    whichever engine first asks and shared by runs of every engine, so that runs sampling
    with torch and with vLLM train and are scored on the same problems."""
    model = base_model_id(config) if config.model.source == "isobook" else Path(config.model.source).name
    digest = fingerprint(config.model, config.task, config.base_model, config.sampling, config.sets,
                         config.system.seed)
    return f"{model}-pool{config.sets.pool_size}-{digest}"


def sets_folder(config: Config) -> Path:
    return Path(config.system.outputs) / "sets" / sets_id(config)


def sets_built(config: Config) -> bool:
    """Whether the sets `config` names are in the store (their summary is written last)."""
    return (sets_folder(config) / "summary.json").is_file()


def run_name(config: Config) -> str:
    """A run's folder name, e.g. ``easy-bp32-n8-s0-1a2b3c``. The budget is left out (a
    larger budget extends the run), and so is how often it checkpoints."""
    t = config.train
    # "auto" resolved, so a run asking for its set's preset explicitly is the same run.
    recipe = replace(config.recipe, regularisers="kl+entropy" if regularised(config.recipe, t.set) else "none")
    digest = fingerprint(sets_id(config), replace(t, budget=0), recipe,
                         replace(config.evaluation, checkpoint_every=0), *numerics(config.system))
    return f"{t.set}-bp{t.batch_problems}-n{t.rollouts_per_problem}-s{t.seed}-{digest}"


def run_folder(config: Config) -> Path:
    return Path(config.system.outputs) / "runs" / run_name(config)


def base_scores_path(config: Config) -> Path:
    """The base model's step-0 scores for runs like `config`: everything that shapes them
    is hashed (the sets, the evaluation settings, the training set's size), nothing of the
    recipe or the grid point, nor the schedule of later evaluations (hashed at the
    ``points_per_doubling`` the names froze with, so stores keep their scores)."""
    t = config.train
    evaluation = replace(config.evaluation, checkpoint_every=0, points_per_doubling=FROZEN_POINTS_PER_DOUBLING)
    digest = fingerprint(sets_id(config), t.set, t.seed, t.data_size, evaluation, *numerics(config.system))
    return Path(config.system.outputs) / "base_scores" / f"{t.set}-s{t.seed}-{digest}.json"


def transfer_cache_name(config: Config, set_name: str) -> str:
    """A policy's counts on `set_name`'s validation problems, kept in the policy's folder
    (the run's for ``policy/``, ``policies/<rollouts>/`` for a kept one, or ``base_scores/``
    for the base model). Unlike `run_name` it hashes all of ``evaluation``
    (``checkpoint_every`` too), as the caches stored before it did."""
    digest = fingerprint(sets_id(config), set_name, config.train.seed, config.evaluation, config.sampling)
    return f"transfer-{set_name}-{digest}.json"


def skills_cache_name(config: Config, set_name: str, rollouts: int) -> str:
    """A policy's carry-step accuracies on `set_name`'s validation problems
    (`grpo.skills`), kept beside its transfer counts; `rollouts` names the policy (a run's
    ``policy/`` moves on when the run is extended), and the numerics are hashed (a bf16
    forward pass scores differently from an fp32 one)."""
    digest = fingerprint(sets_id(config), set_name, config.evaluation.validation_problems,
                         config.sampling.temperature, *numerics(config.system))
    return f"skills-{set_name}-r{rollouts}-{digest}.parquet"
