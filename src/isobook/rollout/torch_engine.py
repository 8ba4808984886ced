"""Rollouts from the policy itself with plain PyTorch (CPU or GPU).

Qwen2/Llama-style models decode with isobook's preallocated-KV loop (`kv_decode`), any
other causal LM with transformers' ``generate``. Either way generation is batched with a
KV cache and stops once every sequence of a batch has ended. Prompts are sorted by length
before batching so that a batch pads little, and results are put back in prompt order.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from isobook.config import SamplingConfig
from isobook.rollout import kv_decode
from isobook.rollout.base import Rollouts, assemble_rollouts
from isobook.tasks.prompts import encode_prompts


class TorchEngine:
    """Samples from `model` in place; a weight update is visible to the next call.

    `batch_rollouts`: rollouts per forward batch. `autocast`: a context in which forward
    passes run (``Placement.autocast`` for bf16 over float32 weights); none by default.
    `chat`: prompts are chat-template text (`isobook.tasks.prompts`), tokenized as written.
    `end_of`: where a completion's text ends before eos (`isobook.tasks.completion_end`).
    """

    def __init__(self, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, batch_rollouts: int = 1024,
                 autocast: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext,
                 chat: bool = False, end_of: Callable[[str], int | None] | None = None):
        self.model = model
        self.tokenizer = tokenizer
        self.batch_rollouts = batch_rollouts
        self.autocast = autocast
        self.chat = chat
        self.end_of = end_of

    @torch.no_grad()
    def generate(self, prompts: list[str], n: int, sampling: SamplingConfig,
                 progress: Callable[[int], None] | None = None) -> Rollouts:
        encoded = encode_prompts(self.tokenizer, prompts, self.chat)
        order = sorted(range(len(prompts)), key=lambda i: len(encoded[i]))
        prompts_per_call = max(1, self.batch_rollouts // n)
        ids: list[torch.Tensor] = [torch.empty(0)] * (len(prompts) * n)  # one row per rollout, prompt order
        logprobs: list[torch.Tensor] = [torch.empty(0)] * (len(prompts) * n)
        for start in range(0, len(order), prompts_per_call):
            chunk = order[start : start + prompts_per_call]
            with self.autocast():
                chunk_ids, chunk_logprobs = self._sample([encoded[i] for i in chunk], n, sampling)
            for j, prompt_index in enumerate(chunk):
                ids[prompt_index * n : (prompt_index + 1) * n] = chunk_ids[j * n : (j + 1) * n]
                logprobs[prompt_index * n : (prompt_index + 1) * n] = chunk_logprobs[j * n : (j + 1) * n]
            if progress is not None:
                progress(len(chunk) * n)
        return assemble_rollouts(encoded, ids, logprobs, n, self.tokenizer, self.end_of)

    def load_weights(self, model: PreTrainedModel) -> None:
        """Nothing to copy: this engine samples the training model itself."""

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
            do_sample=sampling.temperature > 0,
            temperature=sampling.temperature or None,
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

