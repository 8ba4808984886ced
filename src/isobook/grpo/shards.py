"""A batch split over data-parallel processes (and micro-batches): what the loss divides by,
and the log row of the whole batch.

Each process samples and trains on every count-th problem of the batch; DDP averages the
processes' gradients. For the averaged gradient to be the whole batch's token mean, every
part's loss divides by the whole batch's token counts over the number of processes
(`batch_tokens`), not by its own.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from isobook.device import launched_processes
from isobook.grpo.loss import LossWeights, TokenCounts, term_masks


@dataclass(frozen=True)
class Shard:
    """A batch split over `count` data-parallel processes whose gradients are averaged (DDP)."""

    count: int = 1

    def total(self, local: torch.Tensor) -> torch.Tensor:
        """`local` summed over the processes."""
        if self.count == 1:
            return local
        summed = local.clone()
        torch.distributed.all_reduce(summed)
        return summed


def data_parallel_shard(batch_problems: int) -> tuple[Shard, int]:
    """The data-parallel process count and this process's rank (`launched_processes`: 1 and
    0 without a launcher)."""
    processes = launched_processes()
    if processes.count > 1 and not (torch.distributed.is_available() and torch.distributed.is_initialized()):
        raise RuntimeError(f"WORLD_SIZE={processes.count} but no process group: a data-parallel trainer runs "
                           "inside run_grpo, whose Accelerator starts the group")
    if batch_problems % processes.count:
        raise ValueError(f"train.batch_problems: B_p = {batch_problems} must be a multiple of the "
                         f"{processes.count} data-parallel processes")
    return Shard(processes.count), processes.rank


def batch_tokens(mask: torch.Tensor, zero_variance: torch.Tensor, weights: LossWeights,
                 shard: Shard = Shard()) -> TokenCounts:
    """Token counts of the batch whose rollouts (this process's) are `mask` # [N, T] and
    `zero_variance` # [N], summed over the processes of `shard`, over their count."""
    policy_mask, regulariser_mask = term_masks(mask, zero_variance, weights)
    return TokenCounts(policy=shard.total(policy_mask.sum()).clamp(min=1.0) / shard.count,
                       regulariser=shard.total(regulariser_mask.sum()).clamp(min=1.0) / shard.count)


def whole_batch(row: dict[str, float], shard: Shard, device: torch.device) -> dict[str, float]:
    """A process's log row turned into the whole batch's: every process holds the same
    number of rollouts, so means average over processes and counts add up. The sum runs on
    `device`, the model's (NCCL reduces only CUDA tensors, gloo CPU ones)."""
    if shard.count == 1:
        return row
    summed = shard.total(torch.tensor(list(row.values()), dtype=torch.float64, device=device)).tolist()
    return {name: value if name in ("step_rollouts", "step_tokens") else value / shard.count
            for name, value in zip(row, summed)}
