"""Rollouts/s of isobook's KV-cache decode loop against transformers' ``generate``.

    .venv/bin/python benchmarks/rollout_engines.py                      # isobook's cpu-preset model size
    .venv/bin/python benchmarks/rollout_engines.py --model outputs/models/<id>

Same model, prompts, sampling settings and batch, in one process; each engine is timed
`--repeats` times and the median taken. Prints a table and ``ratio kv/generate: <x>``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from isobook.config import ModelConfig, SamplingConfig, TaskConfig
from isobook.model.loading import build_model, load_causal_lm
from isobook.model.tokenizer import build_char_tokenizer
from isobook.rollout import RolloutEngine, TorchEngine, kv_decode
from isobook.tasks import make_task


def timed(engine: RolloutEngine, prompts: list[str], n: int, sampling: SamplingConfig, repeats: int,
          warm_up: bool = False) -> tuple[float, float]:
    """Median seconds per call (after one untimed call if `warm_up`) and mean completion tokens."""
    if warm_up:
        engine.generate(prompts, n, sampling)
    seconds, tokens = [], 0.0
    for repeat in range(repeats):
        torch.manual_seed(repeat)
        began = time.perf_counter()
        rollouts = engine.generate(prompts, n, sampling)
        seconds.append(time.perf_counter() - began)
        tokens = float(rollouts.lengths.float().mean())
    return statistics.median(seconds), tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a model folder; default: a fresh cpu-preset-sized Qwen2")
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--n", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.model:
        model, tokenizer = load_causal_lm(args.model)
    else:
        tokenizer = build_char_tokenizer()
        model = build_model(ModelConfig(), tokenizer, seed=0)
    model.eval()
    prompts = [p.prompt for p in make_task(TaskConfig()).problems(args.prompts, seed=0)]
    # A random model rarely says <eos>: fix the length so both engines do the same work.
    sampling = SamplingConfig(max_new_tokens=48 if args.model is None else 96)
    engine = TorchEngine(model, tokenizer, batch_rollouts=args.prompts * args.n)
    kv_seconds, kv_tokens = timed(engine, prompts, args.n, sampling, args.repeats)
    original = kv_decode.supports
    kv_decode.supports = lambda _model: False  # route the same engine through generate
    try:
        gen_seconds, gen_tokens = timed(engine, prompts, args.n, sampling, args.repeats)
    finally:
        kv_decode.supports = original
    rollouts = args.prompts * args.n
    print(f"{'engine':<10} {'seconds':>8} {'rollouts/s':>11} {'tokens/rollout':>15}")
    print(f"{'kv':<10} {kv_seconds:>8.2f} {rollouts / kv_seconds:>11.0f} {kv_tokens:>15.1f}")
    print(f"{'generate':<10} {gen_seconds:>8.2f} {rollouts / gen_seconds:>11.0f} {gen_tokens:>15.1f}")
    print(f"ratio kv/generate: {gen_seconds / kv_seconds:.2f}")


if __name__ == "__main__":
    main()
