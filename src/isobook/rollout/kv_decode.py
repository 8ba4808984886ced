"""Sampling with a preallocated KV cache for Qwen2/Llama-style decoders.

Why not ``model.generate``: on CPU at isobook's model sizes, transformers' growing cache
spends most of a decode step concatenating key/value tensors (two thirds of the time in a
profile here). This loop runs the model's own modules (its weights, rotary embedding and
MLP; its RMSNorms as one fused ``F.rms_norm`` each, bit-identical here) over buffers
allocated once, and:

* computes each prompt's KV once and copies it to its n samples (the group shares it);
* writes one slot per step instead of re-concatenating the cache;
* samples with the Gumbel-max trick from the tempered (and top-p filtered) logits, so the
  returned log-probs are exactly those of the distribution each token was drawn from
  (temperature 0: the argmax);
* drops ended rows from its buffers once at most half of them still run, so a batch's long
  tail decodes on few rows (the noise is drawn for every row, so which rows were dropped
  when changes no draw);
* stops as soon as every sequence has produced ``<eos>``.

`supports` says whether a model has the layout this loop relies on; the engine falls back
to ``generate`` otherwise.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from transformers import PreTrainedModel
from transformers.models.qwen2.modeling_qwen2 import apply_rotary_pos_emb

from isobook.model.loading import head_size

SUPPORTED_MODEL_TYPES = ("qwen2", "llama")
# Ended rows leave the buffers once the rows still running are at most this share of them:
# the cache is copied a few times per call, and a batch's long tail runs on few rows.
DROP_WHEN_RUNNING = 0.5


def supports(model: PreTrainedModel) -> bool:
    """True when `model` is a decoder whose layers this loop can run."""
    config = model.config
    return config.model_type in SUPPORTED_MODEL_TYPES and not getattr(config, "use_sliding_window", False)


@torch.no_grad()
def sample(model: PreTrainedModel, prompt_ids: torch.Tensor, prompt_mask: torch.Tensor, n: int,
           temperature: float, top_p: float, max_new_tokens: int, eos: int, pad: int
           ) -> tuple[torch.Tensor, torch.Tensor]:
    """`n` completions per left-padded prompt, grouped prompt by prompt.

    `prompt_ids`, `prompt_mask`: # [P, Tp], mask True on real tokens. Returns token ids
    and log-probs, # [P*n, T] each, with `pad` and 0.0 after a row's ``<eos>``.
    """
    core, config = model.model, model.config
    rows, prompt_len = prompt_ids.shape
    total = rows * n
    head_dim = head_size(config)
    width = prompt_len + max_new_tokens
    device, dtype = prompt_ids.device, core.embed_tokens.weight.dtype
    if torch.is_autocast_enabled(device.type):  # bf16 over float32 weights: keep the cache in bf16
        dtype = torch.get_autocast_dtype(device.type)
    cache_shape = (len(core.layers), total, config.num_key_value_heads, width, head_dim)
    keys = torch.empty(cache_shape, dtype=dtype, device=device)
    values = torch.empty(cache_shape, dtype=dtype, device=device)
    valid = torch.zeros(total, width, dtype=torch.bool, device=device)  # [N, W] slots that hold real tokens
    valid[:, :prompt_len] = prompt_mask.repeat_interleave(n, dim=0)

    # Prefill each prompt once; its keys and values are copied to the n samples of its group.
    positions = (prompt_mask.long().cumsum(-1) - 1).clamp(min=0)  # [P, Tp]
    causal = torch.ones(prompt_len, prompt_len, dtype=torch.bool, device=device).tril()
    # A left-pad query attends to itself only, so no softmax row is empty (NaN-free).
    mask = (causal & prompt_mask[:, None, :]) | torch.eye(prompt_len, dtype=torch.bool, device=device)
    hidden = _run_layers(core, core.embed_tokens(prompt_ids), positions, mask[:, None], keys, values,
                         slot=0, repeat=n)
    logits = model.lm_head(_rms_norm(core.norm, hidden[:, -1])).repeat_interleave(n, dim=0)  # [N, V]

    next_position = positions[:, -1].repeat_interleave(n) + 1  # [N]
    tokens = torch.full((total, max_new_tokens), pad, dtype=torch.long, device=device)
    logprobs = torch.zeros(total, max_new_tokens, dtype=torch.float32, device=device)
    # The buffers hold the rows still decoding: buffer row i is output row alive[i].
    alive = torch.arange(total, device=device)  # [A]
    finished = torch.zeros(total, dtype=torch.bool, device=device)  # [A] ended, still in the buffers
    for step in range(max_new_tokens):
        uniform = None
        if temperature > 0:  # noise for every row, ended or not: dropping rows changes no draw
            uniform = torch.rand(total, logits.shape[-1], device=device)  # [N, V]
            if len(alive) < total:
                uniform = uniform[alive]  # [A, V]
        token, logprob = _draw(logits.float(), temperature, top_p, uniform)
        tokens[alive, step] = torch.where(finished, pad, token)
        logprobs[alive, step] = torch.where(finished, 0.0, logprob)
        finished |= token == eos
        running = int((~finished).sum())
        if running == 0 or step == max_new_tokens - 1:
            return tokens[:, : step + 1], logprobs[:, : step + 1]
        if running <= len(alive) * DROP_WHEN_RUNNING:
            keep = ~finished
            keys = keys[:, keep]  # one cache copy at a time: the old one is freed before the next
            values = values[:, keep]
            alive, valid, token, next_position, finished = (alive[keep], valid[keep], token[keep],
                                                            next_position[keep], finished[keep])
        slot = prompt_len + step
        valid[:, slot] = True
        hidden = _run_layers(core, core.embed_tokens(token[:, None]), next_position[:, None],
                             valid[:, None, None, : slot + 1], keys, values, slot=slot, repeat=1)
        logits = model.lm_head(_rms_norm(core.norm, hidden[:, -1]))
        next_position = next_position + 1
    raise AssertionError("unreachable: the loop returns at its last step")


def _run_layers(core: torch.nn.Module, hidden: torch.Tensor, positions: torch.Tensor, mask: torch.Tensor,
                keys: torch.Tensor, values: torch.Tensor, slot: int, repeat: int) -> torch.Tensor:
    """Every decoder layer over `hidden` # [B, T, H]; new keys/values go to cache slots
    ``slot .. slot+T`` (copied `repeat` times per row when prefilling a group)."""
    cos, sin = core.rotary_emb(hidden, positions)
    batch, steps, _ = hidden.shape
    for index, layer in enumerate(core.layers):
        attention = layer.self_attn
        x = _rms_norm(layer.input_layernorm, hidden)
        q = attention.q_proj(x).view(batch, steps, -1, attention.head_dim).transpose(1, 2)  # [B, Hq, T, D]
        k = attention.k_proj(x).view(batch, steps, -1, attention.head_dim).transpose(1, 2)  # [B, Hkv, T, D]
        v = attention.v_proj(x).view(batch, steps, -1, attention.head_dim).transpose(1, 2)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        if repeat == 1:
            keys[index, :, :, slot : slot + steps] = k
            values[index, :, :, slot : slot + steps] = v
            k, v = keys[index, :, :, : slot + steps], values[index, :, :, : slot + steps]
        else:
            keys[index, :, :, slot : slot + steps] = k.repeat_interleave(repeat, dim=0)
            values[index, :, :, slot : slot + steps] = v.repeat_interleave(repeat, dim=0)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=attention.scaling,
                                             enable_gqa=q.shape[1] != k.shape[1])  # [B, Hq, T, D]
        hidden = hidden + attention.o_proj(out.transpose(1, 2).reshape(batch, steps, -1))
        hidden = hidden + layer.mlp(_rms_norm(layer.post_attention_layernorm, hidden))
    return hidden


def _rms_norm(norm: torch.nn.Module, hidden: torch.Tensor) -> torch.Tensor:
    """`norm` (a Qwen2/Llama RMSNorm) as one fused ``F.rms_norm`` call, in float32 like the module."""
    return F.rms_norm(hidden.float(), norm.weight.shape, norm.weight.float(), norm.variance_epsilon).to(hidden.dtype)


def _draw(logits: torch.Tensor, temperature: float, top_p: float, uniform: torch.Tensor | None
          ) -> tuple[torch.Tensor, torch.Tensor]:
    """A token per row from softmax(logits / T) restricted to the top-p mass, and its log-prob. # [N] each

    `uniform`: # [N, V] draws from U[0, 1), turned into the Gumbel noise of the Gumbel-max
    trick; none at temperature 0, which is greedy: the argmax, with log-prob 0 (the
    distribution is a point mass)."""
    if temperature == 0:
        token = logits.argmax(-1)
        return token, torch.zeros_like(token, dtype=logits.dtype)
    scores = logits / temperature
    if top_p < 1.0:
        ordered, order = scores.sort(dim=-1, descending=True)
        probs = ordered.softmax(-1)
        beyond = probs.cumsum(-1) - probs >= top_p  # sorted tokens after the top-p mass is reached
        drop = torch.zeros_like(beyond).scatter(-1, order, beyond)
        scores = scores.masked_fill(drop, float("-inf"))
    logp = scores.log_softmax(-1)  # [N, V]
    gumbel = -torch.log(-torch.log(uniform.clamp_min(1e-20)))
    token = (logp + gumbel).argmax(-1)
    return token, logp.gather(-1, token[:, None]).squeeze(-1)
