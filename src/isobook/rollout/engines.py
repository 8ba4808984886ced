"""The rollout engine a config asks for (``system.engine``), on its device and precision."""

from __future__ import annotations

from pathlib import Path

from transformers import PreTrainedModel, PreTrainedTokenizerBase

from isobook.config import Config
from isobook.device import resolve_placement
from isobook.model.loading import load_causal_lm
from isobook.model.tokenizer import load_tokenizer
from isobook.rollout.base import RolloutEngine
from isobook.rollout.torch_engine import TorchEngine
from isobook.tasks import chat_prompts, completion_end


def inference_engine(config: Config, model_path: str | Path) -> tuple[RolloutEngine, PreTrainedTokenizerBase]:
    """An engine that samples the model saved in `model_path` and never trains it, and the
    model's tokenizer. The torch engine loads the weights in the compute dtype."""
    if config.system.engine == "vllm":
        tokenizer = load_tokenizer(model_path)
        return _vllm(config, model_path, tokenizer), tokenizer
    placement = resolve_placement(config.system)
    model, tokenizer = load_causal_lm(model_path, dtype=placement.dtype, device=placement.device)
    return TorchEngine(model.eval(), tokenizer, config.sampling.batch_rollouts,
                       chat=chat_prompts(config.task, tokenizer), end_of=completion_end(config.task)), tokenizer


def training_engine(config: Config, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase,
                    model_path: str | Path) -> RolloutEngine:
    """An engine that samples `model` while it trains: the torch engine samples it in place
    (under autocast in the compute precision); vLLM starts from `model_path`, the weights
    `model` was loaded from, and is sent new weights by the trainer after every update."""
    if config.system.engine == "vllm":
        return _vllm(config, model_path, tokenizer)
    placement = resolve_placement(config.system)
    return TorchEngine(model, tokenizer, config.sampling.batch_rollouts, autocast=placement.autocast,
                       chat=chat_prompts(config.task, tokenizer), end_of=completion_end(config.task))


def _vllm(config: Config, model_path: str | Path, tokenizer: PreTrainedTokenizerBase) -> RolloutEngine:
    from isobook.rollout.vllm_engine import (
        VLLMEngine,  # vLLM is optional: imported only when asked for
    )

    return VLLMEngine(model_path, tokenizer, config.model.max_positions, resolve_placement(config.system).dtype,
                      config.system.vllm_gpu_memory,
                      config.system.seed, cache_dir=Path(config.system.outputs) / "cache",
                      chat=chat_prompts(config.task, tokenizer), end_of=completion_end(config.task))
