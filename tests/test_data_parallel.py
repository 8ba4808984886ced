"""Data parallelism on CPU: two processes (``torchrun``, gloo) make exactly the update of one.

Each process samples and trains on half of every batch's problems; the token mean runs over
the whole batch and DDP averages gradients, so the weights after an update equal one
process's update on the whole batch (rollouts fixed by `FixedEngine` in the worker), also
when the two processes accumulate gradients over micro-batches, which they all-reduce once
per update, not once per micro-batch. A whole run under two processes finishes with one log
row per update of the whole batch.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from isobook.model.loading import load_causal_lm
from isobook.model.pretrain import ensure_base_model
from isobook.store.names import run_folder
from isobook.store.runs import read_metrics

from conftest import smoke_config

WORKER = Path(__file__).with_name("data_parallel_worker.py")


def test_two_processes_make_the_update_of_one(smoke_outputs: Path, tmp_path: Path) -> None:
    results = {}
    for processes in (1, 2):
        outputs = tmp_path / f"processes-{processes}"
        outputs.mkdir()
        for part in ("models", "sets"):
            os.symlink(smoke_outputs / part, outputs / part)
        launcher = [] if processes == 1 else ["-m", "torch.distributed.run", "--standalone",
                                              f"--nproc_per_node={processes}"]
        subprocess.run([sys.executable, *launcher, str(WORKER), str(outputs), str(outputs / "update.pt")],
                       check=True, env={**os.environ, "OMP_NUM_THREADS": "1"}, timeout=600)
        results[processes] = torch.load(outputs / "update.pt")
    one, two = results[1], results[2]
    base = load_causal_lm(ensure_base_model(smoke_config(smoke_outputs)))[0].state_dict()
    moved = max(float((one["weights"][name] - base[name]).abs().max()) for name in base)
    assert moved > 1e-3  # the update did something
    for name in base:
        assert torch.allclose(one["weights"][name], two["weights"][name], rtol=1e-4, atol=1e-6), name
    for column in ("step_rollouts", "step_tokens", "reward", "policy_loss", "entropy", "response_length"):
        assert two["row"][column] == pytest.approx(one["row"][column], rel=1e-5, abs=1e-7), column
    assert (one["row"]["step_rollouts"], one["row"]["reward"]) == (32.0, 0.5)
    assert two["synced_backwards"] == 1  # 16 micro-batches of one rollout, gradients all-reduced after the last

    config = smoke_config(tmp_path / "processes-2", "train.batch_problems=4", "train.rollouts_per_problem=4",
                          "train.budget=64", "evaluation.first_rollouts=32", "evaluation.validation_problems=8",
                          "evaluation.train_pass_rollouts=[]")
    metrics = read_metrics(run_folder(config))
    assert list(metrics["step"]) == [0, 1, 2, 3, 4]
    assert list(metrics["rollouts"]) == [0.0, 16.0, 32.0, 48.0, 64.0]  # whole batches, not a process's half
    assert metrics["val_avg@4"].notna().sum() >= 2  # the main process evaluated
