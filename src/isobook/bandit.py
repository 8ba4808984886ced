"""The base case of the paper's Figure 12: GRPO on tabular softmax bandits.

Each problem is a bandit with `actions` arms, exactly one of them correct (reward 1, the
rest 0), and its own table of logits: nothing is shared between problems, so there is no
interference. One update draws `batch_problems` problems, `n` arms from each problem's
softmax policy, forms group-relative advantages (reward minus the group mean, divided by
the group's standard deviation, as `advantages.grpo` does for the LLM) and takes
one exact policy-gradient step on the drawn problems' logits:

    theta_p += lr * mean_i A_i * (onehot(a_i) - pi_p)

For one problem the expected suboptimality after t updates behaves like
``O(A / (n t) + B / t)`` (paper, section on interference): at a fixed budget C = n t the
second term favours many small updates, so n* should stay small. Every random draw comes
from one `numpy.random.Generator`, and all seeds run at once as a leading array axis.

    from isobook.bandit import BanditSetup, suboptimality_curves
    curves = suboptimality_curves(BanditSetup(start_pass=np.array([0.3])), [2, 8, 32], budget=4096)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd


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


def initial_logits(setup: BanditSetup) -> np.ndarray:
    """Logits giving each problem its start pass rate on arm 0. # [problems, actions]"""
    start = np.asarray(setup.start_pass, dtype=float)
    logits = np.zeros((start.size, setup.actions))
    logits[:, 0] = np.log(start / (1 - start) * (setup.actions - 1))
    return logits


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def train_bandits(setup: BanditSetup, n: int, updates: int, record_every: int,
                  rng: np.random.Generator) -> pd.DataFrame:
    """GRPO on the bandits for `updates` updates of `n` rollouts per drawn problem.

    Returns one row per recorded update (0 included): ``update``, ``rollouts`` (spent so
    far), ``suboptimality`` (1 - pass@1, averaged over problems and seeds) and
    ``suboptimality_se`` (its standard error over seeds)."""
    if n < 2:
        raise ValueError(f"n: must be >= 2 (a group baseline needs two rollouts), got {n}")
    seeds, problems = setup.seeds, len(setup.start_pass)
    logits = np.broadcast_to(initial_logits(setup), (seeds, problems, setup.actions)).copy()  # [S, P, A]
    rows = []
    for update in range(updates + 1):
        if update % record_every == 0 or update == updates:
            per_seed = 1 - _softmax(logits)[..., 0].mean(axis=1)  # [S]
            rows.append({"update": update, "rollouts": update * setup.batch_problems * n,
                         "suboptimality": float(per_seed.mean()),
                         "suboptimality_se": float(per_seed.std(ddof=1) / np.sqrt(seeds)) if seeds > 1 else np.nan})
        if update == updates:
            break
        chosen = np.argsort(rng.random((seeds, problems)), axis=1)[:, : setup.batch_problems]  # [S, Bp]
        picked = np.take_along_axis(logits, chosen[..., None], axis=1)  # [S, Bp, A]
        policy = _softmax(picked)
        draws = rng.random((seeds, setup.batch_problems, n, 1))
        arms = (draws > np.cumsum(policy, axis=-1)[:, :, None, :]).sum(-1).clip(max=setup.actions - 1)  # [S, Bp, n]
        reward = (arms == 0).astype(float)
        spread = reward.std(axis=-1, keepdims=True)
        advantage = (reward - reward.mean(axis=-1, keepdims=True)) / (spread + 1e-6)  # [S, Bp, n]
        onehot = np.eye(setup.actions)[arms]  # [S, Bp, n, A]
        gradient = (advantage[..., None] * (onehot - policy[:, :, None, :])).mean(axis=2)  # [S, Bp, A]
        np.put_along_axis(logits, chosen[..., None], picked + setup.lr * gradient, axis=1)
    return pd.DataFrame(rows)


def suboptimality_curves(setup: BanditSetup, n_values: list[int], budget: int, points: int = 24,
                         seed: int = 0) -> pd.DataFrame:
    """One curve per n at the same budget of rollouts: columns ``n``, ``update``,
    ``rollouts``, ``suboptimality``, ``suboptimality_se`` (about `points` rows per curve)."""
    frames = []
    for n in n_values:
        updates = budget // (setup.batch_problems * n)
        if updates < 1:
            raise ValueError(f"budget: {budget} rollouts buys no update at n={n} and "
                             f"batch_problems={setup.batch_problems}")
        curve = train_bandits(setup, n, updates, max(1, updates // points), np.random.default_rng([seed, n]))
        frames.append(curve.assign(n=n))
    return pd.concat(frames, ignore_index=True)[["n", "update", "rollouts", "suboptimality", "suboptimality_se"]]


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
