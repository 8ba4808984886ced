"""Several base models and their sets built side by side (the book's arms).

    from isobook.sets.arms import prepare_arms
    prepare_arms([config, llama, misconceptions], logs=outputs / "logs")

The book trains three base models (the main one, chapter 07's second model, chapter 08's
misconception task), each followed by its sets, and every one of them is built on
one CPU thread (`base_model.BUILD_THREADS`: on CPUs whose BLAS splits long reductions
across threads, two threads would train another model). One at a time they would leave
half of this 2-core machine idle, so each unbuilt base model gets a process of its own,
all at once; three models on two cores share them. An arm built here equals one that a
chapter or ``isobook sets`` builds alone.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
import traceback
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor, wait
from contextlib import ExitStack
from pathlib import Path

from tqdm import tqdm

from isobook.config import Config
from isobook.device import resolve_placement
from isobook.store.locks import end_with_parent
from isobook.store.names import base_model_path, sets_built, sets_folder

POLL_SECONDS = 5.0  # how often the progress line reads the arms' logs


def prepare_arms(configs: Sequence[Config], logs: Path) -> None:
    """Build the base model and sets of every config in `configs` not built yet.

    Each base model, with the sets built from it, is built in a process of its own (spawned;
    its output, progress bars included, goes to ``<logs>/<sets folder name>.log``), all at
    once on the CPU, one after the other on a CUDA device (a process that ends frees the
    GPU for the chapters). One progress line here shows how far each has got. A build that
    fails, by an exception or by its process dying, ends only its own process: the others
    finish and stay stored, and then one error names every arm that failed and its log."""
    groups: dict[Path, list[Config]] = {}  # arms sharing a base model are built in one process, in turn
    seen: set[Path] = set()
    for config in configs:
        if sets_folder(config) not in seen and not sets_built(config):
            seen.add(sets_folder(config))
            groups.setdefault(base_model_path(config), []).append(config)
    if not groups:
        return
    on_cuda = resolve_placement(configs[0].system).device.type == "cuda"
    jobs = {sets_folder(group[0]).name: group for group in groups.values()}
    logs.mkdir(parents=True, exist_ok=True)
    rounds = [[name] for name in jobs] if on_cuda else [list(jobs)]
    began, failed = time.perf_counter(), {}
    with tqdm(total=len(jobs), desc=f"base models and sets ({len(rounds[0])} at once, logs in {logs})",
              unit="arm") as progress:
        for names in rounds:
            failed.update(_run_round({name: jobs[name] for name in names}, logs, progress))
    if failed:
        raise RuntimeError("building base models and sets failed: " + "; ".join(
            f"{name} ({type(error).__name__}: {error}; its log: {logs / f'{name}.log'})"
            for name, error in failed.items()))
    print(f"{len(jobs)} base models and their sets built in {time.perf_counter() - began:.0f} s, "
          f"{len(rounds[0])} at once" + ("" if on_cuda else " on one thread each"),
          file=sys.stderr)


def _run_round(jobs: dict[str, list[Config]], logs: Path, progress: tqdm) -> dict[str, BaseException]:
    """Build `jobs` at once, each in a single-worker pool of its own (so that one dying
    process breaks no other's); the failures by arm."""
    context = multiprocessing.get_context("spawn")  # torch and fork do not mix
    with ExitStack() as stack:
        futures: dict[Future, str] = {}
        for name, group in jobs.items():
            pool = stack.enter_context(ProcessPoolExecutor(max_workers=1, mp_context=context,
                                                           initializer=end_with_parent, initargs=(os.getpid(),)))
            futures[pool.submit(_build_logged, group, logs / f"{name}.log")] = name
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, timeout=POLL_SECONDS)
            progress.update(len(finished))
            progress.set_postfix_str("; ".join(f"{futures[f]}: {_last_progress(logs / f'{futures[f]}.log')}"
                                               for f in pending))
    return {name: future.exception() for future, name in futures.items() if future.exception() is not None}


def _build_logged(group: list[Config], log: Path) -> None:
    """In a worker: build `group`'s base model and sets, with stdout and stderr appended to
    `log`, a failure's traceback included (it is raised in the parent too)."""
    with open(log, "a", buffering=1) as stream:
        for standard in (sys.stdout, sys.stderr):
            standard.flush()
            os.dup2(stream.fileno(), standard.fileno())
        sys.stdout.reconfigure(line_buffering=True)  # a file is block-buffered: a crash would lose the tail
        try:
            from isobook.sets.build import prepare_sets  # the training stack, in the worker only

            for config in group:
                prepare_sets(config)
        except BaseException:
            traceback.print_exc()
            raise


def _last_progress(log: Path, size: int = 400) -> str:
    """The last progress bar `log` shows, cut to its description and count (``base model
    (0.37M params): 15%|...| 147/1000`` -> ``base model 147/1000``); empty before any."""
    if not log.is_file():
        return ""
    with open(log, "rb") as stream:
        stream.seek(max(0, log.stat().st_size - size))
        tail = stream.read().decode(errors="replace")
    lines = [line for line in tail.replace("\n", "\r").split("\r") if "|" in line]
    if not lines:
        return ""
    description, _, rest = lines[-1].partition(":")
    count = rest.split("|")[-1].split("[")[0].strip() if "|" in rest else ""
    return f"{description.split('(')[0].strip()} {count}".strip()
