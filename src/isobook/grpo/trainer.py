"""One GRPO update: collect (B_p problems, n rollouts each) -> score -> advantages -> loss -> step.

Strictly on-policy (paper: every rollout is trained on once): the batch is sampled from the
current weights and used for exactly one optimizer step, so the PPO ratio is 1 and the
"old" log-probs are the trainer's own, detached. The rollout engine's log-probs enter only
through truncated importance sampling (`loss`). Randomness is a pure function of
``(seed, step)``, for problems, sampling and the decoupled baseline's subset, so a run
resumed from a checkpoint draws exactly what an uninterrupted one would.

The update packs completions into rows with their group's prompt stored once per row
(`packing.pack_shared_prompts`): no padding waste and few repeated prompt tokens. The
log-probs and entropies are taken at the sampling temperature, i.e. from the distribution
the engine drew from.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, fields

import numpy as np
import torch
import torch.utils.checkpoint
from accelerate.utils import extract_model_from_parallel
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from isobook.config import Config, SamplingConfig, TrainConfig
from isobook.grpo.advantages import (
    decoupled_rows,
    group_advantages,
    zero_variance_groups,
)
from isobook.grpo.loss import LossTerms, LossWeights, grpo_loss
from isobook.grpo.recipe import loss_weights
from isobook.grpo.shards import Shard, batch_tokens, data_parallel_shard, whole_batch
from isobook.model.packing import pack_shared_prompts
from isobook.rollout import RolloutEngine, Rollouts
from isobook.store.names import Seed, step_seed
from isobook.tasks import Problem, Task, score_rollouts


class TrainingDiverged(RuntimeError):
    """The loss or the gradient norm stopped being finite."""


@dataclass
class TrainerSettings:
    """What one update needs beyond the model: batch shape, loss, optimizer limits."""

    train: TrainConfig
    sampling: SamplingConfig
    weights: LossWeights
    advantage: str  # a key of `advantages.ESTIMATORS`
    grad_clip: float  # 0: no clipping (the norm is still logged)
    row_tokens: int  # width of packed training rows, tokens
    seed: int
    # Forward passes of the update run inside this context (bf16 autocast on a GPU).
    autocast: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext
    micro_batch_tokens: int = 0  # tokens per forward/backward pass (gradient accumulation); 0: all at once

    @classmethod
    def from_config(cls, config: Config,
                    autocast: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext,
                    ) -> TrainerSettings:
        """The settings of the run `config` describes (the one place they are assembled)."""
        return cls(train=config.train, sampling=config.sampling, weights=loss_weights(config.recipe, config.train.set),
                   advantage=config.recipe.advantage, grad_clip=config.recipe.grad_clip,
                   row_tokens=max(config.model.max_positions, 16), seed=config.train.seed, autocast=autocast,
                   micro_batch_tokens=config.system.micro_batch_tokens)


class GRPOTrainer:
    """Updates `model` in place from rollouts of `engine` (which samples that same model)."""

    def __init__(self, model: PreTrainedModel, reference: PreTrainedModel | None, tokenizer: PreTrainedTokenizerBase,
                 engine: RolloutEngine, task: Task, problems: list[Problem], optimizer: torch.optim.Optimizer,
                 settings: TrainerSettings):
        self.model, self.reference, self.tokenizer = model, reference, tokenizer
        self.engine, self.task, self.problems = engine, task, problems
        self.optimizer, self.settings = optimizer, settings

    def batch_problems(self, step: int) -> list[Problem]:
        """The B_p problems of update `step`: epochs without replacement, each a fresh
        permutation of the training set seeded by ``(seed, epoch)``."""
        size, count = self.settings.train.batch_problems, len(self.problems)
        chosen = []
        for position in range(step * size, (step + 1) * size):
            epoch, offset = divmod(position, count)
            order = np.random.default_rng([self.settings.seed, int(Seed.PROBLEM_ORDER), epoch]).permutation(count)
            chosen.append(self.problems[int(order[offset])])
        return chosen

    def step(self, step: int, lr: float) -> dict[str, float]:
        """Make update `step` (0-based) at learning rate `lr`; returns its log row (the
        whole batch's, on every process when data-parallel): collect -> score -> advantages
        -> loss -> optimizer step, one `Batch` passed along."""
        began = time.perf_counter()
        shard, rank = data_parallel_shard(self.settings.train.batch_problems)
        rollouts, rewards = self._collect(step, self.batch_problems(step)[rank :: shard.count], rank)
        sampled = time.perf_counter()
        batch = self._advantages(step, rollouts, rewards)
        terms, grad_norm = self._update(step, batch, lr, shard)
        finished = time.perf_counter()
        row = _log_row(rollouts, rewards, batch.zero_variance, terms, grad_norm, lr,
                       sample_seconds=sampled - began, update_seconds=finished - sampled)
        return whole_batch(row, shard, batch.device)

    def _collect(self, step: int, problems: list[Problem], rank: int) -> tuple[Rollouts, torch.Tensor]:
        """n rollouts of each of `problems` from the current weights, and their rewards # [B_p, n]."""
        n = self.settings.train.rollouts_per_problem
        torch.manual_seed(step_seed(self.settings.seed, Seed.SAMPLING, step) + rank)
        self.model.eval()
        rollouts = self.engine.generate([p.prompt for p in problems], n, self.settings.sampling)
        rewards = torch.tensor(score_rollouts(self.task, problems, rollouts.texts, n), dtype=torch.float32)
        return rollouts, rewards

    def _advantages(self, step: int, rollouts: Rollouts, rewards: torch.Tensor) -> Batch:
        """The rows the gradient sees (all, or the decoupled baseline's subset) with their
        group's advantages, on the model's device."""
        settings, groups = self.settings, rewards.shape[0]
        n = settings.train.rollouts_per_problem
        zero_variance = zero_variance_groups(rewards)  # [B_p]
        advantages = group_advantages(rewards, settings.advantage)  # [B_p, n]
        if settings.train.n_train is None:
            rows = torch.arange(groups * n)  # [B_p * n]
        else:  # the decoupled baseline: advantages from all n, gradient on n_train of them
            generator = torch.Generator().manual_seed(step_seed(settings.seed, Seed.DECOUPLED_SUBSET, step))
            index = decoupled_rows(groups, n, settings.train.n_train, generator)  # [B_p, n_train]
            rows = (torch.arange(groups)[:, None] * n + index).flatten()  # [B_p * n_train]
        group_of_row = rows // n
        device = next(self.model.parameters()).device
        return Batch(prompts=[rollouts.prompt_ids[int(g)] for g in group_of_row],  # the ids the engine sampled from
                     completion_ids=rollouts.completion_ids[rows], mask=rollouts.completion_mask[rows].to(device),
                     lengths=rollouts.lengths[rows].tolist(), advantages=advantages.flatten()[rows].to(device),
                     engine_logprobs=rollouts.logprobs[rows].to(device),
                     row_zero_variance=zero_variance[group_of_row].to(device), zero_variance=zero_variance,
                     device=device)

    def _update(self, step: int, batch: Batch, lr: float, shard: Shard) -> tuple[LossTerms, float]:
        """The loss of `batch`, backward (by micro-batch) and one optimizer step at `lr`;
        the summed loss terms and the gradient norm before clipping."""
        settings = self.settings
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        self.model.train()
        tokens = batch_tokens(batch.mask, batch.row_zero_variance, settings.weights, shard)
        terms = []
        sequence_tokens = [len(prompt) + length for prompt, length in zip(batch.prompts, batch.lengths)]
        parts = micro_batches(sequence_tokens, settings.micro_batch_tokens)
        for index, part in enumerate(parts):
            with _gradient_sync(self.model, sync=index == len(parts) - 1):
                part_prompts = [batch.prompts[i] for i in part]

                def logprobs_under(model: PreTrainedModel, with_entropy: bool):
                    return completion_logprobs(model, part_prompts, batch.completion_ids[part], batch.mask[part],
                                               settings.sampling.temperature, settings.row_tokens,
                                               self.tokenizer.pad_token_id, with_entropy=with_entropy)

                with settings.autocast():
                    logprobs, entropy = logprobs_under(self.model, with_entropy=True)
                    reference = None
                    if self.reference is not None:
                        with torch.no_grad():
                            reference, _ = logprobs_under(self.reference, with_entropy=False)
                part_terms = grpo_loss(logprobs, logprobs.detach(), batch.engine_logprobs[part], batch.advantages[part],
                                       batch.mask[part], batch.row_zero_variance[part], settings.weights, reference,
                                       entropy, tokens)
                if not torch.isfinite(part_terms.loss):
                    raise TrainingDiverged(f"loss is {float(part_terms.loss.detach())} at update {step + 1}")
                part_terms.loss.backward()  # gradients add up over micro-batches
            terms.append(part_terms)
        grad_norm = float(torch.nn.utils.clip_grad_norm_(self.model.parameters(),
                                                         settings.grad_clip or float("inf")))
        if not np.isfinite(grad_norm):
            raise TrainingDiverged(f"gradient norm is {grad_norm} at update {step + 1}")
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.engine.load_weights(extract_model_from_parallel(self.model))
        return _summed(terms), grad_norm


@dataclass
class Batch:
    """One update's training rows (N = B_p * n, or B_p * n_train for the decoupled
    baseline), passed from the advantages to the loss."""

    prompts: list[list[int]]  # token ids of each row's prompt, as the engine sampled from them
    completion_ids: torch.Tensor  # [N, T]
    mask: torch.Tensor  # [N, T], 1.0 on completion tokens
    lengths: list[int]  # completion tokens per row
    advantages: torch.Tensor  # [N]
    engine_logprobs: torch.Tensor  # [N, T], the behaviour policy's (for truncated importance sampling)
    row_zero_variance: torch.Tensor  # [N], True where the row's group had equal rewards
    zero_variance: torch.Tensor  # [B_p], per group (logged)
    device: torch.device


def completion_logprobs(model: PreTrainedModel, prompts: list[list[int]], completion_ids: torch.Tensor,
                        mask: torch.Tensor, temperature: float, row_tokens: int, pad: int,
                        with_entropy: bool, chunk_tokens: int | None = None,
                        ) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Log-probs (and entropies) of each completion token under `model` at `temperature`.

    `prompts`: token ids per rollout; `completion_ids`, `mask`: # [N, T]. Returns # [N, T]
    tensors, 0.0 off the mask. Completions are packed with their prompt stored once per row
    (`pack_shared_prompts`), so no compute goes to padding and little to repeated prompts.

    The forward pass stops at the decoder's last hidden state # [R, L, H]; the vocabulary
    projection runs only at the K completion tokens, `chunk_tokens` of them at a time
    (`vocabulary_chunk`), each chunk recomputed in the backward pass. No [N, T, V] (or
    [R, L, V]) logits tensor exists at any point: peak memory of the head is one chunk's
    float32 logits, whatever the vocabulary.
    """
    lengths = mask.sum(dim=1).long().tolist()
    completions = [completion_ids[i, :length].tolist() for i, length in enumerate(lengths)]
    width = max(row_tokens, max(len(p) + len(c) for p, c in zip(prompts, completions)))
    packed = pack_shared_prompts(prompts, completions, width, pad)
    device = next(model.parameters()).device
    hidden = _last_hidden_state(model, packed.input_ids.to(device), packed.position_ids.to(device),
                                _attention_mask(model, packed.attention_mask.to(device)))  # [R, L, H]
    steps = completion_ids.shape[1]
    # The logit at column c predicts the token at column c + 1; a completion's first token
    # is predicted at its prompt's last column.
    columns = torch.tensor(packed.start)[:, None] + torch.arange(-1, steps - 1)[None, :]  # [N, T]
    columns[:, 0] = torch.tensor(packed.prompt_end)
    rows = torch.tensor(packed.row)[:, None].expand(-1, steps)  # [N, T]
    on = mask.bool()  # [N, T], the K completion tokens
    selected = hidden[rows[on].to(device), columns[on].clamp(max=width - 1).to(device)]  # [K, H]
    head = extract_model_from_parallel(model).get_output_embeddings()
    chunk = chunk_tokens or vocabulary_chunk(head.out_features)
    token_logp, entropy = _sampled_token_logprobs(head, selected, completion_ids[on].to(device), temperature,
                                                  with_entropy, chunk)  # [K] each
    mask = mask.to(device)
    logp_grid = torch.zeros(mask.shape, dtype=token_logp.dtype, device=device).masked_scatter(on.to(device), token_logp)
    if entropy is None:
        return logp_grid, None
    return logp_grid, torch.zeros_like(logp_grid).masked_scatter(on.to(device), entropy)


# Float32 logits one chunk of the vocabulary projection may hold: 2**24 elements, 64 MiB a copy
# (the chunk's logits, log-probs and probabilities are alive at once).
_CHUNK_ELEMENTS = 2**24


def vocabulary_chunk(vocabulary: int) -> int:
    """Tokens whose float32 logits over `vocabulary` fit in 64 MiB (e.g. 110 at Qwen2.5's
    151,936 entries, 341 at SmolLM2's 49,152)."""
    return max(1, _CHUNK_ELEMENTS // vocabulary)


def _last_hidden_state(model: PreTrainedModel, input_ids: torch.Tensor, position_ids: torch.Tensor,
                       attention_mask: torch.Tensor) -> torch.Tensor:
    """The decoder's output # [R, L, H] (after its final norm), read by a hook on the
    decoder while the forward call goes through `model` itself, so a DDP wrapper sees the
    forward pass it needs to all-reduce the gradients. ``logits_to_keep`` is an empty index:
    the model projects no position onto the vocabulary."""
    inner = extract_model_from_parallel(model)
    config = inner.config.get_text_config()
    if getattr(config, "final_logit_softcapping", None) or getattr(config, "logit_scale", None):
        raise ValueError(f"model.source: {config.model_type} rescales its logits after the head; the update "
                         "projects hidden states itself and supports plain heads (Llama, Qwen2, Mistral, ...)")
    captured: list[torch.Tensor] = []
    hook = inner.get_decoder().register_forward_hook(lambda _, __, output: captured.append(output[0]))
    try:
        model(input_ids=input_ids, position_ids=position_ids, attention_mask=attention_mask, use_cache=False,
              logits_to_keep=torch.zeros(0, dtype=torch.long, device=input_ids.device))
    finally:
        hook.remove()
    return captured[0]


def _sampled_token_logprobs(head: torch.nn.Module, hidden: torch.Tensor, tokens: torch.Tensor, temperature: float,
                            with_entropy: bool, chunk: int) -> tuple[torch.Tensor, torch.Tensor | None]:
    """log softmax(head(hidden) / temperature) at `tokens`, and the distribution's entropy,
    `chunk` rows at a time. `hidden`: # [K, H]; `tokens`: # [K]. Returns # [K] float32
    tensors. Where gradients flow and there is more than one chunk, each chunk is
    checkpointed: the backward pass recomputes its logits instead of keeping them."""
    recompute = torch.is_grad_enabled() and hidden.requires_grad and hidden.shape[0] > chunk
    parts = []
    for part_hidden, part_tokens in zip(torch.split(hidden, chunk), torch.split(tokens, chunk)):
        if recompute:
            parts.append(torch.utils.checkpoint.checkpoint(_chunk_logprobs, head, part_hidden, part_tokens,
                                                           temperature, with_entropy, use_reentrant=False))
        else:
            parts.append(_chunk_logprobs(head, part_hidden, part_tokens, temperature, with_entropy))
    both = torch.cat(parts, dim=1) if parts else torch.zeros(2, 0, device=hidden.device)  # [2, K]
    return both[0], (both[1] if with_entropy else None)


def _chunk_logprobs(head: torch.nn.Module, hidden: torch.Tensor, tokens: torch.Tensor, temperature: float,
                    with_entropy: bool) -> torch.Tensor:
    """[log-prob of `tokens`, entropy (0 unless `with_entropy`)] # [2, k] of one chunk."""
    logits = head(hidden).float() / temperature  # [k, V]
    normaliser = torch.logsumexp(logits, dim=-1)  # [k]
    token_logp = logits.gather(-1, tokens[:, None]).squeeze(-1) - normaliser
    if not with_entropy:
        return torch.stack([token_logp, torch.zeros_like(token_logp)])
    logp = logits - normaliser[:, None]  # [k, V]; -sum p log p, not lse - sum p z, which cancels to < 0 at p ~ 1
    entropy = -(logp.exp() * logp).sum(dim=-1)
    return torch.stack([token_logp, entropy])


def _attention_mask(model: PreTrainedModel, visible: torch.Tensor) -> torch.Tensor:
    """`visible` # [R, L, L] (True where a query may attend a key) as the 4D mask `model`'s
    attention takes: boolean for SDPA, additive (0 or the dtype's minimum) for eager."""
    implementation = extract_model_from_parallel(model).config._attn_implementation  # DDP wraps the model
    if implementation == "sdpa":
        return visible[:, None]
    if implementation == "eager":
        dtype = next(model.parameters()).dtype
        return torch.zeros(visible.shape, dtype=dtype, device=visible.device).masked_fill(
            ~visible, torch.finfo(dtype).min)[:, None]
    raise ValueError(f"attn_implementation: the packed update needs 'sdpa' or 'eager', not {implementation!r}")


def micro_batches(sequence_tokens: list[int], max_tokens: int) -> list[torch.Tensor]:
    """Consecutive rollouts grouped so that each group's prompt + completion tokens stay
    within `max_tokens` (a longer rollout gets a group of its own); 0: one group.
    Returns the rollout indices of each group. # [N_i] each"""
    if max_tokens <= 0:
        return [torch.arange(len(sequence_tokens))]
    groups, current, used = [], [], 0
    for index, count in enumerate(sequence_tokens):
        if current and used + count > max_tokens:
            groups.append(torch.tensor(current))
            current, used = [], 0
        current.append(index)
        used += count
    groups.append(torch.tensor(current))
    return groups


def _gradient_sync(model: torch.nn.Module, sync: bool) -> contextlib.AbstractContextManager:
    """Where the model is wrapped in DDP, a forward and backward pass inside ``no_sync`` only
    accumulates gradients, and the next pass outside it all-reduces their sum. With `sync`
    False for every micro-batch but the last, an update all-reduces its gradients once."""
    if sync or not isinstance(model, torch.nn.parallel.DistributedDataParallel):
        return contextlib.nullcontext()
    return model.no_sync()


def _summed(parts: list[LossTerms]) -> LossTerms:
    """The batch's loss terms from its micro-batches' shares (the loss detached)."""
    return LossTerms(**{field.name: sum(getattr(part, field.name) for part in parts) for field in fields(LossTerms)
                        if field.name != "loss"}, loss=sum(part.loss.detach() for part in parts))


def _log_row(rollouts: Rollouts, rewards: torch.Tensor, zero_variance: torch.Tensor, terms, grad_norm: float,
             lr: float, sample_seconds: float, update_seconds: float) -> dict[str, float]:
    lengths = rollouts.lengths.float()
    return {
        "step_rollouts": float(rewards.numel()),
        "step_tokens": float(lengths.sum()),
        "reward": float(rewards.mean()),
        "entropy": terms.entropy,
        "kl": terms.kl,
        "policy_loss": terms.policy,
        "zero_variance_fraction": float(zero_variance.float().mean()),
        "response_length": float(lengths.mean()),
        "grad_norm": grad_norm,
        "lr": lr,
        "clip_fraction": terms.clip_fraction,
        "tis_truncated_fraction": terms.tis_truncated_fraction,
        "sample_seconds": sample_seconds,
        "update_seconds": update_seconds,
    }
