"""Configuration: dataclasses grouped by concern, loaded from YAML in ``params/``.

A params file holds any subset of the sections below; ``key=value`` overrides from the
command line (``sets.pool_size=4000``) are applied on top, values parsed as YAML. Every
field is checked before any work starts: an unknown key, a wrong type or a value out of
range raises `ConfigError` naming the field and what it allows.

Sections: ``model`` (which base model), ``task`` (which problem family), ``base_model``
(how isobook trains its own base model), ``sampling`` (rollout decoding), ``sets``
(difficulty profiling and the problem sets), ``train`` (one GRPO run: set, B_p, n,
budget), ``recipe`` (the loss and optimizer), ``evaluation`` (what is measured when),
``sweep`` (a grid of runs and where they execute), ``bandit`` and ``interference``
(chapter 04's experiments), ``second_model`` and ``baseline`` (chapter 07's), ``book``
(chapters' own budgets), ``system`` (seed, threads, output folder, device, precision,
rollout engine).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import re
import textwrap
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

# The keys of `isobook.grpo.advantages.ESTIMATORS` (a test keeps the two equal); named here
# so that reading a config never imports torch.
ADVANTAGE_ESTIMATORS = ("grpo", "drgrpo", "rloo")

# Sets whose preset carries KL + entropy (paper: easy; very easy is easier still).
REGULARISED_SETS = ("easy", "veryeasy")


class ConfigError(ValueError):
    """A params file or override names an unknown field or gives a value it does not allow."""


def option(default: Any, help: str, *, low: float | None = None, high: float | None = None,
           choices: tuple[Any, ...] | None = None, factory: bool = False) -> Any:
    """A dataclass field with its help text and allowed values, checked by `build`.

    `low`/`high` bound numbers (inclusive); `choices` lists allowed values.
    """
    metadata = {"help": help, "low": low, "high": high, "choices": choices}
    if factory:
        return field(default_factory=default, metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass(frozen=True)
class ModelConfig:
    """Which base model. ``source: isobook`` builds and trains our own small Qwen2 (or
    Llama, `architecture`); any other value is a local Hugging Face folder or hub id loaded
    as is (sizes ignored)."""

    source: str = option("isobook", "'isobook', or a local HF causal-LM folder / hub id")
    hidden_size: int = option(96, "hidden width of isobook's own model", low=8)
    num_layers: int = option(3, "transformer blocks", low=1)
    num_heads: int = option(4, "attention heads (must divide hidden_size)", low=1)
    intermediate_size: int = option(288, "MLP width", low=8)
    max_positions: int = option(128, "longest sequence in tokens (prompt + completion)", low=16)
    architecture: str = option("qwen2", "layout of isobook's own model: qwen2 (biased q/k/v projections, tied "
                               "embeddings) or llama (no biases, untied embeddings)", choices=("qwen2", "llama"))
    num_kv_heads: int | None = option(None, "key/value heads (grouped-query attention; must divide num_heads); "
                                      "null: num_heads", low=1)

    def __post_init__(self) -> None:
        if self.hidden_size % self.num_heads:
            raise ConfigError(
                f"model.num_heads: must divide model.hidden_size={self.hidden_size}, got {self.num_heads}"
            )
        if self.num_kv_heads is not None and self.num_heads % self.num_kv_heads:
            raise ConfigError(f"model.num_kv_heads: must divide model.num_heads={self.num_heads}, got "
                              f"{self.num_kv_heads}")

    @property
    def key_value_heads(self) -> int:
        """Key/value heads of the built model (`num_kv_heads`, else one per query head)."""
        return self.num_kv_heads or self.num_heads


@dataclass(frozen=True)
class TaskConfig:
    """Which problem family, and its knobs (each family reads its own fields)."""

    family: str = option("chain", "problem family", choices=("chain", "math-file"))
    min_ops: int = option(2, "chain: fewest operations per problem", low=1)
    max_ops: int = option(10, "chain: most operations per problem", low=1, high=26)
    min_carries: int = option(1, "chain: fewest carry/borrow steps per problem (drawn uniformly)", low=0)
    max_carries: int = option(4, "chain: most carry/borrow steps per problem", low=0)
    max_value: int = option(99, "chain: largest running value on the correct path", low=9)
    slip_carry: float = option(0.47, "chain: teacher's slip probability on a carry/borrow step", low=0.0, high=0.99)
    slip_plain: float = option(0.02, "chain: teacher's slip probability on any other step", low=0.0, high=0.99)
    conflict: float = option(0.0, "chain: share of problems in the ten-less dialect (prompt marked '<': carry and "
                             "borrow steps write ten less, and each dialect's teacher slips into the other's rule); "
                             "0: one shared skill, 0.5: two equal, competing ones", low=0.0, high=1.0)
    path: str | None = option(None, "math-file: a local .jsonl/.json/.parquet file of problems")
    question_field: str = option("question", "math-file: column holding the problem text")
    answer_field: str = option("answer", "math-file: column holding the reference answer or solution")
    prompt_template: str = option(
        "{question}\nPut the final answer within \\boxed{{}}.",
        "math-file: the raw prompt, used where no chat template is applied; {question} is replaced by "
        "the problem",
    )
    # Off by default, the behaviour before the field existed, so stored sets keep their names
    # (`names`); instruct checkpoints want auto (params/gpu-qwen2.5-0.5b.yaml sets it).
    chat_template: str = option(
        "off", "math-file: write each prompt in the checkpoint tokenizer's chat template (one user turn, "
        "the problem then `instruction` on a new line, and the assistant's generation prompt): auto (when "
        "the tokenizer has one, else prompt_template), on (the tokenizer must have one), off (prompt_template)",
        choices=("auto", "on", "off"))
    instruction: str = option(
        "Please reason step by step, and put your final answer within \\boxed{}.",
        "math-file with a chat template: text after the problem in the user turn (DeepSeek-R1 and "
        "Qwen2.5-Math's wording); empty: the problem alone. prompt_template is not used then")

    def __post_init__(self) -> None:
        if self.min_ops > self.max_ops:
            raise ConfigError(f"task.min_ops: must be <= task.max_ops={self.max_ops}, got {self.min_ops}")
        if not self.min_carries <= self.max_carries <= self.max_ops:
            raise ConfigError(
                f"task.max_carries: needs task.min_carries={self.min_carries} <= max_carries <= "
                f"task.max_ops={self.max_ops}, got {self.max_carries}"
            )
        if self.family == "math-file" and not self.path:
            raise ConfigError("task.path: required when task.family is 'math-file'")


@dataclass(frozen=True)
class BaseModelConfig:
    """Supervised training of isobook's own base model on the task's (noisy) teacher."""

    steps: int = option(1000, "optimizer steps", low=1)
    batch_size: int = option(128, "sequences per step", low=1)
    lr: float = option(5e-3, "peak learning rate (AdamW)", low=0.0)
    warmup_steps: int = option(50, "linear warm-up steps", low=0)
    min_lr_ratio: float = option(0.0, "cosine decay ends at lr * min_lr_ratio", low=0.0, high=1.0)
    weight_decay: float = option(0.0, "AdamW weight decay", low=0.0)
    checkpoint_every: int = option(250, "steps between resumable checkpoints", low=1)
    earlier_checkpoint: int = option(
        100, "steps before the end at which the 'shortly before' checkpoint is kept", low=1
    )


@dataclass(frozen=True)
class SamplingConfig:
    """Rollout decoding (paper: temperature 0.6, top-p 1.0 for training and evaluation)."""

    temperature: float = option(0.6, "sampling temperature (0: greedy)", low=0.0)
    top_p: float = option(1.0, "nucleus sampling mass", low=1e-3, high=1.0)
    max_new_tokens: int = option(96, "longest completion in tokens", low=1)
    batch_rollouts: int = option(2048, "rollouts generated per engine call", low=1)


@dataclass(frozen=True)
class SetsConfig:
    """Difficulty profiling of a problem pool and the sets built from it (paper section 3).

    Bins are inclusive intervals of avg@16 under the base model."""

    pool_size: int = option(4000, "problems profiled", low=1)
    samples: int = option(16, "samples per problem for avg@k difficulty", low=1)
    xhard_samples: int = option(128, "samples for the extremely-hard test (0 correct of these)", low=1)
    xhard_candidates: int = option(
        100, "most problems with 0 correct of `samples` that get the extra xhard samples", low=0
    )
    validation_size: int = option(200, "validation problems per set (at most half of a small set)", low=1)
    easy: tuple[float, float] = option((0.3, 0.6), "avg@16 range of 'easy'")
    hard: tuple[float, float] = option((0.0, 0.0625), "avg@16 range of 'hard'")
    veryeasy: tuple[float, float] = option((0.6, 0.9), "avg@16 range of 'veryeasy'")
    mixtures: dict[str, dict[str, float]] = option(
        lambda: {"mix-dual": {"hard": 0.5, "easy": 0.5},
                 "mix-tri": {"hard": 0.5, "easy": 0.25, "veryeasy": 0.25}},
        "mixture name -> {set: fraction}; fractions sum to 1",
        factory=True,
    )
    stability_problems: int = option(
        1000, "pool problems also profiled under the earlier checkpoint (0 to skip)", low=0
    )

    def __post_init__(self) -> None:
        for name in ("easy", "hard", "veryeasy"):
            low, high = getattr(self, name)
            if not 0.0 <= low <= high <= 1.0:
                raise ConfigError(f"sets.{name}: needs 0 <= low <= high <= 1, got [{low}, {high}]")
        for name, parts in self.mixtures.items():
            unknown = set(parts) - {"easy", "hard", "veryeasy", "xhard"}
            if unknown:
                raise ConfigError(
                    f"sets.mixtures.{name}: unknown set {sorted(unknown)}; allowed: easy, hard, veryeasy, xhard"
                )
            if abs(sum(parts.values()) - 1.0) > 1e-6:
                raise ConfigError(f"sets.mixtures.{name}: fractions must sum to 1, got {sum(parts.values())}")


@dataclass(frozen=True)
class TrainConfig:
    """One GRPO run: which problem set, how the batch is shaped, how much compute.

    Compute is counted in rollouts (paper: ``C = B_p * n * M``); the run makes
    ``M = budget // (B_p * n)`` updates. The budget is not part of a run's identity:
    asking for more extends a finished run instead of starting over."""

    set: str = option("easy", "problem set to train on (a set built by `isobook sets`)")
    batch_problems: int = option(32, "B_p: distinct problems per batch", low=1)
    rollouts_per_problem: int = option(8, "n: rollouts per problem (GRPO group size)", low=2)
    budget: int = option(8192, "rollouts to spend in all (C); steps M = budget // (B_p * n); a power "
                         "of two lands on the evaluation grid", low=1)
    seed: int = option(0, "seed of the run's problem order and sampling (system.seed picks the "
                       "base model and the sets)", low=0)
    n_train: int | None = option(
        None, "decoupled baseline (paper App. C): train on a random n_train of the n rollouts "
        "(baseline from all n); None trains on all", low=1)
    data_size: int | None = option(
        None, "D: train on the first D problems of the set's train split (data-size studies, paper "
        "Fig. 14); None uses them all", low=1)

    def __post_init__(self) -> None:
        if self.n_train is not None and self.n_train > self.rollouts_per_problem:
            raise ConfigError(f"train.n_train: must be <= train.rollouts_per_problem="
                              f"{self.rollouts_per_problem}, got {self.n_train}")

    @property
    def batch_rollouts(self) -> int:
        """B = B_p * n, rollouts sampled per update."""
        return self.batch_problems * self.rollouts_per_problem

    @property
    def steps(self) -> int:
        """M, the number of updates the budget buys."""
        return self.budget // self.batch_rollouts


@dataclass(frozen=True)
class RecipeConfig:
    """The loss and optimizer (the paper's "healthy recipe", Figures 3-4).

    ``regularisers: auto`` applies the paper's presets: KL + entropy on easy and very easy
    sets, neither on hard, extremely hard and mixture sets. The learning rate is
    ``base_lr`` at ``reference_batch`` rollouts per update, scaled to B = B_p * n by
    ``lr_scaling``, after ``warmup_steps`` of linear warm-up, then constant (AdamW)."""

    # Words, not on/off: YAML reads a bare on/off as a boolean.
    regularisers: str = option("auto", "KL + entropy terms: auto (by set), kl+entropy, none",
                               choices=("auto", "kl+entropy", "none"))
    kl: float = option(1e-3, "weight of the k3 KL to the base model when regularisers are on", low=0.0)
    entropy: float = option(1e-3, "weight of the entropy bonus when regularisers are on", low=0.0)
    track_kl: bool = option(True, "measure the KL to the base model even when its weight is 0 "
                            "(one more forward pass per update)")
    zero_variance: str = option("none", "drop zero-variance groups from: none, all (every term), "
                                "regularisers (KL and entropy only)", choices=("none", "all", "regularisers"))
    advantage: str = option("grpo", "advantage estimator (isobook.grpo.advantages): grpo (over the group's std), "
                            "drgrpo (no std), rloo (leave-one-out baseline)", choices=ADVANTAGE_ESTIMATORS)
    base_lr: float = option(1e-4, "learning rate at reference_batch (our anchor: params/lr-anchor.yaml)", low=0.0)
    reference_batch: int = option(256, "rollouts per update at which base_lr holds", low=1)
    lr_scaling: str = option("sqrt", "how the LR follows B: constant, linear, sqrt",
                             choices=("constant", "linear", "sqrt"))
    warmup_steps: int = option(10, "linear warm-up updates (paper: 10)", low=0)
    clip: float = option(0.2, "PPO ratio clip epsilon", low=0.0)
    tis_cap: float = option(2.0, "truncated importance sampling cap", low=1.0)
    grad_clip: float = option(1.0, "gradient norm clip (0 turns it off)", low=0.0)
    weight_decay: float = option(0.0, "AdamW weight decay", low=0.0)


@dataclass(frozen=True)
class EvaluationConfig:
    """What a run measures and when, on a schedule in rollouts (log-spaced, so one run
    yields a reward-versus-compute curve). Evaluation points are
    ``first_rollouts * 2**(i / points_per_doubling)`` for i = 0, 1, ... (plus the base
    model at 0 and the run's last update); they do not depend on the budget, so a run
    extended to 2C has the same points as a run asked for 2C at once."""

    k: int = option(4, "k of avg@k, best@k, worst@k", low=1)
    samples: int = option(4, "samples per validation problem (>= k; unbiased estimators)", low=1)
    validation_problems: int = option(200, "validation problems used (at most the split's size)", low=1)
    first_rollouts: int = option(512, "first evaluation point after the base model, in rollouts", low=1)
    points_per_doubling: int = option(
        1, "evaluation points per doubling of compute: 1 scores the power-of-two budgets the chapters "
        "compare; each further point costs a validation pass (validation_problems x samples rollouts)", low=1)
    train_pass_rollouts: tuple[int, ...] = option(
        (0, 4096), "rollout counts at which per-problem pass@1 of the training set is "
        "measured (the interference histograms)")
    train_pass_problems: int = option(128, "training problems in that measurement", low=1)
    train_pass_samples: int = option(8, "samples per training problem for that pass@1", low=1)
    checkpoint_every: int = option(25, "updates between resumable checkpoints", low=1)

    def __post_init__(self) -> None:
        if self.samples < self.k:
            raise ConfigError(f"evaluation.samples: must be >= evaluation.k={self.k}, got {self.samples}")


@dataclass(frozen=True)
class SweepConfig:
    """A grid of GRPO runs (paper section 5): every (set, B_p, n, seed) with B_p * n <= max_batch,
    each run to `budget` rollouts (its curve gives every smaller budget too).

    Runs come from the run store, so finished runs are reused and a larger budget extends
    them. ``executor: local`` runs `workers` processes on this machine; ``ray`` sends each
    run to a Ray cluster (``ray_address``; none starts a local one) as a task asking for
    `threads_per_worker` CPUs (and `gpus_per_run` GPUs)."""

    sets: tuple[str, ...] = option(("easy", "hard"), "problem sets to sweep")
    batch_problems: tuple[int, ...] = option((8, 16, 32), "B_p values (powers of two)")
    rollouts_per_problem: tuple[int, ...] = option((4, 8, 16, 32), "n values (powers of two)")
    max_batch: int = option(256, "B_max: largest B = B_p * n run", low=1)
    budget: int = option(4096, "rollouts per run (C of the longest point of each curve)", low=1)
    seeds: tuple[int, ...] = option((0,), "train.seed values")
    executor: str = option("local", "where runs execute: local, ray", choices=("local", "ray"))
    workers: int | None = option(None, "local: runs at a time; null: as many as this machine's CPUs hold at "
                                 "threads_per_worker each (one where runs go to a CUDA GPU)", low=1)
    threads_per_worker: int = option(1, "torch threads per run (one per core beats two per run for "
                                     "small models)", low=1)
    gpus_per_run: float = option(0.0, "ray: GPUs each run asks for", low=0.0)
    ray_address: str | None = option(None, "ray: cluster address ('auto', 'ray://host:10001'); none starts "
                                     "a local cluster")

    def __post_init__(self) -> None:
        for name in ("batch_problems", "rollouts_per_problem"):
            values = getattr(self, name)
            bad = [v for v in values if v < 1 or v & (v - 1)]
            if bad or not values:
                raise ConfigError(f"sweep.{name}: needs powers of two, got {list(values)}")
        smallest = min(self.batch_problems) * min(self.rollouts_per_problem)
        if smallest > self.max_batch:
            raise ConfigError(f"sweep.max_batch: {self.max_batch} leaves no grid point (the smallest B_p * n is "
                              f"{smallest}); allowed: >= {smallest}")


@dataclass(frozen=True)
class BanditConfig:
    """Chapter 04's bandits with shared parameters (`isobook.analysis.bandit`): `problems` problems of
    `actions` answers each, trained by GRPO at B_p = `batch_problems` with a log-linear
    policy over d shared features for each d in `features`, beside the tabular policy (no
    sharing) at the same settings, every n to `budget` rollouts; then, at the middle d, a
    batch of B_p x n = `fixed_batch` rollouts split every way between B_p and n, with the
    same step per problem and per update (`bandit.batch_split_curves`). About 100 seconds
    of numpy at the defaults (kept in the run store), seconds in the smoke preset."""

    problems: int = option(256, "problems P (every one starts at pass@1 1/actions)", low=2)
    actions: int = option(16, "answers per problem, one correct", low=2)
    features: tuple[int, ...] = option((16, 32, 128), "d values: shared features per problem, each < problems "
                                       "(problems compete for the shared weights)")
    batch_problems: int = option(8, "B_p of the n*(C) comparison", low=1)
    rollouts_per_problem: tuple[int, ...] = option((2, 4, 8, 16, 32, 64), "n values (powers of two, >= 2)")
    budget: int = option(262144, "rollouts per curve (a power of two)", low=1)
    lr: float = option(2.0, "step size on each drawn problem's logits (constant, > 0)", low=0.0)
    seeds: int = option(8, "independent repetitions (new features, answers and draws each)", low=2)
    fixed_batch: int = option(64, "B_p x n of the batch-split comparison, run at the middle d of features "
                              "(a power of two)", low=4)

    def __post_init__(self) -> None:
        bad = [v for v in self.rollouts_per_problem if v < 2 or v & (v - 1)]
        if bad or not self.rollouts_per_problem:
            raise ConfigError(f"bandit.rollouts_per_problem: needs powers of two >= 2, got "
                              f"{list(self.rollouts_per_problem)}")
        if not self.features or min(self.features) < 1 or max(self.features) >= self.problems:
            raise ConfigError(f"bandit.features: needs numbers of features in [1, bandit.problems - 1] (d = P is the "
                              f"tabular policy, always run), got {list(self.features)}")
        for name in ("budget", "fixed_batch"):
            value = getattr(self, name)
            if value & (value - 1):
                raise ConfigError(f"bandit.{name}: needs a power of two, got {value}")
        if self.batch_problems > self.problems:
            raise ConfigError(f"bandit.batch_problems: at most bandit.problems={self.problems}, got "
                              f"{self.batch_problems}")
        splits = [n for n in self.rollouts_per_problem if 1 <= self.fixed_batch // n <= self.problems]
        if len(splits) < 2:
            raise ConfigError(f"bandit.fixed_batch: {self.fixed_batch} must split as B_p x n with B_p in [1, "
                              f"{self.problems}] for two n of bandit.rollouts_per_problem, got {splits}")
        if self.lr <= 0:
            raise ConfigError(f"bandit.lr: must be > 0, got {self.lr}")
        if self.budget < max(self.fixed_batch, self.batch_problems * max(self.rollouts_per_problem)):
            least = max(self.fixed_batch, self.batch_problems * max(self.rollouts_per_problem))
            raise ConfigError(f"bandit.budget: {self.budget} buys no update of every curve; allowed: >= {least}")


@dataclass(frozen=True)
class InterferenceConfig:
    """Chapter 04's LLM experiment: the sweep's n values at its first B_p on each set in `sets`,
    once per seed in `seeds`, with the task as configured (the knob at ``task.conflict``) and
    with the knob at `conflict`: problems in two dialects whose carry rules disagree
    (`tasks.chain`), so that they compete for the model's weights. The knob-on side has a
    base model, sets and runs of its own (about 30 minutes more of the cpu book)."""

    conflict: float = option(0.5, "task.conflict of the knob-on runs: the share of problems in the ten-less "
                             "dialect (> 0 and unlike task.conflict)", low=0.0, high=1.0)
    seeds: tuple[int, ...] = option((0, 1), "seeds of every LLM run of the chapter, knob off and on (at least two: "
                                    "the verdicts rest on more than one trained policy)")
    sets: tuple[str, ...] = option(("hard",), "problem sets the knob runs train on (the easy set's validation "
                                   "problems always score the hard-set policies for forgetting)")

    def __post_init__(self) -> None:
        if self.conflict <= 0:
            raise ConfigError(f"interference.conflict: the knob-on runs need a share of ten-less problems in (0, 1], "
                              f"got {self.conflict}")
        if len(set(self.seeds)) < 2 or min(self.seeds) < 0:
            raise ConfigError(f"interference.seeds: needs at least two distinct seeds >= 0, got {list(self.seeds)}")


@dataclass(frozen=True)
class SecondModelConfig:
    """Chapter 07's second base model: isobook's own model in another layout and size,
    taught the same task by the same teacher for as many steps, with sets of its own from
    its own avg@16 (or, with `source`, a checkpoint of the user's). Its n-versus-M sweep is
    the sweep's n at its first B_p on `set`, beside the main model's (chapter 02's runs).
    ``max_positions`` is ``model``'s."""

    source: str = option("isobook", "'isobook' (built from the fields below), or a local HF causal-LM folder / "
                         "hub id")
    architecture: str = option("llama", "its layout (see model.architecture)", choices=("qwen2", "llama"))
    hidden_size: int = option(64, "its hidden width", low=8)
    num_layers: int = option(4, "its transformer blocks", low=1)
    num_heads: int = option(4, "its attention heads (must divide hidden_size)", low=1)
    num_kv_heads: int | None = option(2, "its key/value heads (must divide num_heads); null: num_heads", low=1)
    intermediate_size: int = option(176, "its MLP width", low=8)
    set: str = option("easy", "the problem set both models' n-versus-M sweeps train on")

    def __post_init__(self) -> None:
        if self.hidden_size % self.num_heads:
            raise ConfigError(f"second_model.num_heads: must divide second_model.hidden_size={self.hidden_size}, "
                              f"got {self.num_heads}")
        if self.num_kv_heads is not None and self.num_heads % self.num_kv_heads:
            raise ConfigError(f"second_model.num_kv_heads: must divide second_model.num_heads={self.num_heads}, "
                              f"got {self.num_kv_heads}")


@dataclass(frozen=True)
class BaselineConfig:
    """Chapter 07's baseline study (paper Appendix C) at the sweep's first B_p and matched
    sampling compute: n rollouts per problem for both the baseline and the gradient; the
    decoupled baseline (the group mean and std of all n, the gradient on a random `n_train`
    of them, ``train.n_train``); and `n_train` rollouts per problem alone. The first two
    share their samples and baseline and differ in how many samples carry a gradient
    (exploration); the last two train on as many samples per problem and differ in the
    baseline (and, at matched compute, the small arm makes n / n_train times more updates)."""

    set: str = option("easy", "the problem set the three arms train on")
    rollouts_per_problem: int = option(16, "n of the large arm and of the decoupled arm's baseline (a power of "
                                       "two)", low=4)
    n_train: int = option(4, "rollouts per problem the decoupled arm trains on, and n of the small arm (a power "
                          "of two)", low=2)
    seeds: tuple[int, ...] = option((0, 1), "seeds of each arm (at least two: the arms differ by little)")

    def __post_init__(self) -> None:
        if self.n_train >= self.rollouts_per_problem:
            raise ConfigError(f"baseline.n_train: must be < baseline.rollouts_per_problem={self.rollouts_per_problem}, "
                              f"got {self.n_train}")
        for name in ("rollouts_per_problem", "n_train"):  # batches that land on the evaluation budgets
            value = getattr(self, name)
            if value & (value - 1):
                raise ConfigError(f"baseline.{name}: needs a power of two, got {value}")
        if len(set(self.seeds)) < 2 or min(self.seeds) < 0:
            raise ConfigError(f"baseline.seeds: needs at least two distinct seeds >= 0, got {list(self.seeds)}")


@dataclass(frozen=True)
class BookConfig:
    """How `isobook book` executes the chapters. `budgets` gives chosen chapters rollouts per
    run of their own (papermill's ``budget`` parameter), e.g. ``{<chapter file name>: 16384}``;
    the others run to ``sweep.budget``. A larger budget extends the stored runs, and a
    chapter asking for a smaller one reads them as of that budget (`params/cpu-long.yaml`)."""

    budgets: dict[str, int] = option(dict, "rollouts per sweep run by chapter (its file name in book/ without .py; "
                                     "a chapter's declared budget_share applies to it)", factory=True)
    chapters_at_once: int | None = option(None, "chapters executed at once, each with its own sweep workers "
                                          "(sweep.workers, so two chapters may start twice the runs the CPUs "
                                          "hold); null: 2 on the CPU, 1 where runs go to a CUDA GPU", low=1)

    def __post_init__(self) -> None:
        for chapter, rollouts in self.budgets.items():
            if rollouts < 1:
                raise ConfigError(f"book.budgets.{chapter}: {rollouts} is out of range; allowed: [1, inf]")


@dataclass(frozen=True)
class SystemConfig:
    """Where and how work runs."""

    seed: int = option(0, "seed for problems, training and sampling", low=0)
    threads: int = option(2, "torch CPU threads of a run (base models and their sets build on one, so "
                              "that they do not depend on it)", low=1)
    outputs: str = option("outputs", "folder for models, sets and runs")
    device: str = option("auto", "auto (cuda when torch sees one, else cpu), cpu, cuda, cuda:N")
    precision: str = option("auto", "auto (bf16 on a CUDA device, fp32 otherwise), fp32, bf16 (autocast over "
                            "fp32 master weights)", choices=("auto", "fp32", "bf16"))
    engine: str = option("torch", "rollout engine: torch (plain PyTorch), vllm (needs vLLM installed)",
                         choices=("torch", "vllm"))
    vllm_gpu_memory: float = option(0.3, "vllm on a GPU: fraction of its memory for vLLM's weights and KV cache",
                                    low=0.05, high=0.95)
    gradient_checkpointing: bool = option(False, "recompute activations in the backward pass (saves memory "
                                          "on real models)")
    micro_batch_tokens: int = option(0, "prompt + completion tokens per forward/backward pass of an update "
                                     "(gradient accumulation, same update); 0: the whole batch at once", low=0)

    def __post_init__(self) -> None:
        if not re.fullmatch(r"auto|cpu|cuda(:\d+)?", self.device):
            raise ConfigError(f"system.device: {self.device!r} is not a device; allowed: auto, cpu, cuda, cuda:N")


@dataclass(frozen=True)
class Config:
    """Everything one isobook job needs; see the section classes for the fields."""

    model: ModelConfig = field(default_factory=ModelConfig)
    task: TaskConfig = field(default_factory=TaskConfig)
    base_model: BaseModelConfig = field(default_factory=BaseModelConfig)
    sampling: SamplingConfig = field(default_factory=SamplingConfig)
    sets: SetsConfig = field(default_factory=SetsConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    recipe: RecipeConfig = field(default_factory=RecipeConfig)
    evaluation: EvaluationConfig = field(default_factory=EvaluationConfig)
    sweep: SweepConfig = field(default_factory=SweepConfig)
    bandit: BanditConfig = field(default_factory=BanditConfig)
    interference: InterferenceConfig = field(default_factory=InterferenceConfig)
    second_model: SecondModelConfig = field(default_factory=SecondModelConfig)
    baseline: BaselineConfig = field(default_factory=BaselineConfig)
    book: BookConfig = field(default_factory=BookConfig)
    system: SystemConfig = field(default_factory=SystemConfig)

    def __post_init__(self) -> None:
        names = self.set_names()
        chosen_sets = {"train.set": (self.train.set,), "sweep.sets": self.sweep.sets,
                       "interference.sets": self.interference.sets, "second_model.set": (self.second_model.set,),
                       "baseline.set": (self.baseline.set,)}
        for where, chosen in chosen_sets.items():
            unknown = [name for name in chosen if name not in names]
            if unknown:
                raise ConfigError(f"{where}: {unknown[0]!r} is not a problem set; allowed: {', '.join(names)}")

    def set_names(self) -> tuple[str, ...]:
        """Every problem set `isobook sets` builds under this config."""
        return ("easy", "hard", "veryeasy", "xhard", *self.sets.mixtures)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# -- loading and validation ---------------------------------------------------------------


def load_config(params: str | Path | None = None, overrides: typing.Sequence[str] = ()) -> Config:
    """The config from a params YAML file (optional) with ``key=value`` overrides applied."""
    data: dict[str, Any] = {}
    if params is not None:
        path = Path(params)
        if not path.is_file():
            raise ConfigError(f"params: no such file {path}")
        try:
            loaded = yaml.safe_load(path.read_text()) or {}
        except UnicodeDecodeError as error:
            raise ConfigError(f"params: {path} is not text ({error.reason} at byte {error.start}); "
                              "allowed: a YAML file like params/cpu.yaml") from error
        except yaml.YAMLError as error:
            raise ConfigError(f"params: {path} is not valid YAML {_yaml_problem(error)}") from error
        if not isinstance(loaded, dict):
            raise ConfigError(f"params: {path} holds a {type(loaded).__name__}; allowed: a mapping of "
                              f"sections ({', '.join(f.name for f in dataclasses.fields(Config))})")
        data = loaded
    return _overridden(data, overrides)


def _yaml_problem(error: yaml.YAMLError) -> str:
    """Where YAML parsing failed and why, in one line (PyYAML's own text spans several)."""
    if not isinstance(error, yaml.MarkedYAMLError) or error.problem_mark is None:
        return f"({str(error).splitlines()[0]})"
    mark, context, opened = error.problem_mark, error.context, error.context_mark
    text = f"at line {mark.line + 1}, column {mark.column + 1}: {error.problem}"
    if context and opened is not None:  # e.g. an unclosed '[' is noticed at the end of the file
        text += f" ({context} from line {opened.line + 1}, column {opened.column + 1})"
    return text


def with_overrides(config: Config, overrides: typing.Sequence[str]) -> Config:
    """`config` with ``key=value`` overrides applied, validated like a params file."""
    return _overridden(config.to_dict(), overrides)


def _overridden(data: dict[str, Any], overrides: typing.Sequence[str]) -> Config:
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"override {item!r}: expected key=value, e.g. sets.pool_size=4000")
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError as error:
            raise ConfigError(f"override {item!r}: the value is not valid YAML {_yaml_problem(error)}; "
                              "allowed: a YAML value, e.g. 4000, [4, 8], {hard: 1.0}, or text in quotes") from error
        _set_path(data, key.strip().split("."), value)
    return build(Config, data, "")


def _set_path(data: dict[str, Any], keys: list[str], value: Any) -> None:
    for key in keys[:-1]:
        data = data.setdefault(key, {})
        if not isinstance(data, dict):
            raise ConfigError(f"override {'.'.join(keys)}: {key} is not a section")
    data[keys[-1]] = value


# Fields of earlier versions, and what a params file says instead.
REPLACED_FIELDS = {"recipe.normalize_std": "recipe.advantage (true: grpo, false: drgrpo)"}


def build(cls: type, data: Any, where: str) -> Any:
    """An instance of dataclass `cls` from plain `data`, every field checked."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where or 'params'}: expected a mapping, got {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        path = _join(where, unknown[0])
        if path in REPLACED_FIELDS:
            raise ConfigError(f"{path}: replaced; allowed: {REPLACED_FIELDS[path]}")
        raise ConfigError(f"{path}: unknown field; allowed: {', '.join(sorted(fields))}")
    hints = typing.get_type_hints(cls)
    values = {}
    for name, value in data.items():
        path = _join(where, name)
        values[name] = _check(path, hints[name], value, fields[name].metadata)
    try:
        return cls(**values)
    except TypeError as error:  # pragma: no cover - guarded by the checks above
        raise ConfigError(f"{where}: {error}") from error


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def _check(path: str, hint: Any, value: Any, metadata: typing.Mapping[str, Any]) -> Any:
    if dataclasses.is_dataclass(hint):
        return build(hint, value, path)
    choices = metadata.get("choices")
    if isinstance(value, bool) and choices is not None and {"on", "off"} <= set(choices):
        value = "on" if value else "off"  # YAML 1.1 reads a bare on/off as a boolean
    value = _coerce(path, hint, value)
    if choices is not None and value not in choices:
        raise ConfigError(f"{path}: {value!r} is not allowed; allowed: {', '.join(map(str, choices))}")
    low, high = metadata.get("low"), metadata.get("high")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if low is not None and value < low or high is not None and value > high:
            raise ConfigError(f"{path}: {value} is out of range; allowed: {_bounds(low, high)}")
    return value


def _bounds(low: float | None, high: float | None) -> str:
    """An inclusive range as the errors and `describe` write it: ``[1, inf]``."""
    return f"[{low if low is not None else '-inf'}, {high if high is not None else 'inf'}]"


def _coerce(path: str, hint: Any, value: Any) -> Any:
    """`value` as type `hint`, or a ConfigError saying what type was expected."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _coerce(path, inner[0], value)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{path}: expected a list, got {value!r}")
        return tuple(_coerce(f"{path}[{i}]", args[0], v) for i, v in enumerate(value))
    if origin is tuple:
        if not isinstance(value, (list, tuple)) or len(value) != len(args):
            raise ConfigError(f"{path}: expected a list of {len(args)} numbers, got {value!r}")
        return tuple(_coerce(f"{path}[{i}]", a, v) for i, (a, v) in enumerate(zip(args, value)))
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: expected a mapping, got {value!r}")
        key_type, value_type = args
        return {_coerce(path, key_type, k): _coerce(f"{path}.{k}", value_type, v) for k, v in value.items()}
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint is float and isinstance(value, str):
        try:  # YAML 1.1 reads 5e-3 (no dot) as a string
            return float(value)
        except ValueError:
            pass
    if hint in (int, float, str, bool) and (type(value) is not hint):
        raise ConfigError(f"{path}: expected {hint.__name__}, got {value!r} ({type(value).__name__})")
    return value


# -- describing ----------------------------------------------------------------------------


def describe(config: Config) -> str:
    """`config` as a params file: each section under its docstring, each field with its
    value and, as a comment, its help text and allowed values. `load_config` reads the
    text back to the same config."""
    lines = ["# An isobook config: every field, its value, what it means and what it allows."]
    for section in dataclasses.fields(config):
        part = getattr(config, section.name)
        lines += ["", *_comment_block(inspect.getdoc(type(part)) or ""), f"{section.name}:"]
        rows = [(f"  {f.name}: {_one_line_yaml(getattr(part, f.name))}", _field_note(f.metadata))
                for f in dataclasses.fields(part)]
        # Comments line up, except after the odd long value (a prompt template), which
        # would otherwise push every comment of its section off the screen.
        width = max((len(row) for row, _ in rows if len(row) <= 40), default=0)
        lines += [f"{row:<{width}}  # {note}" for row, note in rows]
    return "\n".join(lines) + "\n"


def _comment_block(text: str) -> list[str]:
    """`text` (a docstring) as YAML comment lines, each paragraph rewrapped."""
    lines: list[str] = []
    for paragraph in text.split("\n\n"):
        if lines:
            lines.append("#")
        lines += [f"# {line}" for line in textwrap.wrap(" ".join(paragraph.split()), width=88)]
    return lines


def _field_note(metadata: typing.Mapping[str, Any]) -> str:
    """A field's help text and, where it has them, its choices or range."""
    if metadata.get("choices") is not None:
        return f"{metadata['help']}; allowed: {', '.join(map(str, metadata['choices']))}"
    if metadata.get("low") is not None or metadata.get("high") is not None:
        return f"{metadata['help']}; allowed: {_bounds(metadata['low'], metadata['high'])}"
    return metadata["help"]


def _one_line_yaml(value: Any) -> str:
    """`value` as YAML on one line (tuples as lists, strings quoted where YAML needs it)."""
    plain = json.loads(json.dumps(value))
    if isinstance(plain, str) and "\n" in plain:
        return json.dumps(plain)  # a JSON string is a YAML double-quoted one, with its newlines escaped
    text = yaml.safe_dump(plain, default_flow_style=True, sort_keys=False, width=math.inf, allow_unicode=True)
    return text.removesuffix("\n...\n").strip()  # a lone scalar ends with YAML's end-of-document marker


def regularised(recipe: RecipeConfig, set_name: str) -> bool:
    """Whether KL + entropy are on for a run on `set_name` (a part of the run's name)."""
    if recipe.regularisers == "auto":
        return set_name in REGULARISED_SETS
    return recipe.regularisers == "kl+entropy"
