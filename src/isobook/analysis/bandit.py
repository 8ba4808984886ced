"""The base case of the paper's Figure 12, and its shared-parameter twin: GRPO on softmax bandits.

Each problem is a bandit with `actions` arms, exactly one of them correct (reward 1, the
rest 0). One update draws `batch_problems` problems, `n` arms from each problem's softmax
policy, forms group-relative advantages (reward minus the group mean, divided by the
group's standard deviation, as `advantages.grpo` does for the LLM) and takes one exact
policy-gradient step, ``g_p = mean_i A_i * (onehot(a_i) - pi_p)`` on each drawn problem.

Two policies take that step:

* **tabular** (``features=None``): each problem has its own logits, ``theta_p += lr * g_p``.
  Nothing is shared, so there is no interference. For one problem the expected
  suboptimality after t updates behaves like ``O(A / (n t) + B / t)`` (paper, section on
  interference): at a fixed budget C = n t the second term favours many small updates, so
  n* should stay small.
* **log-linear over d shared features** (``features=d``): the answers are shared by all
  problems, each problem has its own random correct one, and problem p's logits are
  ``b_p + W x_p``, where ``x_p ~ N(0, I/d)`` are its fixed features, ``W`` # [actions, d] is
  shared by every problem and starts at zero, and ``b_p`` gives the start pass rate. The
  step ``W += lr * sum_p g_p x_p^T`` moves problem p's logits by about ``lr * g_p``
  (``|x_p|^2 ~ 1``) and every other problem's by ``lr * (x_p . x_q) g_p``: with d < P
  problems compete for W. One-hot features (d = P) make W a table: the tabular policy.

The step on the parameters (theta, or W) is the plain gradient step above, or Adam's
(``optimizer="adam"``: the LLM's optimizer, bias-corrected moments, betas 0.9 / 0.999, no
weight decay), whose per-coordinate normalisation changes how a step on one problem moves
the others. Under either, ``lr_scaling="sqrt"`` scales the step by ``sqrt(B / reference_batch)``
with B = B_p n, as the LLM recipe scales its learning rate with the batch.

Every random draw of training comes from one `numpy.random.Generator` and the features
from another (the same problems for every n), and all seeds run at once as a leading
array axis.

    from isobook.analysis.bandit import BanditSetup, suboptimality_curves
    curves = suboptimality_curves(BanditSetup(start_pass=np.array([0.3])), [2, 8, 32], budget=4096)
    shared = suboptimality_curves(BanditSetup(start_pass=np.full(256, 1 / 16), batch_problems=8,
                                              features=32, seeds=8), [2, 8, 32], budget=65536)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from isobook.config import BanditConfig, Config
from isobook.grpo.evaluation import doublings
from isobook.grpo.recipe import LrScaling, scaled_lr
from isobook.store.atomic import cached_parquet
from isobook.store.names import fingerprint


@dataclass(frozen=True)
class BanditSetup:
    """Problems and learning rule of a bandit sweep.

    start_pass: each problem's pass@1 under the initial policy, # [problems]; the correct
    arm gets that probability and the others share the rest evenly."""

    start_pass: np.ndarray = field(default_factory=lambda: np.array([0.3]))
    actions: int = 16  # arms per problem
    batch_problems: int = 1  # problems per update (at most the number of problems)
    lr: float = 0.5  # step size on the logits
    seeds: int = 256  # independent repetitions, averaged
    features: int | None = None  # None: tabular; d: log-linear over d shared features
    optimizer: str = "gradient"  # OPTIMIZERS: the plain gradient step, or Adam on the parameters
    lr_scaling: str = "constant"  # LR_SCALINGS: lr at every n, or lr * sqrt(B_p n / reference_batch)
    reference_batch: int = 64  # rollouts per update at which a sqrt-scaled step equals lr

    def __post_init__(self) -> None:
        start = np.asarray(self.start_pass, dtype=float)
        if start.ndim != 1 or start.size == 0 or np.any((start <= 0) | (start >= 1)):
            raise ValueError("start_pass: a non-empty 1-d array of probabilities in (0, 1)")
        if self.actions < 2:
            raise ValueError(f"actions: must be >= 2, got {self.actions}")
        if not 1 <= self.batch_problems <= start.size:
            raise ValueError(f"batch_problems: must be in [1, {start.size}] (the number of problems), "
                             f"got {self.batch_problems}")
        if self.lr <= 0 or self.seeds < 1:
            raise ValueError(f"lr and seeds: must be positive, got lr={self.lr}, seeds={self.seeds}")
        if self.features is not None and self.features < 1:
            raise ValueError(f"features: None (tabular) or a number of shared features >= 1, got {self.features}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer: {self.optimizer!r}; allowed: {', '.join(OPTIMIZERS)}")
        if self.lr_scaling not in LR_SCALINGS:
            raise ValueError(f"lr_scaling: {self.lr_scaling!r}; allowed: {', '.join(LR_SCALINGS)}")
        if self.reference_batch < 1:
            raise ValueError(f"reference_batch: must be >= 1, got {self.reference_batch}")

    def lr_at(self, n: int) -> float:
        """The step size of an update of B_p x `n` rollouts under `lr_scaling`."""
        return scaled_lr(self.lr, self.reference_batch, self.batch_problems * n, LrScaling(self.lr_scaling))


OPTIMIZERS = ("gradient", "adam")
LR_SCALINGS = ("constant", "sqrt")


class Adam:
    """Adam on one parameter array (# [seeds, ...], one optimizer state per seed, as the
    seeds are independent runs): ``step(gradient)`` returns the change to add for an ascent
    step of size `lr` on the bias-corrected moments."""

    def __init__(self, shape: tuple[int, ...], lr: float, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8) -> None:
        self.lr, self.betas, self.eps = lr, betas, eps
        self.first, self.second, self.steps = np.zeros(shape), np.zeros(shape), 0

    def step(self, gradient: np.ndarray) -> np.ndarray:
        self.steps += 1
        (beta1, beta2), t = self.betas, self.steps
        self.first = beta1 * self.first + (1 - beta1) * gradient
        self.second = beta2 * self.second + (1 - beta2) * gradient ** 2
        corrected = self.first / (1 - beta1 ** t)
        return self.lr * corrected / (np.sqrt(self.second / (1 - beta2 ** t)) + self.eps)


def initial_logits(setup: BanditSetup) -> np.ndarray:
    """Logits giving each problem its start pass rate on arm 0. # [problems, actions]"""
    start = np.asarray(setup.start_pass, dtype=float)
    logits = np.zeros((start.size, setup.actions))
    logits[:, 0] = np.log(start / (1 - start) * (setup.actions - 1))
    return logits


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


class TabularPolicy:
    """Each problem's own logits, the correct arm at index 0: ``theta`` # [seeds, problems, actions]."""

    def __init__(self, setup: BanditSetup) -> None:
        self.theta = np.broadcast_to(initial_logits(setup), (setup.seeds, len(setup.start_pass),
                                                              setup.actions)).copy()
        self._seed = np.arange(setup.seeds)[:, None]  # [S, 1], pairs each seed with its chosen problems

    def logits(self, chosen: np.ndarray | None = None) -> np.ndarray:
        """The `chosen` problems' logits (# [seeds, chosen] indices; None: all). # [seeds, chosen, actions]"""
        return self.theta if chosen is None else self.theta[self._seed, chosen]

    def correct(self, chosen: np.ndarray | None = None) -> np.ndarray:
        """The `chosen` problems' correct arms. # [seeds, chosen]"""
        return np.zeros(self.theta.shape[:2] if chosen is None else chosen.shape, dtype=int)

    def step(self, chosen: np.ndarray, change: np.ndarray) -> None:
        """Add `change` # [seeds, chosen, actions] to the chosen problems' logits."""
        self.theta[self._seed, chosen] += change

    @property
    def parameters(self) -> np.ndarray:
        """The trained array, theta # [seeds, problems, actions] (a view: adding to it trains)."""
        return self.theta

    def parameter_gradient(self, chosen: np.ndarray, gradient: np.ndarray) -> np.ndarray:
        """The gradient on `parameters` of the chosen problems' logit gradients # [seeds, chosen, actions]."""
        full = np.zeros_like(self.theta)
        full[self._seed, chosen] = gradient
        return full


class LinearPolicy:
    """Logits ``b_p + W x_p`` (module docstring) over answers shared by every problem.

    features: # [seeds, problems, d]; answers: each problem's correct answer, # [seeds,
    problems]; start: logits before training, # [seeds, problems, actions] (W starts at zero)."""

    def __init__(self, features: np.ndarray, answers: np.ndarray, start: np.ndarray) -> None:
        self.features, self.answers, self.start = features, answers, start
        self.weights = np.zeros((features.shape[0], start.shape[-1], features.shape[-1]))  # W, one per seed
        self._seed = np.arange(features.shape[0])[:, None]

    @classmethod
    def draw(cls, setup: BanditSetup, rng: np.random.Generator) -> LinearPolicy:
        """`setup.features` Gaussian features and a random correct answer per problem and seed;
        each problem's start logits are `initial_logits` with its correct answer in place of arm 0."""
        problems, dims = len(setup.start_pass), setup.features
        features = rng.normal(0.0, 1.0 / np.sqrt(dims), (setup.seeds, problems, dims))
        answers = rng.integers(setup.actions, size=(setup.seeds, problems))
        rotation = (np.arange(setup.actions) - answers[..., None]) % setup.actions  # answer a is arm a - c_p
        return cls(features, answers, np.take_along_axis(np.broadcast_to(
            initial_logits(setup), rotation.shape), rotation, axis=-1))

    def logits(self, chosen: np.ndarray | None = None) -> np.ndarray:
        """The `chosen` problems' logits (# [seeds, chosen] indices; None: all). # [seeds, chosen, actions]"""
        if chosen is None:
            return self.start + np.einsum("sad,spd->spa", self.weights, self.features)
        return self.start[self._seed, chosen] + np.einsum("sad,sbd->sba", self.weights,
                                                          self.features[self._seed, chosen])

    def correct(self, chosen: np.ndarray | None = None) -> np.ndarray:
        """The `chosen` problems' correct answers. # [seeds, chosen]"""
        return self.answers if chosen is None else self.answers[self._seed, chosen]

    def step(self, chosen: np.ndarray, change: np.ndarray) -> None:
        """Move W so that each chosen problem's own logits move by about `change` # [seeds, chosen, actions]."""
        self.weights += self.parameter_gradient(chosen, change)

    @property
    def parameters(self) -> np.ndarray:
        """The trained array, W # [seeds, actions, d] (a view: adding to it trains)."""
        return self.weights

    def parameter_gradient(self, chosen: np.ndarray, gradient: np.ndarray) -> np.ndarray:
        """The gradient on W of the chosen problems' logit gradients # [seeds, chosen, actions]."""
        return np.einsum("sba,sbd->sad", gradient, self.features[self._seed, chosen])


def make_policy(setup: BanditSetup, features_seed: int = 0) -> TabularPolicy | LinearPolicy:
    """The setup's initial policy; shared features are drawn from `features_seed`."""
    if setup.features is None:
        return TabularPolicy(setup)
    return LinearPolicy.draw(setup, np.random.default_rng([features_seed, 0]))


def train_bandits(setup: BanditSetup, n: int, updates: int, record_every: int, rng: np.random.Generator,
                  policy: TabularPolicy | LinearPolicy | None = None) -> pd.DataFrame:
    """GRPO on the bandits for `updates` updates of `n` rollouts per drawn problem, from
    `policy` (default: `make_policy(setup)`), which it trains in place with
    `setup.optimizer` at the step `setup.lr_at(n)`.

    Returns one row per recorded update (the first, every `record_every`-th, the last, and
    the last one within each power-of-two number of rollouts, which `curves_at` reads at
    that budget): ``update``, ``rollouts`` (spent so far), ``suboptimality`` (1 - pass@1,
    averaged over problems and seeds), ``suboptimality_se`` (its standard error over seeds)
    and ``seeds``."""
    if n < 2:
        raise ValueError(f"n: must be >= 2 (a group baseline needs two rollouts), got {n}")
    policy = make_policy(setup) if policy is None else policy
    seeds, problems = setup.seeds, len(setup.start_pass)
    rows, step, lr = [], setup.batch_problems * n, setup.lr_at(n)
    adam = Adam(policy.parameters.shape, lr) if setup.optimizer == "adam" else None
    for update in range(updates + 1):
        rollouts = update * step
        if update % record_every == 0 or update == updates or _last_within_a_power_of_two(rollouts, step):
            solved = np.take_along_axis(_softmax(policy.logits()), policy.correct()[..., None], axis=-1)
            per_seed = 1 - solved[..., 0].mean(axis=1)  # [S]
            rows.append({"update": update, "rollouts": rollouts, "suboptimality": float(per_seed.mean()),
                         "suboptimality_se": float(per_seed.std(ddof=1) / np.sqrt(seeds)) if seeds > 1 else np.nan,
                         "seeds": seeds})
        if update == updates:
            break
        chosen = np.argsort(rng.random((seeds, problems)), axis=1)[:, : setup.batch_problems]  # [S, Bp]
        probs = _softmax(policy.logits(chosen))  # [S, Bp, A]
        draws = rng.random((seeds, setup.batch_problems, n, 1))
        arms = (draws > np.cumsum(probs, axis=-1)[:, :, None, :]).sum(-1).clip(max=setup.actions - 1)  # [S, Bp, n]
        reward = (arms == policy.correct(chosen)[..., None]).astype(float)
        spread = reward.std(axis=-1, keepdims=True)
        advantage = (reward - reward.mean(axis=-1, keepdims=True)) / (spread + 1e-6)  # [S, Bp, n]
        onehot = np.eye(setup.actions)[arms]  # [S, Bp, n, A]
        gradient = (advantage[..., None] * (onehot - probs[:, :, None, :])).mean(axis=2)  # [S, Bp, A]
        if adam is None:
            policy.step(chosen, lr * gradient)
        else:
            policy.parameters[...] += adam.step(policy.parameter_gradient(chosen, gradient))
    return pd.DataFrame(rows)


def _last_within_a_power_of_two(rollouts: int, step: int) -> bool:
    """Whether `rollouts` (> 0, a multiple of `step`) is the last such multiple at or below
    some power of two."""
    return rollouts > 0 and 1 << ((rollouts + step - 1).bit_length() - 1) >= rollouts


def suboptimality_curves(setup: BanditSetup, n_values: list[int], budget: int, seed: int = 0) -> pd.DataFrame:
    """One curve per n at the same budget of rollouts: columns ``n``, ``update``,
    ``rollouts``, ``suboptimality``, ``suboptimality_se``, ``seeds``, recorded at the
    start, at the last update within each power-of-two number of rollouts and at the
    budget. Every n learns the same problems (shared features drawn from `seed`)."""
    frames = []
    for n in n_values:
        updates = budget // (setup.batch_problems * n)
        if updates < 1:
            raise ValueError(f"budget: {budget} rollouts buys no update at n={n} and "
                             f"batch_problems={setup.batch_problems}")
        curve = train_bandits(setup, n, updates, updates, np.random.default_rng([seed, n]),
                              policy=make_policy(setup, features_seed=seed))
        frames.append(curve.assign(n=n))
    return pd.concat(frames, ignore_index=True)[["n", "update", "rollouts", "suboptimality", "suboptimality_se",
                                                 "seeds"]]


def curves_at(curves: pd.DataFrame, budget: float) -> pd.DataFrame:
    """Each curve at its last point within `budget` rollouts, indexed by ``n``."""
    return curves[curves["rollouts"] <= budget].sort_values("rollouts").groupby("n").tail(1).set_index("n")


def best_n(curves: pd.DataFrame, budgets: list[int]) -> pd.DataFrame:
    """The n with the lowest suboptimality at each budget (each curve read at its last
    point within the budget): columns ``rollouts``, ``n``, ``suboptimality``."""
    rows = []
    for budget in budgets:
        within = curves_at(curves, budget)
        winner = within["suboptimality"].idxmin()
        rows.append({"rollouts": budget, "n": int(winner), "suboptimality": float(within.loc[winner, "suboptimality"])})
    return pd.DataFrame(rows)


CURVES_VERSION = 2  # raise when a change to this module changes the curves, so stored ones are not reused
STEP_RULES = ("per problem", "per update")  # how a batch-split curve sizes its step (`batch_split_curves`)


def comparable_budgets(settings: BanditConfig) -> list[int]:
    """The powers of two up to ``settings.budget`` (rollouts) at which every curve of
    `sharing_curves` and `batch_split_curves` has made an update: from the largest batch,
    B_p x the largest n or ``fixed_batch``, rounded up to a power of two."""
    return doublings(1 << (settings.largest_batch - 1).bit_length(), settings.budget)


def sharing_curves(settings: BanditConfig, seed: int = 0) -> pd.DataFrame:
    """Suboptimality curves at B_p = ``settings.batch_problems`` for the tabular policy and
    for each number of shared features: `suboptimality_curves` columns plus ``features``
    (d; ``settings.problems`` for the tabular policy, the one-hot case d = P)."""
    frames = []
    for features in (None, *settings.features):
        setup = _setup(settings, settings.batch_problems, features)
        curves = suboptimality_curves(setup, list(settings.rollouts_per_problem), settings.budget, seed=seed)
        frames.append(curves.assign(features=settings.problems if features is None else features))
    return pd.concat(frames, ignore_index=True)


def batch_split_curves(settings: BanditConfig, features: int | None, step: str = "per problem",
                       seed: int = 0) -> pd.DataFrame:
    """Suboptimality curves at the fixed batch B_p x n = ``settings.fixed_batch``, one per
    n of ``settings.rollouts_per_problem`` that leaves B_p within [1, problems]:
    `suboptimality_curves` columns plus ``batch_problems``.

    `step` (`STEP_RULES`): ``per problem`` moves each drawn problem's logits by
    ``settings.lr`` times its gradient whatever B_p, so a larger B_p also moves shared
    weights more per update; ``per update`` scales the step by ``settings.batch_problems /
    B_p``, so every split moves them as much per update as B_p = ``settings.batch_problems``
    does, and a smaller B_p takes larger steps per problem."""
    if step not in STEP_RULES:
        raise ValueError(f"step: {step!r}; allowed: {', '.join(STEP_RULES)}")
    frames = []
    for n in settings.rollouts_per_problem:
        batch_problems = settings.fixed_batch // n
        if 1 <= batch_problems <= settings.problems:
            setup = _setup(settings, batch_problems, features)
            if step == "per update":
                setup = replace(setup, lr=settings.lr * settings.batch_problems / batch_problems)
            curves = suboptimality_curves(setup, [n], settings.budget, seed=seed)
            frames.append(curves.assign(batch_problems=batch_problems))
    if len(frames) < 2:
        raise ValueError(f"bandit.fixed_batch: {settings.fixed_batch} splits into B_p x n with B_p in [1, "
                         f"{settings.problems}] for {len(frames)} of bandit.rollouts_per_problem; needs two")
    return pd.concat(frames, ignore_index=True)


def optimizer_curves(settings: BanditConfig, seed: int = 0) -> pd.DataFrame:
    """`sharing_curves` of the tabular policy and of the largest d under Adam at step
    ``settings.adam_lr``, constant and scaled by sqrt(B_p n / ``settings.reference_batch``):
    its columns plus ``lr_scaling`` (`LR_SCALINGS`). The same problems, features and draws
    as `sharing_curves`, so the two optimizers compare curve by curve."""
    frames = []
    for rule in LR_SCALINGS:
        for features in (None, max(settings.features)):
            setup = replace(_setup(settings, settings.batch_problems, features), optimizer="adam",
                            lr=settings.adam_lr, lr_scaling=rule, reference_batch=settings.reference_batch)
            curves = suboptimality_curves(setup, list(settings.rollouts_per_problem), settings.budget, seed=seed)
            frames.append(curves.assign(features=settings.problems if features is None else features,
                                        lr_scaling=rule))
    return pd.concat(frames, ignore_index=True)


def _setup(settings: BanditConfig, batch_problems: int, features: int | None) -> BanditSetup:
    return BanditSetup(start_pass=np.full(settings.problems, 1 / settings.actions), actions=settings.actions,
                       batch_problems=batch_problems, lr=settings.lr, seeds=settings.seeds, features=features)


def bandit_seed(config: Config) -> int:
    """The seed of a book's bandit draws: ``system.seed`` shifted by ``sweep.seed_shift``,
    so a rebuild on shifted seeds draws its bandits anew as it trains its runs anew."""
    return config.system.seed + config.sweep.seed_shift


def bandit_curves_path(config: Config, kind: str) -> Path:
    """The bandit curves of one `kind` (e.g. ``sharing``) under the ``bandit``
    settings, `bandit_seed` and the bandit code's `CURVES_VERSION`."""
    seed = bandit_seed(config)
    digest = fingerprint(kind, config.bandit, seed, CURVES_VERSION)
    return Path(config.system.outputs) / "bandits" / f"{kind}-s{seed}-{digest}.parquet"


def interference_curves(config: Config) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Chapter 04's bandit curves, read from the run store (`bandit_curves_path`) or computed
    and kept there: the shared-feature curves (`sharing_curves`) and, at the middle d of
    ``bandit.features``, the batch-split curves under each of `STEP_RULES` (column ``step``).
    `isobook book` computes them beside the base models, on the core their one-threaded build
    leaves idle, so chapter 04 reads them."""
    settings, seed = config.bandit, bandit_seed(config)
    sharing = cached_parquet(bandit_curves_path(config, "sharing"), lambda: sharing_curves(settings, seed))
    middle = sorted(settings.features)[len(settings.features) // 2]
    split = pd.concat([cached_parquet(bandit_curves_path(config, f"batch-split-{rule.replace(' ', '-')}"),
                                      lambda rule=rule: batch_split_curves(settings, middle, rule, seed))
                       .assign(step=rule) for rule in STEP_RULES], ignore_index=True)
    return sharing, split
