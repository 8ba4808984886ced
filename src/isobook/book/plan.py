"""What a book will train, before anything starts: ``isobook book --params ... --plan``.

    plan = book_plan("params/gpu-qwen2.5-0.5b.yaml", [])
    print(plan.text())

Each chapter's runs are the ones it asks for before it reads a result
(`designs.chapter_runs`), at the budget the build gives it (``book.budgets`` and its
declared ``budget_share``). A run two chapters share counts once, at the larger budget, and
a run the store already holds counts only the rollouts it has left. Hours are rollouts over
a rate in rollouts per second: the one measured on this store's finished runs of the same
model and engine (their rollouts over the seconds of their sampling, updates and
evaluations; loading the model and starting an engine are left out), or the one given
(`rate`). Runs are counted one after another: `sweep.workers` at once divide the wall time.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd
import yaml

from isobook.book.build import (
    book_arms,
    chapter_declarations,
    chapter_parameters,
    chapters,
    skipped_chapters,
)
from isobook.book.designs import RATED_RUNS, chapter_runs
from isobook.book.kernel import ROOT, chapter_config
from isobook.config import Config, ConfigError, load_config, with_overrides
from isobook.device import resolve_placement
from isobook.store.names import run_folder, sets_built
from isobook.store.runs import read_status, stored_rollouts
from isobook.sweeps import n_grid


@dataclass(frozen=True)
class BookPlan:
    """A book's training, chapter by chapter.

    ``chapters``: one row per chapter: ``chapter``, ``runs`` (it asks for), ``new runs``
    (first asked for by it), ``rollouts`` (to train for its new runs and for the runs it
    extends), ``note`` (why it does not run, or what it may add from results)."""

    chapters: pd.DataFrame
    runs: int              # distinct runs over the book
    rollouts: int          # still to train over the book
    rate: float | None     # rollouts per second the hours are read at
    rate_source: str
    hours_unit: str        # "GPU-hours" on a CUDA device, "hours on this machine" on its CPU, "hours" at a given rate
    profile_rollouts: int  # rollouts that profile the pools (and stability problems) of sets not built

    def hours(self) -> float | None:
        return None if self.rate is None else self.rollouts / self.rate / 3600

    def text(self) -> str:
        notes = [f"  {row.chapter}: {row.note}" for row in self.chapters.itertuples() if row.note]
        lines = [self.chapters.drop(columns="note").to_string(index=False), *(["notes:", *notes] if notes else []),
                 "", f"book: {self.runs} runs, {self.rollouts:,} rollouts to train"]
        hours = self.hours()
        lines.append(f"at {self.rate:.3g} rollouts/s ({self.rate_source}): {hours:,.1f} {self.hours_unit}"
                     if hours is not None else
                     f"{self.hours_unit}: {self.rollouts:,} / (3,600 r) at r rollouts/s ({self.rate_source})")
        if self.profile_rollouts:
            lines.append(f"before them, sets not yet built: {self.profile_rollouts:,} rollouts profile the pools")
        return "\n".join(lines)


def measured_rate(config: Config) -> tuple[float | None, str]:
    """Rollouts per second over the finished runs in `config`'s store that share its
    ``model`` section and ``system.engine``, with what it was read from."""
    model, engine = config.to_plain()["model"], config.system.engine
    rollouts = seconds = count = 0
    for status_path in sorted((Path(config.system.outputs) / "runs").glob("*/status.json")):
        status, stored = read_status(status_path.parent), status_path.parent / "config.yaml"
        if not (status and status["status"] == "finished" and status["seconds"] > 0 and stored.is_file()):
            continue
        saved = yaml.safe_load(stored.read_text())
        if saved.get("model") == model and saved.get("system", {}).get("engine") == engine:
            rollouts, seconds, count = rollouts + status["rollouts"], seconds + status["seconds"], count + 1
    if not count:
        return None, "no finished run of this model and engine in the store; give --rate"
    return rollouts / seconds, f"measured on {count} finished run{'s' * (count != 1)} in the store"


def book_plan(params: str, overrides: list[str], rate: float | None = None, root: Path = ROOT) -> BookPlan:
    """The plan of the book `params` and `overrides` build (see the module docstring)."""
    if rate is not None and not rate > 0:
        raise ConfigError(f"--rate {rate!r}; allowed: rollouts per second, a number above 0")
    params = str(Path(params).resolve())
    config = load_config(params, overrides)
    parameters = chapter_parameters(params, overrides, config, root)
    skipped = skipped_chapters(config, root)
    outputs = root / config.system.outputs
    config = replace(config, system=replace(config.system, outputs=str(outputs)))  # as the chapters resolve it
    reached: dict[Path, int] = {}  # run folder -> the rollouts it will have after the chapters so far
    rows = []
    for chapter in chapters(root):
        name = Path(chapter).name
        if chapter in skipped:
            rows.append({"chapter": name, "runs": 0, "new runs": 0, "rollouts": 0, "note": skipped[chapter]})
            continue
        chapter_cfg = chapter_config(params, overrides, parameters[name].get("budget"))
        share = chapter_declarations(root / f"{chapter}.py")["budget_share"]
        rated = [_stored_alike(run) for run in RATED_RUNS.get(name, lambda _: [])(chapter_cfg)]
        asked: dict[Path, int] = {}  # run folder -> the largest budget this chapter asks of it
        for run in [*chapter_runs(name, chapter_cfg, share), *rated]:
            asked[run_folder(run)] = max(asked.get(run_folder(run), 0), run.train.budget)
        new = [folder for folder in asked if folder not in reached]
        rollouts = 0
        for folder, budget in asked.items():
            done = reached.get(folder, stored_rollouts(folder))
            rollouts += max(0, budget - done)
            reached[folder] = max(done, budget)
        rows.append({"chapter": name, "runs": len(asked), "new runs": len(new), "rollouts": rollouts,
                     "note": _adds_from_results(name, chapter_cfg)})
    table = pd.DataFrame(rows)
    measured = (rate, "given") if rate is not None else measured_rate(config)
    on_gpu = resolve_placement(config.system).device.type == "cuda"
    unit = "hours" if rate is not None else "GPU-hours" if on_gpu else "hours on this machine"
    profile = sum((arm.sets.pool_size + arm.sets.stability_problems) * arm.sets.samples
                  for arm in book_arms(config, root) if not sets_built(arm))
    return BookPlan(table, len(reached), int(table["rollouts"].sum()), *measured, unit, profile)


def _stored_alike(run: Config) -> Config:
    """The stored run that differs from `run` in ``recipe.base_lr`` alone (a rate a chapter
    chose from its results), as `run` at that rate; `run` itself where the store has none."""
    wanted = _without_rate(run.to_plain())
    prefix = run_folder(run).name.rsplit("-", 1)[0]
    for stored in sorted(run_folder(run).parent.glob(f"{prefix}-*/config.yaml")):
        saved = yaml.safe_load(stored.read_text())
        at_rate = with_overrides(run, [f"recipe.base_lr={saved['recipe']['base_lr']!r}"])
        if _without_rate(saved) == wanted and run_folder(at_rate) == stored.parent:
            return at_rate
    return run


def _without_rate(config: dict) -> dict:
    """The parts of a run's config that name it (model, sets, train, recipe), less ``recipe.base_lr``."""
    return {"model": config["model"], "sets": config["sets"], "train": {**config["train"], "budget": 0},
            "recipe": {key: value for key, value in config["recipe"].items() if key != "base_lr"}}


def _adds_from_results(name: str, config: Config) -> str:
    """What chapter `name` may train beyond its plan once it reads results."""
    if name != "02_n_versus_m" or not config.lr_envelope.extensions or not config.lr_envelope.sets:
        return ""
    _, n_values, _ = n_grid(config)
    envelope = config.lr_envelope
    most = envelope.extensions * len(n_values) * len(envelope.seeds) * len(envelope.sets)
    return f"up to {most} more runs of {config.sweep.budget:,} rollouts past a rate bracket's edge"
