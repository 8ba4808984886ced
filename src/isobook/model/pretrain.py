"""isobook's own base model: a small Qwen2 (or Llama) taught the task by its (noisy) teacher.

Supervised next-token training on completions only (prompt tokens carry no loss), fresh
teacher samples every step (batch ``step`` drawn from seed ``(seed, step)``, so a resumed
run sees exactly the data it would have seen), packed several to a row, AdamW with linear warm-up and
cosine decay. Decaying the learning rate to (near) zero is what makes per-problem pass
rates a property of the model: a constant-LR checkpoint's pass rates swing from one
checkpoint to the next (trial here). The folder keeps the final model and, in
``checkpoint-<step>/``, the model `earlier_checkpoint` steps before the end, against which
difficulty stability is measured.

Resumable: every `checkpoint_every` steps model, optimizer and step go to
``<folder>.partial/state.pt``; a rerun continues from there.
"""

from __future__ import annotations

import contextlib
import json
import math
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm
from transformers import AutoConfig, PreTrainedModel, PreTrainedTokenizerBase

from isobook.config import BaseModelConfig, Config, ConfigError
from isobook.model.loading import build_model, parameter_count
from isobook.model.packing import pack_sequences
from isobook.model.tokenizer import build_char_tokenizer
from isobook.store.atomic import StoreError, atomic_folder, atomic_torch_save
from isobook.store.names import base_model_path
from isobook.tasks import ChainArithmetic, make_task

IGNORE = -100  # label id that carries no loss
# The base model and its sets are built on one CPU thread, whatever `system.threads` says.
# Where the BLAS splits a long reduction across threads (Intel's MKL does for the weight
# gradients' matmuls, whose inner dimension is the batch's tokens), two threads round
# differently from one, and a thousand steps turn that into another model. One thread is
# what the book's arms get side by side, so a chapter or `isobook sets` builds the same arm.
BUILD_THREADS = 1


@contextlib.contextmanager
def build_threads() -> Iterator[None]:
    """torch on `BUILD_THREADS` CPU threads inside, the previous count restored after."""
    before = torch.get_num_threads()
    torch.set_num_threads(BUILD_THREADS)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def earlier_checkpoint_step(settings: BaseModelConfig) -> int:
    """The step whose weights are kept as the 'shortly before the end' checkpoint."""
    return settings.steps - settings.earlier_checkpoint


def earlier_checkpoint_path(config: Config) -> Path:
    """The 'shortly before the end' checkpoint inside isobook's own model folder."""
    return base_model_path(config) / f"checkpoint-{earlier_checkpoint_step(config.base_model)}"


def ensure_base_model(config: Config) -> Path:
    """The base model folder, training isobook's own model first if it is not cached."""
    folder = base_model_path(config)
    if config.model.source != "isobook":
        _check_loadable(folder)
        return folder
    if (folder / "config.json").is_file():
        return folder
    task = make_task(config.task)
    if not isinstance(task, ChainArithmetic):
        raise ConfigError(f"model.source: isobook's own base model learns from the chain task's teacher, and "
                          f"task.family is {config.task.family!r}; allowed with it: a local Hugging Face model "
                          "folder or hub id")
    with build_threads():
        train_base_model(config, task, folder)
    return folder


def stored_base_model(config: Config) -> Path:
    """The base model folder `ensure_base_model` left; a `StoreError` naming the command
    that builds it when isobook's own model is missing (a run never trains one itself)."""
    folder = base_model_path(config)
    if config.model.source != "isobook":
        _check_loadable(folder)
    elif not (folder / "config.json").is_file():
        raise StoreError(f"{folder}: no base model for this config; allowed: one built first, by "
                         "`isobook base-model --params <the same params and overrides>` (or `isobook sets`)")
    return folder


def _check_loadable(source: Path) -> None:
    """A `ConfigError` naming ``model.source`` unless transformers finds a model config at
    `source` (a local folder, or a hub id this machine reaches), before any work starts."""
    try:
        AutoConfig.from_pretrained(str(source))
    except (OSError, ValueError) as error:  # no such folder or hub id, or a folder without a model
        raise ConfigError(f"model.source: {str(source)!r} holds no model transformers can load "
                          f"({' '.join(str(error).split())}); allowed: 'isobook', a local Hugging Face model "
                          "folder, or a hub id this machine can reach") from error


def teacher_batch(task: ChainArithmetic, tokenizer: PreTrainedTokenizerBase, size: int,
                  rng: np.random.Generator, row_tokens: int) -> dict[str, torch.Tensor]:
    """`size` fresh teacher samples packed into rows of `row_tokens` tokens (`packing`).

    Returns ``input_ids``, ``position_ids`` and ``labels``, each # [rows, row_tokens];
    prompt tokens and the padding at a row's end carry no loss. Packing rather than
    batches sorted by length: those were as fast but learnt markedly slower per step (their
    gradients are biased; trial here). Rows as long as ``model.max_positions`` keep the
    attention cheap.
    """
    problems = task.problems(size, seed=int(rng.integers(2**31)))
    prompts = tokenizer([p.prompt for p in problems])["input_ids"]  # each starts with <bos>
    completions = tokenizer([task.teacher_completion(p.prompt, rng) for p in problems],
                            add_special_tokens=False)["input_ids"]
    completions = [completion + [tokenizer.eos_token_id] for completion in completions]
    packed = pack_sequences([p + c for p, c in zip(prompts, completions)], row_tokens, tokenizer.pad_token_id)
    labels = torch.full_like(packed.input_ids, IGNORE)
    for row, start, prompt, completion in zip(packed.row, packed.start, prompts, completions):
        begin = start + len(prompt)
        labels[row, begin : begin + len(completion)] = torch.tensor(completion)
    return {"input_ids": packed.input_ids, "position_ids": packed.position_ids, "labels": labels}


def learning_rate(step: int, peak: float, warmup: int, total: int, min_ratio: float) -> float:
    """Linear warm-up to `peak`, then cosine decay to ``peak * min_ratio`` at `total`."""
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return peak * (min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * min(1.0, progress))))


def train_base_model(config: Config, task: ChainArithmetic, folder: Path) -> None:
    """Train isobook's own base model and save it (and its earlier checkpoint) to `folder`."""
    settings = config.base_model
    tokenizer = build_char_tokenizer()
    model = build_model(config.model, tokenizer, seed=config.system.seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)
    partial = folder.with_name(folder.name + ".partial")
    state_file = partial / "state.pt"
    start, losses = 0, []
    if state_file.is_file():
        state = torch.load(state_file, weights_only=False)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start, losses = state["step"], state["losses"]
    earlier_step = earlier_checkpoint_step(settings)
    began = time.perf_counter()
    model.train()
    progress = tqdm(range(start, settings.steps), initial=start, total=settings.steps,
                    desc=f"base model ({parameter_count(model) / 1e6:.2f}M params)", unit="step")
    for step in progress:
        if step == earlier_step:
            _save(model, tokenizer, partial / f"checkpoint-{step}")
        lr = learning_rate(step, settings.lr, settings.warmup_steps, settings.steps, settings.min_lr_ratio)
        for group in optimizer.param_groups:
            group["lr"] = lr
        batch = teacher_batch(task, tokenizer, settings.batch_size, np.random.default_rng([config.system.seed, step]),
                              row_tokens=config.model.max_positions)
        # No KV cache: with one, transformers would not see the packing in position_ids.
        loss = model(**batch, use_cache=False).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
        progress.set_postfix(loss=f"{np.mean(losses[-50:]):.4f}", lr=f"{lr:.1e}")
        if (step + 1) % settings.checkpoint_every == 0 and step + 1 < settings.steps:
            atomic_torch_save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                               "step": step + 1, "losses": losses}, state_file)
    with atomic_folder(folder) as staging:
        _save(model, tokenizer, staging)
        earlier = partial / f"checkpoint-{earlier_step}"
        if earlier.is_dir():
            earlier.rename(staging / earlier.name)
        (staging / "training_log.json").write_text(_training_log(losses, time.perf_counter() - began, start))
    if partial.exists():
        shutil.rmtree(partial)


def _save(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, folder: Path) -> None:
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def _training_log(losses: list[float], seconds: float, resumed_at: int) -> str:
    return json.dumps({"loss": losses, "seconds_this_session": round(seconds, 1), "resumed_at_step": resumed_at})
