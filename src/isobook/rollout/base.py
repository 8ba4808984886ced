"""The rollout interface every engine implements (plain PyTorch, vLLM)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from isobook.config import ConfigError, SamplingConfig


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

    def generate(self, prompts: list[str], n: int, sampling: SamplingConfig,
                 progress: Callable[[int], None] | None = None) -> Rollouts:
        """`n` samples for every prompt, in prompt order, each prompt tokenized by
        `isobook.tasks.prompts.encode_prompts`. Temperature 0 is greedy. `progress` is
        called with the number of rollouts finished as they finish (a bar's ``update``)."""
        ...

    def load_weights(self, model: PreTrainedModel) -> None:
        """Sample from `model`'s current weights from now on (after an optimizer step)."""
        ...


def assemble_rollouts(prompt_ids: list[list[int]], ids: list[torch.Tensor], logprobs: list[torch.Tensor], n: int,
                      tokenizer: PreTrainedTokenizerBase, end_of: Callable[[str], int | None] | None = None) -> Rollouts:
    """`Rollouts` from each prompt's token ids and one token-id row and one log-prob row per
    rollout (# [T_i] each, prompt by prompt): cut where `end_of` says the text ends
    (`cut_completions`), right-padded, masked up to and including the first ``<eos>``, decoded."""
    if end_of is not None:
        ids, logprobs = cut_completions(ids, logprobs, tokenizer, end_of)
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


def cut_completions(ids: list[torch.Tensor], logprobs: list[torch.Tensor], tokenizer: PreTrainedTokenizerBase,
                    end_of: Callable[[str], int | None]) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Each row (# [T_i]) cut to its shortest prefix whose decoded text `end_of` finds
    complete (an offset, or None while it is not), as a stop string would have ended it; rows
    that never complete are kept whole. `end_of` must stay complete once complete (a longer
    prefix of a complete text is complete), so the prefix is found by bisection."""
    def complete(row: torch.Tensor, length: int) -> bool:
        return end_of(tokenizer.decode(row[:length], skip_special_tokens=True)) is not None

    cut_ids, cut_logprobs = [], []
    for row, row_logprobs in zip(ids, logprobs):
        eos = (row == tokenizer.eos_token_id).nonzero()
        length = int(eos[0, 0]) if len(eos) else len(row)  # the text before any eos
        if complete(row, length):
            low, high = 1, length  # the shortest complete prefix lies in [low, high]
            while low < high:
                middle = (low + high) // 2
                low, high = (low, middle) if complete(row, middle) else (middle + 1, high)
            row, row_logprobs = row[:high], row_logprobs[:high]
        cut_ids.append(row)
        cut_logprobs.append(row_logprobs)
    return cut_ids, cut_logprobs


def check_context(prompt_ids: list[list[int]], max_new_tokens: int, context: int) -> None:
    """A `ConfigError` naming the fields to change when the longest prompt plus
    `max_new_tokens` does not fit the engine's `context` (tokens), said before sampling
    starts rather than by an engine aborting mid-batch. vLLM's context is a hard limit; the
    torch engine has none (rotary positions run past ``model.max_positions``), so it does
    not check."""
    longest = max((len(ids) for ids in prompt_ids), default=0)
    if longest + max_new_tokens > context:
        raise ConfigError(f"model.max_positions: a prompt of {longest} tokens plus sampling.max_new_tokens="
                          f"{max_new_tokens} exceeds the engine's context of {context} tokens; allowed: "
                          f"model.max_positions >= {longest + max_new_tokens} (within the checkpoint's own), fewer "
                          "new tokens, or shorter problems")
