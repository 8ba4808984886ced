"""GPU check: rollouts/s and GRPO update time for a Qwen2.5-0.5B-sized model, no download.

    python benchmarks/gpu_check.py                       # on a CUDA machine, under 8 minutes on one GPU
    python benchmarks/gpu_check.py --size tiny --device cpu   # the same steps at toy size (a dry run)

The model is randomly initialised with Qwen2.5-0.5B's shape (24 layers, width 896, 14 query
and 2 key/value heads, vocabulary 151,936, tied embeddings); the tokenizer is isobook's
character tokenizer padded to that vocabulary. A random model almost never says ``<eos>``,
so every rollout runs the full `--new-tokens`: the work is fixed. Steps, each timed once
after a warm-up:

1. rollouts with the torch engine: B_p x n prompts (the chain task's) at temperature 0.6;
2. a GRPO step with the trainer as `params/gpu-qwen2.5-0.5b.yaml` sets it up (float32
   master weights, bf16 autocast on a GPU, gradient checkpointing, micro-batches of
   `--micro-batch-tokens`, packed rows of 1,024 tokens): it samples its own batch, then
   updates; the second of two steps is timed;
3. the GPU preset's prompt path (`params/gpu-qwen2.5-0.5b.yaml`, the `vllm` test group's on
   CPU): a byte-level BPE tokenizer trained here with a ChatML chat template, eos
   ``<|im_end|>`` and pad ``<|endoftext|>``; isobook's word problems rendered through it;
   B_p x n rollouts with the torch engine cut at the answer line; math-verify grading the
   problems' own solutions (where installed);
4. with vLLM installed: the chat rollouts with the vLLM engine, a prompt longer than its
   context refused, and a weight push.

The Ray sweep, sets and book of that test group do not depend on the device and are left
to it (`make test`).

The table is printed last; paste it into benchmarks/README.md. Each row also goes to stderr
(``measured: ...``) as soon as it is measured. A step that raises becomes a ``failed`` row
(its traceback on stderr), the steps after it still run, and the script exits 1 after
printing the table. Only torch, transformers, accelerate and what they import are needed
(no `datasets`): `PYTHONPATH=src` from a checkout runs it on a machine where nothing can be
installed.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import torch
from rollout_engines import timed  # this folder is on the path when a script here runs
from transformers import Qwen2Config, Qwen2ForCausalLM

from isobook.config import Config, ConfigError, RecipeConfig, SamplingConfig, SystemConfig, TaskConfig, TrainConfig
from isobook.device import resolve_placement
from isobook.grpo.trainer import GRPOTrainer, TrainerSettings
from isobook.model.loading import parameter_count, set_activation_checkpointing
from isobook.model.tokenizer import DEFAULT_ALPHABET, SPECIAL_TOKENS, build_char_tokenizer
from isobook.rollout import TorchEngine
from isobook.tasks import make_task
from isobook.tasks.math_file import answer_line_end, reference_answer, verify_math_answer
from isobook.tasks.prompts import chat_prompt
from isobook.tasks.word_problems import word_problems

SHAPES = {  # Qwen2Config fields
    "qwen2.5-0.5b": dict(vocab_size=151936, hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                         num_attention_heads=14, num_key_value_heads=2, rope_theta=1e6),
    "tiny": dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                 num_attention_heads=2, num_key_value_heads=1, rope_theta=1e4),
}


CHATML = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
          "'<|im_end|>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
INSTRUCTION = "Solve it step by step, then give the final number on its own line as: #### <number>"


def chat_tokenizer(texts: list[str], vocab_size: int):
    """A byte-level BPE tokenizer of at most `vocab_size` tokens trained on `texts`, with a
    ChatML chat template; eos ``<|im_end|>`` and pad ``<|endoftext|>``, as Qwen2.5's and
    SmolLM2's instruct tokenizers (built here: the lent machine reaches no model hub)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    tokenizer.chat_template = CHATML
    return tokenizer


def padded_tokenizer(vocab_size: int):
    """isobook's character tokenizer with filler characters up to `vocab_size` ids (plane 2
    onwards, clear of the surrogate range)."""
    filler = vocab_size - len(SPECIAL_TOKENS) - len(DEFAULT_ALPHABET)
    return build_char_tokenizer(DEFAULT_ALPHABET + "".join(chr(0x20000 + i) for i in range(filler)))


class Table:
    """The measurements, in order. Each row is also written to stderr as it is measured, so
    a run killed by its time limit still leaves what it had measured in the log."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str]] = []
        self.failed = False

    def add(self, name: str, value: str) -> None:
        self.rows.append((name, value))
        print(f"measured: {name}: {value}", file=sys.stderr, flush=True)

    @contextlib.contextmanager
    def section(self, name: str) -> Iterator[None]:
        """Runs one step of the check; if it raises, the traceback goes to stderr, a row says
        `name` failed, and the steps after it still run (a lent GPU's minutes are few)."""
        try:
            yield
        except Exception as error:
            traceback.print_exc()
            self.failed = True
            self.add(name, f"failed: {type(error).__name__}: {error}"[:300])
            if torch.cuda.is_available():
                torch.cuda.empty_cache()  # an out-of-memory step leaves its blocks cached

    def print_markdown(self) -> None:
        print()
        print("| measurement | value |")
        print("| --- | --- |")
        for name, value in self.rows:
            print(f"| {name} | {value} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SHAPES), default="qwen2.5-0.5b")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N")
    parser.add_argument("--precision", default="auto", help="auto (bf16 on CUDA), fp32, bf16")
    parser.add_argument("--batch-problems", type=int, default=64)
    parser.add_argument("--n", type=int, default=16)
    parser.add_argument("--new-tokens", type=int, default=256)
    parser.add_argument("--micro-batch-tokens", type=int, default=16384)
    parser.add_argument("--no-vllm", action="store_true", help="skip the vLLM rows")
    args = parser.parse_args()
    began_script = time.perf_counter()
    placement = resolve_placement(SystemConfig(device=args.device, precision=args.precision))
    device = placement.device
    if args.size != "tiny" and args.device == "auto" and device.type != "cuda":
        parser.error(f"--size {args.size} needs a GPU and torch sees none (torch.cuda.is_available() is False); "
                     "--size tiny for a dry run, or --device cpu to run it on the CPU anyway (hours)")
    table = Table()
    table.add("device", torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu")
    table.add("precision", {"bf16": "bf16 autocast over float32 weights", "fp32": "fp32"}[placement.precision])
    table.add("torch", torch.__version__)

    tokenizer = padded_tokenizer(SHAPES[args.size]["vocab_size"])
    config = Qwen2Config(**SHAPES[args.size], max_position_embeddings=4096, tie_word_embeddings=True,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id, attn_implementation="sdpa")
    torch.manual_seed(0)
    with device:  # initialised where it runs: no CPU copy of 494M parameters first
        model = Qwen2ForCausalLM(config)
    set_activation_checkpointing(model, True)
    table.add("model", f"{args.size}, {parameter_count(model) / 1e6:.1f}M parameters, random weights")

    task = make_task(TaskConfig())
    problems = task.problems(args.batch_problems, seed=0)
    prompts = [p.prompt for p in problems]
    rollouts = args.batch_problems * args.n
    sampling = SamplingConfig(max_new_tokens=args.new_tokens, batch_rollouts=rollouts)
    engine = TorchEngine(model.eval(), tokenizer, batch_rollouts=rollouts, autocast=placement.autocast)
    with table.section("torch engine"):
        # Rollouts come back on the CPU, so each timed call has waited for the GPU.
        seconds, tokens = timed(engine, prompts, args.n, sampling, repeats=1, warm_up=True)
        table.add(f"torch engine: {args.batch_problems} x {args.n} rollouts, {args.new_tokens} new tokens",
                  f"{seconds:.2f} s")
        table.add("torch engine: rollouts/s", f"{rollouts / seconds:.1f}")
        table.add("torch engine: generated tokens/s", f"{rollouts * tokens / seconds:.0f}")

    with table.section("GRPO step"):
        config = Config(train=TrainConfig(batch_problems=args.batch_problems, rollouts_per_problem=args.n),
                        sampling=sampling, recipe=RecipeConfig(regularisers="none"),
                        system=SystemConfig(micro_batch_tokens=args.micro_batch_tokens))
        settings = replace(TrainerSettings.from_config(config, placement.autocast), row_tokens=1024)
        trainer = GRPOTrainer(model, None, tokenizer, engine, task, problems,
                              torch.optim.AdamW(model.parameters(), lr=1e-6), settings)
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        warm_up = trainer.step(0, lr=1e-6)
        row = trainer.step(1, lr=1e-6)
        table.add("GRPO step: sampling (torch engine)", f"{row['sample_seconds']:.2f} s")
        table.add(f"GRPO step: update (loss, backward, AdamW), micro-batches of {args.micro_batch_tokens} tokens",
                  f"{row['update_seconds']:.2f} s (first step: {warm_up['update_seconds']:.2f} s)")
        table.add("GRPO step: trained tokens/s", f"{row['step_tokens'] / row['update_seconds']:.0f} (completions)")
        if device.type == "cuda":
            peak = torch.cuda.max_memory_allocated(device) / 2**30
            table.add("peak GPU memory, sampling and update", f"{peak:.1f} GiB")
        del trainer  # and its optimizer's state
    chat, chat_prompts = None, []
    with table.section("chat path"):
        chat, chat_prompts = chat_rows(table, model, args.batch_problems, args.n, sampling, placement)
    if not args.no_vllm:
        if device.type == "cuda":
            torch.cuda.empty_cache()  # vLLM sizes its KV cache from the memory left free
        with table.section("vLLM engine"):
            if chat is None:
                raise RuntimeError("the chat path's tokenizer was not built (see its row)")
            vllm_rows(table, model, chat, chat_prompts, args.n, sampling, placement.dtype)
    table.add("this script, imports excluded", f"{time.perf_counter() - began_script:.0f} s")
    table.print_markdown()
    if table.failed:
        sys.exit(1)


def chat_rows(table: Table, model, batch_problems: int, n: int, sampling: SamplingConfig, placement):
    """The GPU preset's prompt path on `model`: the chat tokenizer, word problems through its
    template, torch-engine rollouts cut at the answer line, math-verify on the reference
    solutions. Returns the tokenizer and the prompts."""
    rows = word_problems(max(batch_problems, 64), seed=0)
    tokenizer = chat_tokenizer([f"{row['question']}\n{row['answer']}" for row in rows] + [INSTRUCTION],
                               min(2048, model.config.vocab_size))
    if tokenizer.eos_token_id == tokenizer.pad_token_id:
        raise RuntimeError("eos and pad are one token")
    table.add("chat path: tokenizer", f"byte-level BPE, {len(tokenizer):,} tokens, ChatML template; eos "
                                      f"im_end ({tokenizer.eos_token_id}), pad endoftext ({tokenizer.pad_token_id})")
    prompts = [chat_prompt(tokenizer, str(row["question"]), INSTRUCTION) for row in rows[:batch_problems]]
    table.add("chat path: prompt tokens (mean)",
              f"{sum(len(tokenizer(p, add_special_tokens=False).input_ids) for p in prompts) / len(prompts):.0f}")
    engine = TorchEngine(model.eval(), tokenizer, batch_rollouts=batch_problems * n, autocast=placement.autocast,
                         chat=True, end_of=answer_line_end)
    seconds, _ = timed(engine, prompts, n, sampling, repeats=1, warm_up=False)
    table.add("chat path: torch engine rollouts/s (cut at the answer line)", f"{batch_problems * n / seconds:.1f}")
    if importlib.util.find_spec("math_verify") is None:
        table.add("chat path: math-verify", "not run: math-verify is not installed")
    else:
        scores = [verify_math_answer(str(row["answer"]), reference_answer(str(row["answer"]))) for row in rows]
        table.add("chat path: math-verify, reference solutions right", f"{sum(scores):.0f} of {len(scores)}")
    return tokenizer, prompts


def vllm_rows(table: Table, model, tokenizer, prompts: list[str], n: int, sampling: SamplingConfig,
              dtype: torch.dtype) -> None:
    """The vLLM engine on the same model with the chat path's tokenizer and prompts: a prompt
    past its context refused, the batch's rollouts, one weight push; a row saying why not
    where vLLM is not installed."""
    if importlib.util.find_spec("vllm") is None:  # `isobook.rollout.vllm_engine` imports vLLM only when built
        table.add("vLLM engine", "not run: vLLM is not installed (`pip install -e .[vllm]` on a GPU machine, "
                                 "`make venv-vllm` on a CPU one)")
        return
    from isobook.rollout.vllm_engine import VLLMEngine

    with tempfile.TemporaryDirectory(prefix="isobook-gpu-check-") as scratch:  # the model's copy: ~2 GB at 0.5B
        folder = Path(scratch)
        model.save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        began = time.perf_counter()
        engine = VLLMEngine(folder, tokenizer, max_model_len=256 + sampling.max_new_tokens, dtype=dtype,
                            gpu_memory=0.4, cache_dir=folder / "cache", chat=True, end_of=answer_line_end)
        table.add("vLLM engine: start", f"{time.perf_counter() - began:.1f} s")
        try:
            engine.generate(["seven " * 400], 1, sampling)
            table.add("vLLM engine: overlong prompt", "failed: generated past the context")
            table.failed = True
        except ConfigError as error:
            table.add("vLLM engine: overlong prompt", f"refused: {str(error).split(';')[0]}")
        seconds, _ = timed(engine, prompts, n, sampling, repeats=1, warm_up=True)
        table.add("vLLM engine: rollouts/s", f"{len(prompts) * n / seconds:.1f} ({seconds:.2f} s)")
        began = time.perf_counter()
        engine.load_weights(model)
        pushed = time.perf_counter() - began
        table.add("vLLM engine: weight push (reload_weights + prefix-cache reset)", f"{pushed:.2f} s")
        engine.close()


if __name__ == "__main__":
    main()
