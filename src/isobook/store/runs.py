"""The run store: one folder per GRPO run under ``<outputs>/runs/``.

A run's identity is its config without the budget: the folder is named readably from the
set, B_p, n and seed plus a hash of everything else that shapes the trajectory or its
measurements (``easy-bp32-n8-s0-1a2b3c``, `names.run_name`). A folder holds:

* ``config.yaml``: the full config of the latest request (its budget included);
* ``status.json``: ``running`` / ``finished`` / ``failed`` (with the reason), updates,
  rollouts, tokens and seconds spent;
* ``metrics.parquet``: one row per update (row 0: the base model); evaluation columns
  are filled on evaluation rows only;
* ``train_pass.parquet``: per-problem correct counts on training problems at chosen points;
* ``validation.parquet``: per-problem correct counts on the validation problems at every
  evaluation (the set-level ``val_*`` scores are their means; `isobook.analysis.findings` resamples
  them to put an uncertainty on every comparison);
* ``state.pt``: the resumable checkpoint (weights, optimizer, update count, and the rows
  above as of that update), written atomically in one file so it is never inconsistent; a
  run finished with ``system.keep_optimizer`` false keeps the rows alone (`check_resumable`);
* ``policy/``: the trained model as a ``save_pretrained`` folder, once finished;
* ``policies/<rollouts>/``: the policy of each budget the run finished at before it was
  extended (`keep_finished_policy`), so a study that asks for the shorter budget still
  scores the policy trained to it (`policy_at`).

Every write is atomic (`storage`): a kill leaves the previous version of each file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import torch
import yaml

from isobook.config import Config
from isobook.store.atomic import StoreError, atomic_torch_save, atomic_write_parquet, atomic_write_text, read_stored
from isobook.store.names import run_folder


@dataclass
class RunState:
    """What a checkpoint restores: the update count and every row logged so far."""

    steps: int
    metrics: list[dict[str, Any]]
    train_pass: list[dict[str, Any]]  # one row per (measurement, training problem)
    seconds: float  # wall time spent on this run over all sessions
    validation: list[dict[str, Any]] = field(default_factory=list)  # one row per (evaluation, validation problem)


def read_status(folder: Path) -> dict[str, Any] | None:
    path = folder / "status.json"
    if not path.is_file():
        return None
    return read_stored(path, lambda p: json.loads(p.read_text()), "delete it to resume the run from its checkpoint")


def settled_status(config: Config) -> dict[str, Any] | None:
    """The stored status of the run `config` describes if asking for it would do no work
    (finished with at least its updates, or failed), else None."""
    status = read_status(run_folder(config))
    if status and (status["status"] == "failed"
                   or status["status"] == "finished" and status["updates"] >= config.train.steps):
        return status
    return None


def rollouts_left(config: Config) -> int:
    """Rollouts the run `config` describes still has to train: its budget less what its
    folder's status records (a resumed or extended run has done part of it)."""
    return max(0, config.train.budget - stored_rollouts(run_folder(config)))


def stored_rollouts(folder: Path) -> int:
    """Rollouts the run in `folder` has trained, as its status records (0 where it has none)."""
    return int((read_status(folder) or {}).get("rollouts", 0))


def write_status(folder: Path, status: str, state: RunState, reason: str | None = None) -> None:
    rollouts = sum(row.get("step_rollouts", 0.0) for row in state.metrics)
    tokens = sum(row.get("step_tokens", 0.0) for row in state.metrics)
    payload = {"status": status, "updates": state.steps, "rollouts": int(rollouts), "tokens": int(tokens),
               "seconds": round(state.seconds, 1), "reason": reason}
    atomic_write_text(json.dumps(payload, indent=2), folder / "status.json")


def write_config(folder: Path, config: Config) -> None:
    atomic_write_text(yaml.safe_dump(config.to_plain(), sort_keys=False), folder / "config.yaml")


def save_checkpoint(folder: Path, model: torch.nn.Module | None, optimizer: torch.optim.Optimizer | None,
                    state: RunState) -> None:
    """Weights, optimizer and rows in one atomic file, then the tables readers look at.
    Without `model` and `optimizer` (a finished run whose ``policy/`` holds its weights,
    ``system.keep_optimizer`` false) the file keeps the rows alone."""
    weights = {} if model is None or optimizer is None else {"model": model.state_dict(),
                                                             "optimizer": optimizer.state_dict()}
    atomic_torch_save({**weights, "steps": state.steps, "metrics": state.metrics, "train_pass": state.train_pass,
                       "validation": state.validation, "seconds": state.seconds},
                      folder / "state.pt")
    write_tables(folder, state)


def check_resumable(folder: Path) -> None:
    """Refuse, before any model loads, a run whose checkpoint kept its rows alone (finished
    with ``system.keep_optimizer`` false): a fresh optimizer would not equal one longer run.
    The tensors are mapped, not read."""
    path = folder / "state.pt"
    if path.is_file() and "optimizer" not in _read_checkpoint(path, mmap=True):
        raise StoreError(f"{folder}: finished without its optimizer state (system.keep_optimizer=false), so a "
                         f"larger budget cannot extend it; delete {folder} to train it again to that budget")


def load_checkpoint(folder: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> RunState | None:
    """Restore `model` and `optimizer` from the run's checkpoint; None if it has none."""
    path = folder / "state.pt"
    if not path.is_file():
        return None
    saved = _read_checkpoint(path)
    model.load_state_dict(saved["model"])
    optimizer.load_state_dict(saved["optimizer"])
    return RunState(saved["steps"], saved["metrics"], saved["train_pass"], saved["seconds"],
                    saved.get("validation", []))


def _read_checkpoint(path: Path, mmap: bool = False) -> dict[str, Any]:
    try:
        return torch.load(path, mmap=mmap, weights_only=False)
    except Exception as error:  # noqa: BLE001 - any unreadable file gets the same advice
        raise StoreError(f"{path}: unreadable checkpoint ({type(error).__name__}: {error}); "
                         "delete it to restart this run from scratch") from error


def write_tables(folder: Path, state: RunState) -> None:
    atomic_write_parquet(pd.DataFrame(state.metrics), folder / "metrics.parquet")
    for name, rows in (("train_pass", state.train_pass), ("validation", state.validation)):
        if rows:
            atomic_write_parquet(pd.DataFrame(rows), folder / f"{name}.parquet")


def read_metrics(folder: Path) -> pd.DataFrame:
    """A run's metrics table (a row per update, row 0 the base model)."""
    return read_stored(folder / "metrics.parquet", pd.read_parquet, f"delete {folder} to train the run again")


COUNT_COLUMNS = ["step", "rollouts", "id", "correct", "samples"]


def read_counts(folder: Path, split: str) -> pd.DataFrame:
    """A run's per-problem correct counts on `split` (``train_pass``: training problems at
    the chosen points; ``validation``: validation problems at every evaluation). Columns
    `COUNT_COLUMNS`, one row per problem per measurement; empty if it measured none."""
    path = folder / f"{split}.parquet"
    if not path.is_file():
        return pd.DataFrame(columns=COUNT_COLUMNS)
    return read_stored(path, pd.read_parquet, f"delete {folder} to train the run again")


def keep_finished_policy(folder: Path) -> None:
    """Before a finished run is extended, move its policy (and the transfer scores and skill
    accuracies kept beside the run for it) to ``policies/<rollouts>/``. Each move is a rename,
    so a kill leaves the policy whole in one place or the other."""
    status, policy = read_status(folder), folder / "policy"
    if not (status and status["status"] == "finished" and policy.is_dir()):
        return
    kept = folder / "policies" / str(status["rollouts"])
    if kept.exists():
        return
    for scores in [*folder.glob("transfer-*.json"), *folder.glob("skills-*.parquet")]:
        scores.rename(policy / scores.name)
    kept.parent.mkdir(exist_ok=True)
    policy.rename(kept)


def policy_at(folder: Path, rollouts: int) -> Path | None:
    """The run's policy trained to exactly `rollouts`: ``policies/<rollouts>/`` if the run
    was extended since, ``policy/`` if it finished there; None if it holds neither."""
    kept = folder / "policies" / str(rollouts)
    if kept.is_dir():
        return kept
    status = read_status(folder)
    if status and status["status"] == "finished" and status["rollouts"] == rollouts and (folder / "policy").is_dir():
        return folder / "policy"
    return None
