"""The studies' sections: chapter 02's learning-rate envelope and data-reuse grid, the book's primary claims,
the bandits and the
interference runs (chapters 04 and 08), chapter 07's second model and baselines, chapter 08's
misconception task."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from isobook.config.fields import ConfigError, Section, needs_distinct_seeds, needs_powers_of_two, option
from isobook.config.pipeline import ModelConfig


@dataclass(frozen=True)
class LrEnvelopeConfig(Section):
    """Chapter 02's learning-rate envelope (`isobook.analysis.envelope`): every n of the sweep at
    its first B_p, on each set in `sets`, trained at the sqrt(B) rule's peak rate times each
    of `multipliers` (and at the largest n's rate, chapter 08's one-rate arm), once per seed
    of `seeds`, to `choose_at` rollouts (the chapter's budget by default), where each n's rate
    is chosen. A bracket whose best multiplier there sits at its edge is extended by a factor
    2 beyond it, at most `extensions` times. No `sets`: no envelope, every n at the
    rule's rate only (chapter 02 says so where the envelope would be)."""

    PATH: ClassVar[str] = "lr_envelope"

    multipliers: tuple[float, ...] = option((0.25, 0.5, 1.0, 2.0), "peak learning rates tried per n, as multiples "
                                            "of the sqrt(B) rule's (1 is chapter 02's run)")
    extensions: int = option(1, "factor-2 steps a bracket may grow by while its best rate sits at an edge",
                             low=0, high=4)
    sets: tuple[str, ...] = option(("hard",), "problem sets whose n-grid is tuned per n (none: no envelope)")
    seeds: tuple[int, ...] = option((0, 1), "seeds of every run of the envelope (at least two): the selection "
                                    "seeds, on which each n's rate is chosen")
    choose_at: int | None = option(None, "rollouts at which each n's rate is chosen and to which the envelope's runs "
                                   "train (a power of two; null: the chapter's budget). A longer book that keeps the "
                                   "default's choice extends its confirmatory runs rather than starting new ones",
                                   low=1)

    def check(self) -> None:
        if self.choose_at is not None:
            needs_powers_of_two("choose_at", self.choose_at)
        if len(self.multipliers) < 2 or min(self.multipliers) <= 0 or 1.0 not in self.multipliers:
            raise ConfigError(f"multipliers: needs two or more positive multiples, 1 among them (the rule's own "
                              f"rate), got {list(self.multipliers)}")
        needs_distinct_seeds("seeds", self.seeds)


@dataclass(frozen=True)
class DataReuseConfig(Section):
    """Chapter 02's data-reuse grid (`isobook.analysis.reuse`): every n of the sweep at its first
    B_p on the first `problems` training problems of `set`, each n at the learning rate the
    envelope chose for it at the sweep's budget (the rule's rate where `set` is not among
    ``lr_envelope.sets``), to `budget` rollouts (C/D = budget / problems), once per
    confirmatory seed (``primaries.seeds``)."""

    PATH: ClassVar[str] = "data_reuse"

    set: str = option("hard", "the problem set whose first training problems are reused")
    problems: int = option(32, "training problems D (train.data_size of every run)", low=1)
    budget: int = option(4096, "rollouts per run (a power of two)", low=1)

    def check(self) -> None:
        needs_powers_of_two("budget", self.budget)


# The primary claims a book can pre-register, by key: what each decides (chapter 02 states them).
PRIMARY_CLAIMS = {
    "own-best-rate": "n*(C) grows on each set of lr_envelope.sets, every n at its own best learning rate "
                     "(chosen on lr_envelope.seeds, reported on primaries.seeds)",
    "data-reuse": "n*(C) grows on data_reuse.problems problems of data_reuse.set reused to C/D = "
                  "data_reuse.budget / data_reuse.problems (rates as for own-best-rate)",
}
MAX_PRIMARIES = 6


@dataclass(frozen=True)
class PrimariesConfig(Section):
    """The book's primary claims, named before any result (the landing page lists them
    first): Holm's procedure controls the chance of any wrongly resolved verdict over these
    alone, and every other finding is exploratory (its estimate and interval, outside the
    family). Their runs train on the confirmatory `seeds`, none of which chose a learning
    rate (the envelope's selection seeds, ``lr_envelope.seeds``), so no selection luck
    enters a primary interval; the data-reuse grid trains on them too. Each primary is a
    trend (n* grows), whose smallest effect worth knowing is `trend_effect`; the seeds are
    sized so that it is resolved under Holm's control with probability `power`
    (`isobook.analysis.findings.power`, from a build's measured variances), and chapter 02
    states the power the design had and the seeds it needed."""

    PATH: ClassVar[str] = "primaries"

    claims: tuple[str, ...] = option(tuple(PRIMARY_CLAIMS), "the primary claims (at most six): "
                                     + "; ".join(f"{key}: {text}" for key, text in PRIMARY_CLAIMS.items()))
    seeds: tuple[int, ...] = option(tuple(range(10, 18)), "confirmatory seeds of the primaries' runs and the "
                                    "data-reuse grid (none of lr_envelope.seeds)")
    trend_effect: float = option(0.03, "smallest effect worth knowing on a trend: pass rate per doubling of C "
                                 "(on the logit scale at the grid's mean pass rate)", low=0.0)
    power: float = option(0.8, "the chance the design gives each primary to resolve its smallest effect",
                          low=0.5, high=0.99)

    def check(self) -> None:
        unknown = [key for key in self.claims if key not in PRIMARY_CLAIMS]
        if unknown:
            raise ConfigError(f"claims: {unknown[0]!r} is not a primary claim; allowed: {', '.join(PRIMARY_CLAIMS)}")
        if len(self.claims) > MAX_PRIMARIES or len(set(self.claims)) != len(self.claims):
            raise ConfigError(f"claims: at most {MAX_PRIMARIES} distinct claims, got {list(self.claims)}")
        needs_distinct_seeds("seeds", self.seeds)
        if self.trend_effect <= 0:
            raise ConfigError(f"trend_effect: must be > 0, got {self.trend_effect}")


@dataclass(frozen=True)
class BanditConfig(Section):
    """Chapter 04's bandits with shared parameters (`isobook.analysis.bandit`): `problems` problems of
    `actions` answers each, trained by GRPO at B_p = `batch_problems` with a log-linear
    policy over d shared features for each d in `features`, beside the tabular policy (no
    sharing) at the same settings, every n to `budget` rollouts; then, at the middle d, a
    batch of B_p x n = `fixed_batch` rollouts split every way between B_p and n, with the
    same step per problem and per update (`bandit.batch_split_curves`); and the tabular
    policy and the largest d under Adam, at a constant and a sqrt(B)-scaled step
    (`bandit.optimizer_curves`). About 200 seconds of numpy at the defaults (kept in the run
    store), seconds in the smoke preset."""

    PATH: ClassVar[str] = "bandit"

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
    adam_lr: float = option(0.03, "Adam's step size in the optimizer comparison (at reference_batch when "
                            "sqrt-scaled)", low=0.0)
    reference_batch: int = option(64, "B_p x n at which a sqrt(B)-scaled step equals the constant one", low=1)

    def check(self) -> None:
        needs_powers_of_two("rollouts_per_problem", self.rollouts_per_problem, least=2)
        if not self.features or min(self.features) < 1 or max(self.features) >= self.problems:
            raise ConfigError(f"features: needs numbers of features in [1, problems - 1] (d = P is the "
                              f"tabular policy, always run), got {list(self.features)}")
        needs_powers_of_two("budget", self.budget)
        needs_powers_of_two("fixed_batch", self.fixed_batch)
        if self.batch_problems > self.problems:
            raise ConfigError(f"batch_problems: at most problems={self.problems}, got "
                              f"{self.batch_problems}")
        splits = [n for n in self.rollouts_per_problem if 1 <= self.fixed_batch // n <= self.problems]
        if len(splits) < 2:
            raise ConfigError(f"fixed_batch: {self.fixed_batch} must split as B_p x n with B_p in [1, "
                              f"{self.problems}] for two n of rollouts_per_problem, got {splits}")
        for name in ("lr", "adam_lr"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name}: must be > 0, got {getattr(self, name)}")
        if self.budget < self.largest_batch:
            raise ConfigError(f"budget: {self.budget} buys no update of every curve; allowed: >= {self.largest_batch}")

    @property
    def largest_batch(self) -> int:
        """Rollouts of the largest update any curve makes: B_p x the largest n, or ``fixed_batch``."""
        return max(self.fixed_batch, self.batch_problems * max(self.rollouts_per_problem))


@dataclass(frozen=True)
class InterferenceConfig(Section):
    """The LLM's interference studies: chapter 04's pass@1 histograms (the smallest and the
    largest of the sweep's n at its first B_p, on each set in `sets`, once per seed in
    `seeds`, measuring training problems at `train_pass_rollouts`; chapter 08's misconception
    runs at those n too), and chapter 08's learning-rate runs on those seeds."""

    PATH: ClassVar[str] = "interference"

    seeds: tuple[int, ...] = option((0, 1), "seeds of the LLM runs of chapters 04 and 08 (at least two: the "
                                    "verdicts rest on more than one trained policy)")
    sets: tuple[str, ...] = option(("hard",), "problem sets of chapter 04's pass@1 histograms")
    train_pass_rollouts: tuple[int, ...] = option(
        (0, 512, 4096), "evaluation.train_pass_rollouts of the histogram runs: where per-problem pass@1 of "
        "training problems is measured (512 is where n = 4 has drawn the problems n = 32 draws by 4,096)")

    def histogram_changes(self) -> list[str]:
        """Overrides that make a run measure its training problems for the histograms."""
        return [f"evaluation.train_pass_rollouts={list(self.train_pass_rollouts)}"]

    def check(self) -> None:
        needs_distinct_seeds("seeds", self.seeds)


@dataclass(frozen=True)
class MisconceptionsConfig(Section):
    """Chapter 08's coverage-limited task: the chain task with ``task.chain.misconceptions``
    at `kinds`, each misconceived carry-step kind slipped at `slip` by the teacher, the other
    carry steps at `slip_carry` (`tasks.chain`). Its hard problems are hard because of
    which misconceived kinds they hold, and fixing one kind helps only the problems that
    hold it. It has a base model and sets of its own; the sweep's n at its first B_p train
    on its hard set, once per seed of `seeds`."""

    PATH: ClassVar[str] = "misconceptions"

    kinds: int = option(12, "task.chain.misconceptions of the arm: misconceived carry-step kinds (of 90)", low=1,
                        high=90)
    slip: float = option(0.85, "task.chain.misconception_slip of the arm (above 0.5 the likeliest answer on a "
                         "misconceived step is wrong)", low=0.0, high=0.99)
    slip_carry: float = option(0.3, "task.chain.slip_carry of the arm: the other carry steps' slip, lower than the "
                               "default task's so that a hard problem is hard because of its misconceptions",
                               low=0.0, high=0.99)
    seeds: tuple[int, ...] = option((0, 1), "seeds of every run of the arm (at least two)")

    def check(self) -> None:
        needs_distinct_seeds("seeds", self.seeds)


def _second_model() -> ModelConfig:
    """Chapter 07's default second model: a Llama with grouped-query attention, about half the main one."""
    return ModelConfig(architecture="llama", hidden_size=64, num_layers=4, num_heads=4, num_kv_heads=2,
                       intermediate_size=176)


@dataclass(frozen=True)
class SecondModelConfig(Section):
    """Chapter 07's second base model: a `model` section of its own (isobook's own model in
    another layout and size, taught the same task by the same teacher for as many steps, with
    sets of its own from its own avg@16; or, with ``model.source``, a checkpoint of the
    user's). Its n-versus-M sweep is the sweep's n at its first B_p on `set`, beside the main
    model's (chapter 02's runs). Its sequences are the main model's, ``model.max_positions``
    long."""

    PATH: ClassVar[str] = "second_model"

    model: ModelConfig = option(_second_model, "the second base model (fields as in model)", factory=True)
    set: str = option("easy", "the problem set both models' n-versus-M sweeps train on")


@dataclass(frozen=True)
class BaselineConfig(Section):
    """Chapter 07's baseline study (paper Appendix C) at the sweep's first B_p and matched
    sampling compute: n rollouts per problem for both the baseline and the gradient; the
    decoupled baseline (the group mean and std of all n, the gradient on a random `n_train`
    of them, ``train.n_train``); and `n_train` rollouts per problem alone. The first two
    share their samples and baseline and differ in how many samples carry a gradient
    (exploration); the last two train on as many samples per problem and differ in the
    baseline (and, at matched compute, the small arm makes n / n_train times more updates)."""

    PATH: ClassVar[str] = "baseline"

    set: str = option("easy", "the problem set the three arms train on")
    rollouts_per_problem: int = option(16, "n of the large arm and of the decoupled arm's baseline (a power of "
                                       "two)", low=4)
    n_train: int = option(4, "rollouts per problem the decoupled arm trains on, and n of the small arm (a power "
                          "of two)", low=2)
    seeds: tuple[int, ...] = option((0, 1), "seeds of each arm (at least two: the arms differ by little)")

    def check(self) -> None:
        if self.n_train >= self.rollouts_per_problem:
            raise ConfigError(f"n_train: must be < rollouts_per_problem={self.rollouts_per_problem}, "
                              f"got {self.n_train}")
        needs_powers_of_two("rollouts_per_problem", self.rollouts_per_problem)  # batches that land on
        needs_powers_of_two("n_train", self.n_train)  # the evaluation budgets
        needs_distinct_seeds("seeds", self.seeds)
