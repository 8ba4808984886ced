"""Where tensors live and in which precision: ``system.device`` and ``system.precision`` resolved.

The policy keeps float32 master weights, which AdamW updates; with ``bf16`` its forward
passes (rollouts and the GRPO update) run under ``torch.autocast`` in bfloat16, while models
that only sample or score (the KL reference, the difficulty profile, vLLM's copy) are
loaded in bfloat16 outright. ``auto`` means bf16 on a CUDA device that supports it and
fp32 elsewhere: on these CPUs bf16 was slower (benchmarks/README.md).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

import torch

from isobook.config import ConfigError, SystemConfig

_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


@dataclass(frozen=True)
class Processes:
    """This process's place among the data-parallel processes of one run: `rank` of `count`."""

    rank: int = 0
    count: int = 1

    @property
    def main(self) -> bool:
        """Whether this process is the one that writes the run's folder and prints."""
        return self.rank == 0


def launched_processes() -> Processes:
    """What the launcher (``torchrun``, ``accelerate launch``) set in ``RANK`` and ``WORLD_SIZE``;
    one process of one without a launcher. The one place isobook reads them: the process
    group that a data-parallel run's `Accelerator` starts from them agrees."""
    return Processes(int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1")))


@dataclass(frozen=True)
class Placement:
    """A resolved device and compute precision."""

    device: torch.device
    precision: str  # "fp32" or "bf16"

    @property
    def dtype(self) -> torch.dtype:
        """The compute dtype (and the dtype of models that never train)."""
        return _DTYPES[self.precision]

    def autocast(self) -> contextlib.AbstractContextManager:
        """Forward passes of float32 weights in the compute dtype (a no-op for fp32)."""
        if self.precision == "fp32":
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=self.dtype)


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def resolve_placement(system: SystemConfig) -> Placement:
    """`system.device` and `system.precision` with ``auto`` resolved on this machine."""
    if system.device == "auto":
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        device = torch.device(system.device)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ConfigError(f"system.device: {system.device!r} asked for, but torch sees no CUDA device "
                              "(a CPU build of torch, or no GPU); allowed here: auto, cpu")
    precision = system.precision
    if precision == "auto":
        precision = "bf16" if device.type == "cuda" and torch.cuda.is_bf16_supported() else "fp32"
    return Placement(device, precision)


def numerics(system: SystemConfig) -> tuple[dict[str, str], ...]:
    """What, beyond the science config, changes a run's numbers: the rollout engine and the
    precision. Empty for the default (torch engine, fp32), so runs stored before these
    settings existed keep their names; otherwise one part to hash into run and set names."""
    precision = resolve_placement(system).precision
    if system.engine == "torch" and precision == "fp32":
        return ()
    return ({"engine": system.engine, "precision": precision},)
