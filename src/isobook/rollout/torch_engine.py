"""Rollouts from the policy itself with plain PyTorch (CPU or GPU).

Qwen2/Llama-style models decode with isobook's preallocated-KV loop (`kv_decode`), any
other causal LM with transformers' ``generate``. Either way generation is batched with a
KV cache and stops once every sequence of a batch has ended. Prompts are sorted by length
before batching so that a batch pads little, and results are put back in prompt order.
"""

from __future__ import annotations

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from isobook.config import SamplingConfig
from isobook.rollout import kv_decode
from isobook.rollout.base import Rollouts


class TorchEngine:
    """Samples from `model` in place; a weight update is visible to the next call."""

    def __init__(self, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, batch_rollouts: int = 1024):
        self.model = model
        self.tokenizer = tokenizer
        self.batch_rollouts = batch_rollouts

    @torch.no_grad()
    def generate(self, prompts: list[str], n: int, sampling: SamplingConfig) -> Rollouts:
        encoded = self.tokenizer(prompts)["input_ids"]
        order = sorted(range(len(prompts)), key=lambda i: len(encoded[i]))
        prompts_per_call = max(1, self.batch_rollouts // n)
        parts: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
        for start in range(0, len(order), prompts_per_call):
            chunk = order[start : start + prompts_per_call]
            ids, logprobs = self._sample([encoded[i] for i in chunk], n, sampling)
            for j, prompt_index in enumerate(chunk):
                parts[prompt_index] = (ids[j * n : (j + 1) * n], logprobs[j * n : (j + 1) * n])
        width = max(parts[i][0].shape[1] for i in parts)
        pad = self.tokenizer.pad_token_id
        completion_ids = torch.cat([_pad_right(parts[i][0], width, pad) for i in range(len(prompts))])
        logprobs = torch.cat([_pad_right(parts[i][1], width, 0.0) for i in range(len(prompts))])
        mask = _completion_mask(completion_ids, self.tokenizer.eos_token_id, pad)
        texts = self.tokenizer.batch_decode(completion_ids.masked_fill(mask == 0, pad), skip_special_tokens=True)
        return Rollouts(n=n, completion_ids=completion_ids, completion_mask=mask, logprobs=torch.where(mask > 0, logprobs, 0.0), texts=texts)

    def _sample(self, prompt_ids: list[list[int]], n: int, sampling: SamplingConfig) -> tuple[torch.Tensor, torch.Tensor]:
        """Completion ids and their log-probs for one batch. # [P*n, T] each"""
        pad = self.tokenizer.pad_token_id
        width = max(len(p) for p in prompt_ids)
        device = self.model.device
        input_ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompt_ids], device=device)  # [P, Tp]
        attention = (torch.arange(width, device=device)[None, :] >= torch.tensor(
            [width - len(p) for p in prompt_ids], device=device)[:, None]).long()  # [P, Tp]
        if kv_decode.supports(self.model):
            ids, logprobs = kv_decode.sample(
                self.model, input_ids, attention.bool(), n, sampling.temperature, sampling.top_p,
                sampling.max_new_tokens, eos=self.tokenizer.eos_token_id, pad=pad)
            return ids.cpu(), logprobs.cpu()
        out = self.model.generate(
            input_ids=input_ids,
            attention_mask=attention,
            do_sample=True,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            top_k=0,
            max_new_tokens=sampling.max_new_tokens,
            num_return_sequences=n,
            pad_token_id=pad,
            eos_token_id=self.tokenizer.eos_token_id,
            output_scores=True,
            return_dict_in_generate=True,
        )
        completion = out.sequences[:, width:].cpu()  # [P*n, T]
        scores = torch.stack(out.scores, dim=1).float().cpu()  # [P*n, T, V], processed logits
        logprobs = torch.log_softmax(scores, dim=-1).gather(-1, completion.unsqueeze(-1)).squeeze(-1)  # [P*n, T]
        return completion, logprobs


def _pad_right(rows: torch.Tensor, width: int, value: float) -> torch.Tensor:
    return torch.nn.functional.pad(rows, (0, width - rows.shape[1]), value=value)


def _completion_mask(ids: torch.Tensor, eos: int, pad: int) -> torch.Tensor:
    """1.0 up to and including the first `eos` of each row (all generated tokens if none). # [N, T]"""
    is_eos = ids == eos
    after_eos = (is_eos.cumsum(dim=1) - is_eos.long()) > 0
    return (~after_eos).float()
