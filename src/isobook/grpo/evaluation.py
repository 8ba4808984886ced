"""When a run is evaluated (a schedule in rollouts) and what it measures there.

The schedule is log-spaced in rollouts, ``first * 2**(i / per_doubling)``, so one run yields
a reward-versus-compute curve with the same density at every scale; each point is taken
after the first update at which the run has spent at least that many rollouts. Step 0 (the
base model) and the run's last update are always evaluated. Points do not depend on the
budget, so extending a run from C to 2C adds exactly the points a 2C run has beyond C
(when C is itself a point, as powers of two are with the default grid, nothing else differs).

Validation scores use the unbiased avg@k, best@k and worst@k of `samples` >= k draws per
problem (`metrics`); every evaluation draws with the same seed, so successive points
differ by the model, not by fresh sampling noise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from isobook.config import EvaluationConfig, SamplingConfig
from isobook.sets.difficulty import count_correct
from isobook.tasks import Problem, Task
from isobook.tasks.metrics import Metric

if TYPE_CHECKING:  # a type only: importing the engines would load transformers
    from isobook.rollout import RolloutEngine


def evaluation_steps(batch_rollouts: int, total_steps: int, settings: EvaluationConfig) -> list[int]:
    """Update counts (0 = base model) after which a run of `total_steps` updates of
    `batch_rollouts` rollouts each is evaluated, ascending."""
    steps = {0, total_steps}
    index = 0
    while True:
        point = round(settings.first_rollouts * 2 ** (index / settings.points_per_doubling))  # rollouts
        step = _first_update_reaching(point, batch_rollouts)
        if step > total_steps:
            break
        steps.add(step)
        index += 1
    return sorted(steps)


def train_pass_steps(batch_rollouts: int, total_steps: int, settings: EvaluationConfig) -> list[int]:
    """Update counts after which per-problem pass@1 of the training set is measured."""
    steps = {_first_update_reaching(rollouts, batch_rollouts) for rollouts in settings.train_pass_rollouts}
    return sorted(step for step in steps if step <= total_steps)


def power_of_two_budgets(settings: EvaluationConfig, budget: int) -> list[int]:
    """The budgets (rollouts) at which chapters compare runs: the schedule's first point
    doubled up to `budget`, where runs whose batches are powers of two are all evaluated."""
    return doublings(settings.first_rollouts, budget)


def doublings(first: int, last: int) -> list[int]:
    """``first, 2 first, 4 first, ...`` up to `last` (rollouts)."""
    budgets = [first]
    while budgets[-1] * 2 <= last:
        budgets.append(budgets[-1] * 2)
    return budgets


def _first_update_reaching(rollouts: int, batch_rollouts: int) -> int:
    """The first update count whose cumulative rollouts reach `rollouts`."""
    return -(-rollouts // batch_rollouts)


def correct_counts(engine: RolloutEngine, task: Task, problems: list[Problem], samples: int,
                   sampling: SamplingConfig, seed: int) -> np.ndarray:
    """Correct answers out of `samples` per problem, drawn with torch seeded by `seed`. # [problems]"""
    torch.manual_seed(seed)
    return count_correct(engine, task, problems, samples, sampling)["correct"].to_numpy()


def metric_name(kind: str, settings: EvaluationConfig) -> Metric:
    """The validation metric `kind` (``avg``, ``best``, ``worst``) at ``evaluation.k``: as
    text the run store's column, ``val_avg@4`` for ``avg`` with k = 4."""
    return Metric(kind, settings.k)


def validation_scores(correct: np.ndarray, samples: int, k: int) -> dict[str, float]:
    """Set-level ``val_avg@k``, ``val_best@k``, ``val_worst@k`` from per-problem counts."""
    return {str(metric): float(metric.per_problem(correct, samples).mean()) for metric in
            (Metric(kind, k) for kind in Metric.KINDS)}
