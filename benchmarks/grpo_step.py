"""isobook's GRPO step against TRL's GRPOTrainer and a lean floor: same model, batch, prompts.

    .venv/bin/python benchmarks/grpo_step.py                       # cpu base model, 5 timed steps each
    .venv/bin/python benchmarks/grpo_step.py --params params/smoke.yaml --steps 3

One process times, on fresh copies of the same base model and at B_p = 32 problems x n = 8
rollouts (256 rollouts per step, completions up to `sampling.max_new_tokens` tokens, T = 0.6):

* **isobook**: `GRPOTrainer.step` (sampling with isobook's engine, rewards, advantages, one
  packed update), no KL term, as in TRL's default ``beta=0``;
* **trl**: TRL's ``GRPOTrainer`` with ``per_device_train_batch_size=256`` (it counts
  completions), ``num_generations=8``, gradient checkpointing off, each optimizer step
  timed by a callback;
* **lean floor**: one plain ``model.generate`` and one padded forward/backward + AdamW step
  over the same tokens, with no framework around it.

It prints seconds per step (median; for isobook and the floor also split into sampling and
update), rollouts/s, mean completion tokens (the work must match) and the ratios, ending
with ``ratio isobook/trl: <x>``. If TRL is not importable it
is installed, once, into ``outputs/venvs/trl`` (a venv that sees this project's packages
through a ``.pth`` file and adds only TRL), and the script re-runs itself there.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch

TRL_VERSION = "1.16.0"
BATCH_PROBLEMS, GROUP = 32, 8
ROOT = Path(__file__).resolve().parents[1]


def ensure_trl() -> None:
    """Re-run this script under a venv with TRL unless TRL is importable here."""
    if importlib.util.find_spec("trl") is not None:
        return
    venv = ROOT / "outputs" / "venvs" / "trl"
    python = venv / "bin" / "python"
    if not (venv / ".installed").is_file():
        subprocess.run([sys._base_executable, "-m", "venv", str(venv)], check=True)
        site_packages = next(p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix))
        pth = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages" / "isobook-venv.pth"
        pth.write_text(f"import site; site.addsitedir({site_packages!r})\n")
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"trl=={TRL_VERSION}"], check=True)
        (venv / ".installed").write_text(TRL_VERSION)
    os.execv(str(python), [str(python), *sys.argv])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--params", default=str(ROOT / "params" / "cpu.yaml"))
    parser.add_argument("--steps", type=int, default=5, help="timed steps per contender (after one warm-up)")
    args = parser.parse_args()
    ensure_trl()

    from isobook.config import load_config
    from isobook.model.pretrain import ensure_base_model
    from isobook.tasks import make_task

    config = load_config(args.params, ["recipe.regularisers=none", "recipe.track_kl=false",
                                       f"train.batch_problems={BATCH_PROBLEMS}", f"train.rollouts_per_problem={GROUP}"])
    torch.set_num_threads(config.system.threads)
    model_path = ensure_base_model(config)
    task = make_task(config.task)
    problems = task.problems(BATCH_PROBLEMS * (args.steps + 1), seed=12345)
    results = {
        "isobook": time_isobook(config, model_path, task, problems, args.steps),
        "trl": time_trl(config, model_path, task, problems, args.steps),
        "lean floor": time_floor(config, model_path, task, problems, args.steps),
    }
    rollouts = BATCH_PROBLEMS * GROUP
    print(f"\n{rollouts} rollouts per step (B_p={BATCH_PROBLEMS}, n={GROUP}), model {model_path.name}, "
          f"{config.system.threads} threads, median of {args.steps} steps after 1 warm-up")
    print(f"{'contender':<12} {'s/step':>7} {'sample s':>9} {'update s':>9} {'rollouts/s':>11} "
          f"{'tokens/rollout':>15} {'vs trl':>7}")
    trl_seconds = results["trl"].seconds
    for name, timing in results.items():
        phases = [f"{x:>9.3f}" if x is not None else f"{'-':>9}" for x in (timing.sample, timing.update)]
        print(f"{name:<12} {timing.seconds:>7.3f} {' '.join(phases)} {rollouts / timing.seconds:>11.1f} "
              f"{timing.tokens:>15.1f} {trl_seconds / timing.seconds:>7.2f}")
    print(f"ratio isobook/floor: {results['lean floor'].seconds / results['isobook'].seconds:.2f}")
    print(f"ratio isobook/trl: {trl_seconds / results['isobook'].seconds:.2f}")


@dataclass
class Timing:
    """Medians over the timed steps: seconds per step (and per phase where known), tokens per rollout."""

    seconds: float
    tokens: float
    sample: float | None = None
    update: float | None = None


def time_isobook(config, model_path: Path, task, problems, steps: int) -> Timing:
    """Median seconds per `GRPOTrainer.step` and mean completion tokens."""
    from isobook.grpo.trainer import GRPOTrainer, TrainerSettings
    from isobook.model.loading import load_causal_lm
    from isobook.rollout import TorchEngine

    model, tokenizer = load_causal_lm(model_path)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-6)
    settings = TrainerSettings.from_config(config)
    engine = TorchEngine(model, tokenizer, config.sampling.batch_rollouts)
    # One problem per slot, in order: the same prompts as the other contenders.
    trainer = GRPOTrainer(model, None, tokenizer, engine, task, problems, optimizer, settings)
    trainer.batch_problems = lambda step: problems[step * BATCH_PROBLEMS : (step + 1) * BATCH_PROBLEMS]
    rows, seconds = [], []
    for step in range(steps + 1):
        began = time.perf_counter()
        rows.append(trainer.step(step, lr=1e-6))
        seconds.append(time.perf_counter() - began)
    return Timing(statistics.median(seconds[1:]), statistics.fmean(r["response_length"] for r in rows[1:]),
                  statistics.median(r["sample_seconds"] for r in rows[1:]),
                  statistics.median(r["update_seconds"] for r in rows[1:]))


def time_trl(config, model_path: Path, task, problems, steps: int) -> Timing:
    """Median seconds per TRL GRPOTrainer optimizer step and mean completion tokens."""
    import datasets
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from isobook.model.tokenizer import load_tokenizer

    class StepTimer(TrainerCallback):
        def __init__(self) -> None:
            self.seconds: list[float] = []
            self.tokens: list[float] = []
            self.began = 0.0

        def on_step_begin(self, args, state, control, **kwargs):
            self.began = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            self.seconds.append(time.perf_counter() - self.began)

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "completions/mean_length" in logs:
                self.tokens.append(logs["completions/mean_length"])

    def reward(completions: list[str], answer: list[str], **_: object) -> list[float]:
        return [task.reward(text, a) for text, a in zip(completions, answer)]

    dataset = datasets.Dataset.from_dict({"prompt": [p.prompt for p in problems],
                                          "answer": [p.answer for p in problems]})
    timer = StepTimer()
    with tempfile.TemporaryDirectory() as output_dir:
        arguments = GRPOConfig(
            output_dir=output_dir, per_device_train_batch_size=BATCH_PROBLEMS * GROUP, num_generations=GROUP,
            max_completion_length=config.sampling.max_new_tokens, temperature=config.sampling.temperature,
            top_p=config.sampling.top_p, gradient_checkpointing=False, bf16=False, use_cpu=True, beta=0.0,
            learning_rate=1e-6, max_steps=steps + 1, logging_steps=1, save_strategy="no", report_to="none",
            shuffle_dataset=False, disable_tqdm=True, seed=0,
        )
        trainer = GRPOTrainer(model=str(model_path), reward_funcs=reward, args=arguments, train_dataset=dataset,
                              processing_class=load_tokenizer(model_path), callbacks=[timer])
        trainer.train()
    return Timing(statistics.median(timer.seconds[1:]), statistics.fmean(timer.tokens[1:]))


def time_floor(config, model_path: Path, task, problems, steps: int) -> Timing:
    """Median seconds of one `generate` plus one padded forward/backward/AdamW step."""
    from isobook.model.loading import load_causal_lm

    model, tokenizer = load_causal_lm(model_path)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-6)
    tokenizer.padding_side = "left"
    seconds, samples, updates, tokens = [], [], [], []
    for step in range(steps + 1):
        batch = problems[step * BATCH_PROBLEMS : (step + 1) * BATCH_PROBLEMS]
        began = time.perf_counter()
        prompt = tokenizer([p.prompt for p in batch], return_tensors="pt", padding=True)
        with torch.no_grad():
            sequences = model.generate(**prompt, do_sample=True, temperature=config.sampling.temperature,
                                       top_p=config.sampling.top_p, top_k=0,
                                       max_new_tokens=config.sampling.max_new_tokens, num_return_sequences=GROUP,
                                       pad_token_id=tokenizer.pad_token_id)  # [256, Tp + T]
        sampled = time.perf_counter()
        completion = sequences[:, prompt["input_ids"].shape[1]:]
        is_eos = completion == tokenizer.eos_token_id
        completion_mask = ((is_eos.cumsum(1) - is_eos.long()) == 0).long()  # [256, T], up to the first <eos>
        texts = tokenizer.batch_decode(completion * completion_mask, skip_special_tokens=True)
        rewards = torch.tensor([task.reward(t, batch[i // GROUP].answer) for i, t in enumerate(texts)])
        advantages = (rewards - rewards.view(-1, GROUP).mean(1).repeat_interleave(GROUP))[:, None]  # [256, 1]
        attention = torch.cat([prompt["attention_mask"].repeat_interleave(GROUP, 0), completion_mask], dim=1)
        logits = model(input_ids=sequences, attention_mask=attention).logits[:, prompt["input_ids"].shape[1] - 1 : -1]
        logp = torch.log_softmax(logits.float() / config.sampling.temperature, -1).gather(-1, completion[..., None])[..., 0]
        loss = -(advantages * logp * completion_mask).sum() / completion_mask.sum()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        finished = time.perf_counter()
        seconds.append(finished - began)
        samples.append(sampled - began)
        updates.append(finished - sampled)
        tokens.append(float(completion_mask.sum(1).float().mean()))
    return Timing(statistics.median(seconds[1:]), statistics.fmean(tokens[1:]), statistics.median(samples[1:]),
                  statistics.median(updates[1:]))


if __name__ == "__main__":
    main()
