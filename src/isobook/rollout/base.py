"""The rollout interface every engine implements (plain PyTorch, vLLM)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from isobook.config import SamplingConfig


@dataclass
class Rollouts:
    """`n` completions for each of P prompts, grouped prompt by prompt (N = P * n rows).

    Row ``i`` belongs to prompt ``i // n``. `prompt_ids` are the token ids each prompt was
    sampled from, which the trainer scores the completions after (so the two can never
    tokenize a prompt differently). Completions are right-padded; the mask covers the
    generated tokens including a closing ``<eos>``. `logprobs` are those of each sampled
    token under the distribution it was drawn from (temperature and top-p applied), the
    behaviour policy that importance ratios divide by.
    """

    n: int
    prompt_ids: list[list[int]]  # [P] token ids of each prompt
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
        """`n` samples for every prompt, in prompt order, each prompt tokenized by
        `isobook.tasks.prompts.encode_prompts`. Temperature 0 is greedy."""
        ...

    def load_weights(self, model: PreTrainedModel) -> None:
        """Sample from `model`'s current weights from now on (after an optimizer step)."""
        ...


def assemble_rollouts(prompt_ids: list[list[int]], ids: list[torch.Tensor], logprobs: list[torch.Tensor], n: int,
                      tokenizer: PreTrainedTokenizerBase) -> Rollouts:
    """`Rollouts` from each prompt's token ids and one token-id row and one log-prob row per
    rollout (# [T_i] each, prompt by prompt): right-padded, masked up to and including the
    first ``<eos>``, decoded."""
    pad, eos = tokenizer.pad_token_id, tokenizer.eos_token_id
    width = max(1, max(len(row) for row in ids))
    completion_ids = torch.stack([torch.nn.functional.pad(row, (0, width - len(row)), value=pad) for row in ids])
    padded_logprobs = torch.stack([torch.nn.functional.pad(row, (0, width - len(row)), value=0.0) for row in logprobs])
    is_eos = completion_ids == eos
    after_eos = (is_eos.cumsum(dim=1) - is_eos.long()) > 0
    lengths = torch.tensor([len(row) for row in ids])
    mask = ((~after_eos) & (torch.arange(width)[None, :] < lengths[:, None])).float()  # [N, T]
    completion_ids = completion_ids.masked_fill(mask == 0, pad)
    texts = tokenizer.batch_decode(completion_ids, skip_special_tokens=True)
    return Rollouts(n=n, prompt_ids=prompt_ids, completion_ids=completion_ids, completion_mask=mask,
                    logprobs=torch.where(mask > 0, padded_logprobs, 0.0), texts=texts)
