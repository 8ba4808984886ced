"""The pipeline's sections: the base model, the task, the sets, one GRPO run, the sweep, the book, the system.

Each section checks its own fields (`isobook.config.fields`); checks across sections sit in
`isobook.config.loading.Config`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from isobook.config.fields import ConfigError, Section, needs_powers_of_two, option

# The keys of `isobook.grpo.advantages.ESTIMATORS` (a test keeps the two equal); named here
# so that reading a config never imports torch.
ADVANTAGE_ESTIMATORS = ("grpo", "drgrpo", "rloo")

# Sets cut from the pool by the base model's avg@16 (`sets` gives each one's range), and with
# them the extremely hard set (0 correct of many samples); mixtures are named in the params.
BINNED_SETS = ("easy", "hard", "veryeasy")
SINGLE_SETS = (*BINNED_SETS, "xhard")

# Sets whose preset carries KL + entropy (paper: easy; very easy is easier still).
REGULARISED_SETS = ("easy", "veryeasy")


@dataclass(frozen=True)
class ModelConfig(Section):
    """Which base model. ``source: isobook`` builds and trains our own small Qwen2 (or
    Llama, `architecture`); any other value is a local Hugging Face folder or hub id loaded
    as is (sizes ignored)."""

    PATH: ClassVar[str] = "model"

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

    def check(self) -> None:
        if self.hidden_size % self.num_heads:
            raise ConfigError(f"num_heads: must divide hidden_size={self.hidden_size}, got {self.num_heads}")
        if self.num_kv_heads is not None and self.num_heads % self.num_kv_heads:
            raise ConfigError(f"num_kv_heads: must divide num_heads={self.num_heads}, got {self.num_kv_heads}")

    @property
    def key_value_heads(self) -> int:
        """Key/value heads of the built model (`num_kv_heads`, else one per query head)."""
        return self.num_kv_heads or self.num_heads


@dataclass(frozen=True)
class ChainTaskConfig(Section):
    """The chain family's knobs (`isobook.tasks.chain`): chains of additions and subtractions
    worked out step by step, taught by a teacher who slips on carry/borrow steps."""

    PATH: ClassVar[str] = "task.chain"

    min_ops: int = option(2, "fewest operations per problem", low=1)
    max_ops: int = option(10, "most operations per problem", low=1, high=26)
    min_carries: int = option(1, "fewest carry/borrow steps per problem (drawn uniformly)", low=0)
    max_carries: int = option(4, "most carry/borrow steps per problem", low=0)
    max_value: int = option(99, "largest running value on the correct path", low=9)
    slip_carry: float = option(0.47, "teacher's slip probability on a carry/borrow step", low=0.0, high=0.99)
    slip_plain: float = option(0.02, "teacher's slip probability on any other step", low=0.0, high=0.99)
    conflict: float = option(0.0, "share of problems in the ten-less dialect (prompt marked '<': carry and "
                             "borrow steps write ten less, and each dialect's teacher slips into the other's rule); "
                             "0: one shared skill, 0.5: two equal, competing ones", low=0.0, high=1.0)
    misconceptions: int = option(0, "carry/borrow step kinds (of 90: an operation and the units digit it meets) on "
                                 "which the teacher slips with misconception_slip instead of slip_carry; 0: none, "
                                 "the default task", low=0, high=90)
    misconception_slip: float = option(0.75, "teacher's slip probability on a misconceived step (above 0.5 the "
                                       "model's likeliest answer there is wrong)", low=0.0, high=0.99)

    def check(self) -> None:
        if self.min_ops > self.max_ops:
            raise ConfigError(f"min_ops: must be <= max_ops={self.max_ops}, got {self.min_ops}")
        if not self.min_carries <= self.max_carries <= self.max_ops:
            raise ConfigError(f"max_carries: needs min_carries={self.min_carries} <= max_carries <= "
                              f"max_ops={self.max_ops}, got {self.max_carries}")


@dataclass(frozen=True)
class MathFileTaskConfig(Section):
    """The math-file family's knobs (`isobook.tasks.math_file`): problems from a local table,
    answers checked by math-verify."""

    PATH: ClassVar[str] = "task.math_file"

    path: str | None = option(None, "a local .jsonl/.json/.parquet file of problems")
    question_field: str = option("question", "column holding the problem text")
    answer_field: str = option("answer", "column holding the reference answer or solution")
    prompt_template: str = option(
        "{question}\nPut the final answer within \\boxed{{}}.",
        "the raw prompt, used where no chat template is applied; {question} is replaced by the problem",
    )
    # Off by default, the behaviour before the field existed, so stored sets keep their names
    # (`names`); instruct checkpoints want auto (params/gpu-qwen2.5-0.5b.yaml sets it).
    chat_template: str = option(
        "off", "write each prompt in the checkpoint tokenizer's chat template (one user turn, the problem "
        "then `instruction` on a new line, and the assistant's generation prompt): auto (when the tokenizer "
        "has one, else prompt_template), on (the tokenizer must have one), off (prompt_template)",
        choices=("auto", "on", "off"))
    instruction: str = option(
        "Please reason step by step, and put your final answer within \\boxed{}.",
        "with a chat template: text after the problem in the user turn (DeepSeek-R1 and Qwen2.5-Math's "
        "wording); empty: the problem alone. prompt_template is not used then")
    stop_after_answer: bool = option(
        False, "end each completion at the end of its first '#### <answer>' line (GSM8K style), as a stop "
        "string would: tokens sampled after it are dropped before scoring and training (instruct checkpoints "
        "repeat the line until the token limit)")


@dataclass(frozen=True)
class TaskConfig(Section):
    """Which problem family; each family's knobs sit in a subsection of their own."""

    PATH: ClassVar[str] = "task"

    family: str = option("chain", "problem family", choices=("chain", "math-file"))
    chain: ChainTaskConfig = option(ChainTaskConfig, "the chain family's knobs", factory=True)
    math_file: MathFileTaskConfig = option(MathFileTaskConfig, "the math-file family's knobs", factory=True)

    def check(self) -> None:
        if self.family == "math-file" and not self.math_file.path:
            raise ConfigError("math_file.path: required when family is 'math-file'")


@dataclass(frozen=True)
class BaseModelConfig(Section):
    """Supervised training of isobook's own base model on the task's (noisy) teacher."""

    PATH: ClassVar[str] = "base_model"

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
class SamplingConfig(Section):
    """Rollout decoding (paper: temperature 0.6, top-p 1.0 for training and evaluation)."""

    PATH: ClassVar[str] = "sampling"

    temperature: float = option(0.6, "sampling temperature (0: greedy)", low=0.0)
    top_p: float = option(1.0, "nucleus sampling mass", low=1e-3, high=1.0)
    max_new_tokens: int = option(96, "longest completion in tokens", low=1)
    batch_rollouts: int = option(2048, "rollouts generated per engine call", low=1)


@dataclass(frozen=True)
class SetsConfig(Section):
    """Difficulty profiling of a problem pool and the sets built from it (paper section 3).

    Bins are inclusive intervals of avg@16 under the base model."""

    PATH: ClassVar[str] = "sets"

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

    def check(self) -> None:
        for name in BINNED_SETS:
            low, high = getattr(self, name)
            if not 0.0 <= low <= high <= 1.0:
                raise ConfigError(f"{name}: needs 0 <= low <= high <= 1, got [{low}, {high}]")
        for name, parts in self.mixtures.items():
            unknown = set(parts) - set(SINGLE_SETS)
            if unknown:
                raise ConfigError(
                    f"mixtures.{name}: unknown set {sorted(unknown)}; allowed: {', '.join(SINGLE_SETS)}"
                )
            if abs(sum(parts.values()) - 1.0) > 1e-6:
                raise ConfigError(f"mixtures.{name}: fractions must sum to 1, got {sum(parts.values())}")


@dataclass(frozen=True)
class TrainConfig(Section):
    """One GRPO run: which problem set, how the batch is shaped, how much compute.

    Compute is counted in rollouts (paper: ``C = B_p * n * M``); the run makes
    ``M = budget // (B_p * n)`` updates. The budget is not part of a run's identity:
    asking for more extends a finished run instead of starting over."""

    PATH: ClassVar[str] = "train"

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

    def check(self) -> None:
        if self.n_train is not None and self.n_train > self.rollouts_per_problem:
            raise ConfigError(f"n_train: must be <= rollouts_per_problem="
                              f"{self.rollouts_per_problem}, got {self.n_train}")

    @property
    def batch_rollouts(self) -> int:
        """B = B_p * n, rollouts sampled per update."""
        return self.batch_problems * self.rollouts_per_problem

    @property
    def gradient_rollouts(self) -> int:
        """Rollouts the gradient sees per update: B_p * n, or B_p * n_train for the
        decoupled baseline (whose learning rate and warm-up follow this batch)."""
        return self.batch_problems * (self.n_train or self.rollouts_per_problem)

    @property
    def steps(self) -> int:
        """M, the number of updates the budget buys."""
        return self.budget // self.batch_rollouts


@dataclass(frozen=True)
class RecipeConfig(Section):
    """The loss and optimizer (the paper's "healthy recipe", Figures 3-4).

    ``regularisers: auto`` applies the paper's presets: KL + entropy on easy and very easy
    sets, neither on hard, extremely hard and mixture sets. The learning rate is
    ``base_lr`` at ``reference_batch`` rollouts per update, scaled to B = B_p * n by
    ``lr_scaling``, after a linear warm-up over the first ``warmup_rollouts``, then constant
    (AdamW). B is the batch the gradient sees (``train.gradient_rollouts``: B_p * n_train
    for the decoupled baseline), and the warm-up is counted in those rollouts, so that it
    takes the same share of a budget at every n and the decoupled baseline follows, update
    by update, the learning rates of the n = n_train run it is compared with."""

    PATH: ClassVar[str] = "recipe"

    # Words, not on/off: YAML reads a bare on/off as a boolean.
    regularisers: str = option("auto", "KL + entropy terms: auto (by set), kl+entropy, none",
                               choices=("auto", "kl+entropy", "none"))
    kl: float = option(1e-3, "weight of the k3 KL to the base model when regularisers are on", low=0.0)
    entropy: float = option(1e-3, "weight of the entropy bonus when regularisers are on", low=0.0)
    track_kl: bool = option(False, "measure the KL to the base model even when its weight is 0 "
                            "(a reference forward pass per update, about a quarter of the update's time)")
    zero_variance: str = option("none", "drop zero-variance groups from: none, all (every term), "
                                "regularisers (KL and entropy only)", choices=("none", "all", "regularisers"))
    advantage: str = option("grpo", "advantage estimator (isobook.grpo.advantages): grpo (over the group's std), "
                            "drgrpo (no std), rloo (leave-one-out baseline)", choices=ADVANTAGE_ESTIMATORS)
    base_lr: float = option(2e-4, "learning rate at reference_batch (our anchor: params/lr-anchor.yaml)", low=0.0)
    reference_batch: int = option(128, "rollouts per update at which base_lr holds", low=1)
    lr_scaling: str = option("sqrt", "how the LR follows B: constant, linear, sqrt",
                             choices=("constant", "linear", "sqrt"))
    warmup_rollouts: int = option(512, "linear warm-up over this many gradient rollouts (the same share of a "
                                  "budget at every batch; the paper's 10 updates favour small batches)", low=0)
    clip: float = option(0.2, "PPO ratio clip epsilon", low=0.0)
    tis_cap: float = option(2.0, "truncated importance sampling cap", low=1.0)
    grad_clip: float = option(1.0, "gradient norm clip (0 turns it off)", low=0.0)
    weight_decay: float = option(0.0, "AdamW weight decay", low=0.0)


@dataclass(frozen=True)
class EvaluationConfig(Section):
    """What a run measures and when, on a schedule in rollouts (log-spaced, so one run
    yields a reward-versus-compute curve). Evaluation points are
    ``first_rollouts * 2**(i / points_per_doubling)`` for i = 0, 1, ... (plus the base
    model at 0 and the run's last update); they do not depend on the budget, so a run
    extended to 2C has the same points as a run asked for 2C at once."""

    PATH: ClassVar[str] = "evaluation"

    k: int = option(4, "k of avg@k, best@k, worst@k", low=1)
    samples: int = option(4, "samples per validation problem (>= k; unbiased estimators)", low=1)
    validation_problems: int = option(200, "validation problems used (at most the split's size)", low=1)
    first_rollouts: int = option(512, "first evaluation point after the base model, in rollouts", low=1)
    points_per_doubling: int = option(
        1, "evaluation points per doubling of compute: 1 scores the power-of-two budgets the chapters "
        "compare; each further point costs a validation pass (validation_problems x samples rollouts)", low=1)
    train_pass_rollouts: tuple[int, ...] = option(
        (), "rollout counts at which per-problem pass@1 of the training set is measured (none by default: "
        "the book's histogram runs take interference.train_pass_rollouts)")
    train_pass_problems: int = option(128, "training problems in that measurement", low=1)
    train_pass_samples: int = option(8, "samples per training problem for that pass@1", low=1)
    checkpoint_every: int = option(25, "updates between resumable checkpoints", low=1)

    def check(self) -> None:
        if self.samples < self.k:
            raise ConfigError(f"samples: must be >= k={self.k}, got {self.samples}")


@dataclass(frozen=True)
class SweepConfig(Section):
    """A grid of GRPO runs (paper section 5): every (set, B_p, n, seed) with B_p * n <= max_batch,
    each run to `budget` rollouts (its curve gives every smaller budget too).

    Runs come from the run store, so finished runs are reused and a larger budget extends
    them. ``executor: local`` runs `workers` processes on this machine; ``ray`` sends each
    run to a Ray cluster (``ray_address``; none starts a local one) as a task asking for
    `threads_per_worker` CPUs (and `gpus_per_run` GPUs)."""

    PATH: ClassVar[str] = "sweep"

    sets: tuple[str, ...] = option(("easy", "hard"), "problem sets to sweep")
    batch_problems: tuple[int, ...] = option((8, 16, 32), "B_p values (powers of two)")
    rollouts_per_problem: tuple[int, ...] = option((4, 8, 16, 32), "n values (powers of two)")
    max_batch: int = option(256, "B_max: largest B = B_p * n run", low=1)
    budget: int = option(4096, "rollouts per run (C of the longest point of each curve)", low=1)
    seeds: tuple[int, ...] = option((0,), "train.seed values")
    seed_shift: int = option(0, "added to the seed of every run the sweeps and the book train (sweep, "
                             "interference, baseline and misconceptions seeds) and of the book's bandit draws: "
                             "a rebuild on other seeds, on the same base models and sets", low=0)
    executor: str = option("local", "where runs execute: local, ray", choices=("local", "ray"))
    workers: int | None = option(None, "local: runs at a time; null: as many as this machine's CPUs hold at "
                                 "threads_per_worker each (one where runs go to a CUDA GPU)", low=1)
    threads_per_worker: int = option(1, "torch threads per run (one per core beats two per run for "
                                     "small models)", low=1)
    gpus_per_run: float = option(0.0, "ray: GPUs each run asks for", low=0.0)
    ray_address: str | None = option(None, "ray: cluster address ('auto', 'ray://host:10001'); none starts "
                                     "a local cluster")

    def check(self) -> None:
        needs_powers_of_two("batch_problems", self.batch_problems)
        needs_powers_of_two("rollouts_per_problem", self.rollouts_per_problem)
        smallest = min(self.batch_problems) * min(self.rollouts_per_problem)
        if smallest > self.max_batch:
            raise ConfigError(f"max_batch: {self.max_batch} leaves no grid point (the smallest B_p * n is "
                              f"{smallest}); allowed: >= {smallest}")


# The default book's chapters: 07 (a second base model, the decoupled baseline) and 08 (what makes
# n* grow) run in params/cpu-long.yaml, so that the primaries' confirmatory seeds fit make main's hour.
DEFAULT_CHAPTERS = ("00_introduction", "01_recipe", "02_n_versus_m", "03_bp_versus_n", "04_interference", "05_data",
                    "06_playbook")


@dataclass(frozen=True)
class BookConfig(Section):
    """How `isobook book` executes the chapters. `budgets` gives chosen chapters rollouts per
    run of their own (papermill's ``budget`` parameter), e.g. ``{<chapter file name>: 16384}``;
    the others run to ``sweep.budget``. A larger budget extends the stored runs, and a
    chapter asking for a smaller one reads them as of that budget (`params/cpu-long.yaml`)."""

    PATH: ClassVar[str] = "book"

    folder: str = option("book", "folder under system.outputs for the executed chapters and the HTML book")
    budgets: dict[str, int] = option(dict, "rollouts per sweep run by chapter (its file name in book/ without .py; "
                                     "a chapter's declared budget_share applies to it)", factory=True)
    chapters_at_once: int | None = option(None, "chapters executed at once, each with its own sweep workers "
                                          "(sweep.workers, so two chapters may start twice the runs the CPUs "
                                          "hold); null: 2 on the CPU, 1 where runs go to a CUDA GPU", low=1)
    chapters: tuple[str, ...] | None = option(DEFAULT_CHAPTERS, "the chapters executed (file names in book/ without "
                                              ".py); each other one is a page with its title and one line; null: "
                                              "all")

    def check(self) -> None:
        for chapter, rollouts in self.budgets.items():
            if rollouts < 1:
                raise ConfigError(f"budgets.{chapter}: {rollouts} is out of range; allowed: [1, inf]")


@dataclass(frozen=True)
class SystemConfig(Section):
    """Where and how work runs."""

    PATH: ClassVar[str] = "system"

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
    keep_optimizer: bool = option(True, "a finished run keeps its weights and optimizer state in state.pt, so a "
                                  "larger budget extends it exactly (fp32 Adam: 3x the weights); false: its policy/ "
                                  "alone, and a larger budget is refused")
    micro_batch_tokens: int = option(0, "prompt + completion tokens per forward/backward pass of an update "
                                     "(gradient accumulation, same update); 0: the whole batch at once", low=0)

    def check(self) -> None:
        if not re.fullmatch(r"auto|cpu|cuda(:\d+)?", self.device):
            raise ConfigError(f"device: {self.device!r} is not a device; allowed: auto, cpu, cuda, cuda:N")


def regularised(recipe: RecipeConfig, set_name: str) -> bool:
    """Whether KL + entropy are on for a run on `set_name` (a part of the run's name)."""
    if recipe.regularisers == "auto":
        return set_name in REGULARISED_SETS
    return recipe.regularisers == "kl+entropy"
