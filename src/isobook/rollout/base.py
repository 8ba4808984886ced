"""The rollout interface every engine implements (plain PyTorch now, vLLM later)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import torch

from isobook.config import SamplingConfig


@dataclass
class Rollouts:
    """`n` completions for each of P prompts, grouped prompt by prompt (N = P * n rows).

    Row ``i`` belongs to prompt ``i // n``. Completions are right-padded; the mask covers
    the generated tokens including a closing ``<eos>``. `logprobs` are those of each
    sampled token under the distribution it was drawn from (temperature and top-p
    applied), the behaviour policy that importance ratios divide by.
    """

    n: int
    completion_ids: torch.Tensor  # [N, T] token ids, pad after the end
    completion_mask: torch.Tensor  # [N, T] 1.0 on generated tokens, 0.0 on padding
    logprobs: torch.Tensor  # [N, T] log-prob of each sampled token, 0.0 on padding
    texts: list[str]  # [N] decoded completions, special tokens removed

    @property
    def lengths(self) -> torch.Tensor:
        """Generated tokens per rollout. # [N]"""
        return self.completion_mask.sum(dim=1).long()


class RolloutEngine(Protocol):
    """Samples completions from the current policy."""

    def generate(self, prompts: list[str], n: int, sampling: SamplingConfig) -> Rollouts:
        """`n` samples for every prompt, in prompt order."""
        ...
