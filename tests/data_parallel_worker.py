"""Worker for tests/test_data_parallel.py, run as one process or under ``torchrun``.

    python tests/data_parallel_worker.py <outputs> <result.pt>                   # one process
    python -m torch.distributed.run --nproc_per_node 2 tests/data_parallel_worker.py <outputs> <result.pt>

Makes one GRPO update of the smoke base model on a fixed batch (8 problems x 4 rollouts
from `FixedEngine`, so every process count sees the same rollouts) with SGD at lr 1, and
saves the weights, its log row and how many backward passes all-reduced gradients; then a
whole 4-update `run_grpo` into `<outputs>/runs`. With several processes the update runs in
micro-batches of one rollout each (gradient accumulation), one process takes the batch whole.
"""

import os
import sys
from dataclasses import replace
from pathlib import Path

import torch
from accelerate import Accelerator
from accelerate.utils import extract_model_from_parallel
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
from torch.nn.parallel import DistributedDataParallel

sys.path.insert(0, str(Path(__file__).parent))
from isobook.grpo.run import run_grpo  # noqa: E402
from isobook.grpo.trainer import GRPOTrainer, TrainerSettings  # noqa: E402
from isobook.model.loading import load_causal_lm  # noqa: E402
from isobook.model.pretrain import ensure_base_model  # noqa: E402
from isobook.rollout.base import Rollouts, assemble_rollouts  # noqa: E402
from isobook.tasks import make_task  # noqa: E402
from isobook.tasks.prompts import encode_prompts  # noqa: E402

from conftest import smoke_config  # noqa: E402


class FixedEngine:
    """Rollout j of a prompt answers right when j is even, "#0" otherwise; log-probs -1."""

    def __init__(self, tokenizer, answers: dict[str, str]):
        self.tokenizer, self.answers = tokenizer, answers

    def generate(self, prompts: list[str], n: int, sampling, progress=None) -> Rollouts:
        ids = []
        for prompt in prompts:
            for j in range(n):
                text = f"#{self.answers[prompt]}" if j % 2 == 0 else f"{j}#0"
                ids.append(torch.tensor(self.tokenizer(text, add_special_tokens=False)["input_ids"]
                                        + [self.tokenizer.eos_token_id]))
        return assemble_rollouts(encode_prompts(self.tokenizer, prompts, chat=False), ids,
                                 [torch.full((len(row),), -1.0) for row in ids], n, self.tokenizer)

    def load_weights(self, model) -> None:
        pass


def one_update(outputs: Path, result: Path) -> None:
    config = smoke_config(outputs, "train.batch_problems=8", "train.rollouts_per_problem=4")
    accelerator = Accelerator(cpu=True)
    model, tokenizer = load_causal_lm(ensure_base_model(config))
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    model, optimizer = accelerator.prepare(model, optimizer)
    synced_backwards = []  # one entry per backward pass whose gradients DDP all-reduced

    def counting_allreduce(state, bucket):
        if bucket.is_last():
            synced_backwards.append(1)
        return allreduce_hook(state, bucket)

    if isinstance(model, DistributedDataParallel):
        model.register_comm_hook(None, counting_allreduce)
    task = make_task(config.task)
    problems = task.problems(8, seed=4)
    settings = replace(TrainerSettings.from_config(config), grad_clip=0.0,
                       micro_batch_tokens=1 if int(os.environ.get("WORLD_SIZE", "1")) > 1 else 0)
    engine = FixedEngine(tokenizer, {p.prompt: p.answer for p in problems})
    row = GRPOTrainer(model, None, tokenizer, engine, task, problems, optimizer, settings).step(0, lr=1.0)
    if accelerator.is_main_process:
        torch.save({"weights": extract_model_from_parallel(model).state_dict(), "row": row,
                    "synced_backwards": len(synced_backwards)}, result)


if __name__ == "__main__":
    outputs, result = Path(sys.argv[1]), Path(sys.argv[2])
    one_update(outputs, result)
    run = run_grpo(smoke_config(outputs, "train.batch_problems=4", "train.rollouts_per_problem=4", "train.budget=64",
                                "evaluation.first_rollouts=32", "evaluation.validation_problems=8",
                                "evaluation.train_pass_rollouts=[]"), show_progress=False)
    assert run.status == "finished", run.reason
