"""A whole GRPO run: budget -> updates, evaluations on the compute schedule, checkpoints.

    from isobook.config import load_config
    from isobook.grpo.run import run_grpo
    result = run_grpo(load_config("params/cpu.yaml", ["train.set=hard", "train.budget=20480"]))
    result.metrics[["rollouts", "val_best@4"]].dropna()

`run_grpo` never redoes work: a finished run with at least the requested budget is
returned as is; a killed run resumes from its last checkpoint; a finished run asked for a
larger budget continues from its final state (its learning rate is constant after warm-up
and its randomness a function of the update index, so the result equals a run asked for
the larger budget at once). A loss or gradient that stops being finite ends the run as
``failed`` with the reason in ``status.json``; asking again returns that failure. One
process at a time writes a run (`locks.holding`): a second one asking for it waits, then
returns what the first stored or resumes from its last checkpoint.
"""

from __future__ import annotations

import contextlib
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import pandas as pd
import torch
from accelerate import Accelerator
from accelerate.utils import extract_model_from_parallel
from tqdm import tqdm
from transformers import PreTrainedModel

from isobook.config import Config, ConfigError
from isobook.device import launched_processes, resolve_placement
from isobook.grpo.evaluation import correct_counts, evaluation_steps, train_pass_steps, validation_scores
from isobook.grpo.recipe import LrScaling, lr_at, scaled_lr
from isobook.grpo.trainer import GRPOTrainer, TrainerSettings, TrainingDiverged
from isobook.model.loading import load_causal_lm, set_activation_checkpointing
from isobook.model.pretrain import stored_base_model
from isobook.rollout import training_engine
from isobook.sets.build import load_set, stored_sets
from isobook.store.atomic import StoreError, atomic_folder, cached_json
from isobook.store.locks import holding
from isobook.store.names import Seed, base_scores_path, run_folder, step_seed
from isobook.store.runs import (
    RunState,
    check_resumable,
    keep_finished_policy,
    load_checkpoint,
    read_metrics,
    save_checkpoint,
    settled_status,
    write_config,
    write_status,
    write_tables,
)
from isobook.tasks import Problem, make_task
from isobook.tasks.metrics import Metric


@dataclass
class RunResult:
    """A run's folder, how it ended, and its metrics (a row per update, row 0 the base model)."""

    folder: Path
    status: str  # "finished" or "failed"
    reason: str | None
    updates_made: int  # by this call; 0 when the stored run already covered the request
    metrics: pd.DataFrame


def run_grpo(config: Config, show_progress: bool = True) -> RunResult:
    """Train (or reuse, resume, extend) the run `config` describes; see the module docstring."""
    check_trainable(config)
    folder = run_folder(config)
    with _writer_of(folder):
        status = settled_status(config)  # also after waiting: the holder may have settled it
        if status:
            return RunResult(folder, status["status"], status["reason"], 0, read_metrics(folder))
        return _train(config, folder, show_progress)


def check_trainable(config: Config) -> None:
    """A `ConfigError` for a run that cannot train: said before anything is built."""
    if config.train.steps < 1:
        raise ConfigError(f"train.budget: {config.train.budget} rollouts buy no update at "
                          f"B = B_p * n = {config.train.batch_rollouts}; allowed: >= {config.train.batch_rollouts}")
    if config.sampling.temperature == 0:
        raise ConfigError("sampling.temperature: 0 (greedy) gives a problem's rollouts one completion, so GRPO has "
                          "no advantage to learn from; allowed for training: > 0 (greedy is for evaluation)")
    resolve_placement(config.system)  # a device this machine lacks


def _writer_of(folder: Path) -> contextlib.AbstractContextManager:
    """The run folder's lock (`locks.holding`), taken by the process that writes: the only
    one, which waits for another holder, or the main one of a data-parallel group (whose
    others never write), which reports the run busy instead: its other processes have
    already gone ahead to train and could not follow it back."""
    processes = launched_processes()
    if not processes.main:
        return contextlib.nullcontext()
    if processes.count > 1:
        def busy(holder: str) -> None:
            raise StoreError(f"{folder}: held by {holder}, which is training this run; allowed: one writer per "
                             "run (launch again once it has finished, and the run answers from the store)")
        return holding(folder, on_busy=busy)
    # On stderr: a chapter's page leaves stderr out, and the holder's pid is not for the reader.
    return holding(folder, on_busy=lambda holder: tqdm.write(f"{folder.name}: held by {holder}; waiting for it",
                                                             file=sys.stderr))


def _train(config: Config, folder: Path, show_progress: bool) -> RunResult:
    """Train the run `config` describes from its last checkpoint (or the start) to its budget."""
    total = config.train.steps
    torch.set_num_threads(config.system.threads)
    check_resumable(folder)
    setup = _RunSetup(config)
    main = setup.is_main  # with data parallelism only the main process evaluates and writes
    state = load_checkpoint(folder, setup.policy, setup.optimizer) or RunState(0, [], [], 0.0)
    if state.steps:
        setup.engine.load_weights(setup.policy)  # the engine started from the base model's weights
    start = state.steps
    if main:
        if start:
            keep_finished_policy(folder)  # a study asking for the shorter budget still finds its policy
        write_config(folder, config)
        write_status(folder, "running", state)
    batch = config.train.batch_rollouts
    evaluate_after = set(evaluation_steps(batch, total, config.evaluation))
    measure_pass_after = set(train_pass_steps(batch, total, config.evaluation))
    progress = tqdm(total=total * batch, initial=start * batch, unit="rollout", unit_scale=True,
                    desc=folder.name, disable=not (show_progress and main))
    try:
        if not state.metrics:
            began = time.perf_counter()
            scores = setup.measure_base(state, train_pass=0 in measure_pass_after) if main else {}
            state.metrics.append({"step": 0, "rollouts": 0.0, "tokens": 0.0, **scores})
            state.seconds += time.perf_counter() - began
        for step in range(start, total):
            began = time.perf_counter()
            row = setup.trainer.step(step, lr_at(step, setup.peak_lr, config.train.gradient_rollouts,
                                                     config.recipe.warmup_rollouts))
            done = step + 1
            previous = state.metrics[-1]
            row = {"step": done, "rollouts": previous["rollouts"] + row["step_rollouts"],
                   "tokens": previous["tokens"] + row["step_tokens"], **row}
            if main and (done in evaluate_after or done in measure_pass_after):
                row.update(setup.measure(done, row["rollouts"], state, validation=done in evaluate_after,
                                         train_pass=done in measure_pass_after))
            state.metrics.append(row)
            state.steps = done
            state.seconds += time.perf_counter() - began
            if main and (done % config.evaluation.checkpoint_every == 0 or done in evaluate_after):
                save_checkpoint(folder, setup.policy, setup.optimizer, state)
                write_status(folder, "running", state)
            progress.update(batch)
            progress.set_postfix(_postfix(state.metrics, config.evaluation.k))
    except TrainingDiverged as error:
        if main:
            write_tables(folder, state)
            write_status(folder, "failed", state, reason=str(error))
        setup.wait_for_everyone()
        return RunResult(folder, "failed", str(error), state.steps - start, read_metrics(folder))
    finally:
        progress.close()
    if main:
        save_checkpoint(folder, setup.policy, setup.optimizer, state)
        with atomic_folder(folder / "policy") as staging:
            setup.policy.save_pretrained(staging)
            setup.tokenizer.save_pretrained(staging)
        write_status(folder, "finished", state)
        if not config.system.keep_optimizer:  # policy/ holds the weights; a kill before this leaves them twice
            save_checkpoint(folder, None, None, state)
    setup.wait_for_everyone()
    return RunResult(folder, "finished", None, total - start, read_metrics(folder))


class _RunSetup:
    """Everything a run holds while it trains: data, models, optimizer, engine, trainer.

    Started by ``accelerate launch`` (or ``torchrun``) with several processes, the run is
    data-parallel through `accelerate`: each process samples and trains on its share of
    every batch, gradients are averaged (DDP), the main process evaluates and writes."""

    def __init__(self, config: Config):
        self.config = config
        self.accelerator = _data_parallel(config)
        data = load_set(stored_sets(config), config.train.set)  # staged by the caller (`prepare_sets`)
        self.train_problems = problems_of(data["train"])[: config.train.data_size]
        self.validation = problems_of(data["validation"])[: config.evaluation.validation_problems]
        self.pass_problems = self.train_problems[: config.evaluation.train_pass_problems]
        self.task = make_task(config.task)
        model_path = stored_base_model(config)
        placement = resolve_placement(config.system)
        if self.accelerator is not None:  # one device per process
            placement = replace(placement, device=self.accelerator.device)
        self.model, self.tokenizer = load_causal_lm(model_path, device=placement.device)  # float32 master weights
        if config.system.gradient_checkpointing:
            set_activation_checkpointing(self.model, True)
        settings = TrainerSettings.from_config(config, placement.autocast)
        reference = None
        if settings.weights.kl or config.recipe.track_kl:
            reference, _ = load_causal_lm(model_path, dtype=placement.dtype, device=placement.device)
            reference.eval().requires_grad_(False)
        self.peak_lr = scaled_lr(config.recipe.base_lr, config.recipe.reference_batch,
                                 config.train.gradient_rollouts, LrScaling(config.recipe.lr_scaling))
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=self.peak_lr,
                                           weight_decay=config.recipe.weight_decay)
        if self.accelerator is not None:
            self.model, self.optimizer = self.accelerator.prepare(self.model, self.optimizer)
        self.engine = training_engine(config, self.policy, self.tokenizer, model_path)
        self.trainer = GRPOTrainer(self.model, reference, self.tokenizer, self.engine, self.task,
                                   self.train_problems, self.optimizer, settings)

    @property
    def is_main(self) -> bool:
        return self.accelerator is None or self.accelerator.is_main_process

    @property
    def policy(self) -> PreTrainedModel:
        """The model being trained, without the data-parallel wrapper."""
        return extract_model_from_parallel(self.model)

    def wait_for_everyone(self) -> None:
        if self.accelerator is not None:
            self.accelerator.wait_for_everyone()

    def measure_base(self, state: RunState, train_pass: bool) -> dict[str, float]:
        """`measure` at step 0. The base model's scores are the same for every run sharing
        the sets, the set, the evaluation settings, the seed and the data size, so they are
        computed once and kept in `base_scores_path` for the others."""
        began = time.perf_counter()

        def compute() -> dict[str, Any]:
            fresh = RunState(0, [], [], 0.0)
            return {"scores": self.measure(0, 0.0, fresh, validation=True, train_pass=train_pass),
                    "train_pass": fresh.train_pass, "validation": fresh.validation}

        # Stores older than per-problem counts kept no "validation": those are scored again.
        cached = cached_json(base_scores_path(self.config), lambda kept: "validation" in kept, compute)
        if train_pass:
            state.train_pass.extend(cached["train_pass"])
        state.validation.extend(cached["validation"])
        return {**cached["scores"], "eval_seconds": time.perf_counter() - began}

    def measure(self, step: int, rollouts: float, state: RunState, validation: bool,
                train_pass: bool) -> dict[str, float]:
        """Validation scores (returned) and the per-problem counts behind them and behind
        the training-set pass rates (appended to `state`)."""
        ev, sampling, seed = self.config.evaluation, self.config.sampling, self.config.train.seed
        began = time.perf_counter()
        self.model.eval()
        scores: dict[str, float] = {}
        if validation:
            correct = correct_counts(self.engine, self.task, self.validation, ev.samples, sampling,
                                     step_seed(seed, Seed.EVALUATION, 0))
            scores = validation_scores(correct, ev.samples, ev.k)
            state.validation.extend(_count_rows(step, rollouts, self.validation, correct, ev.samples))
        if train_pass:
            correct = correct_counts(self.engine, self.task, self.pass_problems, ev.train_pass_samples, sampling,
                                     step_seed(seed, Seed.TRAIN_PASS, 0))
            state.train_pass.extend(_count_rows(step, rollouts, self.pass_problems, correct, ev.train_pass_samples))
        scores["eval_seconds"] = time.perf_counter() - began
        return scores


def _data_parallel(config: Config) -> Accelerator | None:
    """An `Accelerator` when this process is one of several (`launched_processes`), else None."""
    if launched_processes().count <= 1:
        return None
    if config.system.engine != "torch":
        raise ConfigError(f"system.engine: {config.system.engine!r} with several data-parallel processes is not "
                          "supported; allowed: torch (or run vLLM with one process per run)")
    return Accelerator(cpu=resolve_placement(config.system).device.type == "cpu")


def _count_rows(step: int, rollouts: float, problems: list[Problem], correct: np.ndarray,
                samples: int) -> list[dict[str, Any]]:
    """One stored row per problem: its correct count out of `samples` at this measurement."""
    return [{"step": step, "rollouts": rollouts, "id": p.id, "correct": int(c), "samples": samples}
            for p, c in zip(problems, correct)]


def problems_of(split: datasets.Dataset) -> list[Problem]:
    """A split of a problem set as `Problem`s."""
    return [Problem(id=i, prompt=p, answer=a) for i, p, a in zip(split["id"], split["prompt"], split["answer"])]


def _postfix(rows: list[dict[str, float]], k: int) -> dict[str, str]:
    recent = [r["reward"] for r in rows[-10:] if "reward" in r]
    postfix = {"reward": f"{np.mean(recent):.3f}"} if recent else {}
    score = Metric("avg", k)
    evaluated = [r for r in rows if score in r]
    if evaluated:
        postfix[score] = f"{evaluated[-1][score]:.3f}"
    return postfix
