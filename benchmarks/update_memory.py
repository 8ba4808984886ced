"""Peak memory of the update's log-probs and entropies at a 150k vocabulary: chunked head vs full logits.

    .venv/bin/python benchmarks/update_memory.py                 # 16 rollouts x 64 tokens, vocabulary 151,936
    .venv/bin/python benchmarks/update_memory.py --rollouts 32 --tokens 128

One update's log-probs and entropies (forward and backward of ``logp.sum() + entropy.sum()``)
on a 2-layer Qwen2 of hidden size 64 with Qwen2.5's vocabulary of 151,936 tokens, float32 on
CPU, measured two ways, each in a fresh process (peak resident memory is per process):

* **chunked**: `isobook.grpo.trainer.completion_logprobs`: the head projects the completion
  tokens' hidden states `vocabulary_chunk` tokens at a time, each chunk recomputed backward;
* **full logits**: the model's own ``[R, L, V]`` logits, gathered to ``[N, T, V]``, one
  float32 log-softmax and its ``exp()`` for the entropy (the update before chunking).

Each line is the peak resident memory above the process's resident memory just before the
update (the model, inputs and imports excluded), and the last line is
``ratio chunked/full: <x>``. Both paths give the same log-probs; the script checks it.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import torch

VOCABULARY = 151_936  # Qwen2.5's


def resident_mib() -> float:
    """This process's resident memory now, MiB (Linux)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 2**20


def build_inputs(rollouts: int, tokens: int, prompt_tokens: int):
    """A random 2-layer Qwen2 and `rollouts` random completions of `tokens` tokens, two per prompt."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    model = Qwen2ForCausalLM(Qwen2Config(vocab_size=VOCABULARY, hidden_size=64, intermediate_size=128,
                                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                                         max_position_embeddings=4096, tie_word_embeddings=True,
                                         attn_implementation="sdpa"))
    prompts = [torch.randint(1, VOCABULARY, (prompt_tokens,)).tolist() for _ in range(rollouts // 2)]
    prompt_ids = [ids for ids in prompts for _ in range(2)]
    completion_ids = torch.randint(1, VOCABULARY, (rollouts, tokens))
    return model, prompt_ids, completion_ids, torch.ones(rollouts, tokens)


def full_logits(model, prompt_ids, completion_ids, mask, temperature: float):
    """Log-probs and entropies # [N, T] from the whole logits tensor, one sequence per row."""
    ids = torch.tensor([prompt + row.tolist() for prompt, row in zip(prompt_ids, completion_ids)])  # [N, P + T]
    prompt = len(prompt_ids[0])
    logits = model(input_ids=ids, use_cache=False).logits[:, prompt - 1 : -1]  # [N, T, V]
    logp = torch.log_softmax(logits.float() / temperature, dim=-1)
    token_logp = logp.gather(-1, completion_ids[..., None]).squeeze(-1) * mask
    return token_logp, -(logp.exp() * logp).sum(dim=-1) * mask


def measure(path: str, rollouts: int, tokens: int) -> dict[str, float]:
    """Peak MiB above the pre-update resident memory, seconds, and the log-probs' sum, of one path."""
    from isobook.grpo.trainer import completion_logprobs

    model, prompt_ids, completion_ids, mask = build_inputs(rollouts, tokens, prompt_tokens=32)
    before = resident_mib()
    began = time.perf_counter()
    if path == "chunked":
        logp, entropy = completion_logprobs(model, prompt_ids, completion_ids, mask, 0.6, 256, 0, with_entropy=True)
    else:
        logp, entropy = full_logits(model, prompt_ids, completion_ids, mask, 0.6)
    (logp.sum() + entropy.sum()).backward()
    seconds = time.perf_counter() - began
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return {"peak_mib": peak - before, "seconds": seconds, "logp_sum": float(logp.detach().sum()),
            "entropy_sum": float(entropy.detach().sum())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rollouts", type=int, default=16)
    parser.add_argument("--tokens", type=int, default=64, help="completion tokens per rollout")
    parser.add_argument("--path", choices=["chunked", "full"], help=argparse.SUPPRESS)  # one measurement
    args = parser.parse_args()
    if args.path:
        print(json.dumps(measure(args.path, args.rollouts, args.tokens)))
        return
    results = {}
    for path in ("chunked", "full"):
        command = [sys.executable, __file__, "--path", path, "--rollouts", str(args.rollouts), "--tokens", str(args.tokens)]
        results[path] = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
    chunked, full = results["chunked"], results["full"]
    tokens = args.rollouts * args.tokens
    if abs(chunked["logp_sum"] - full["logp_sum"]) > 1e-5 * tokens * 15:  # |log p| ~ ln V ~ 12 per token
        raise SystemExit(f"the paths disagree: {chunked['logp_sum']} against {full['logp_sum']}")
    print(f"{args.rollouts} rollouts x {args.tokens} tokens = {tokens} tokens, vocabulary {VOCABULARY:,}; "
          f"one [N, T, V] float32 copy is {tokens * VOCABULARY * 4 / 2**20:.0f} MiB")
    print("| path | peak MiB above the model | seconds |\n| --- | ---: | ---: |")
    for path, result in results.items():
        print(f"| {path} | {result['peak_mib']:.0f} | {result['seconds']:.2f} |")
    print(f"ratio chunked/full: {chunked['peak_mib'] / full['peak_mib']:.3f}")


if __name__ == "__main__":
    main()
