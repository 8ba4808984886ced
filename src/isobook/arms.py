"""Several base models and their sets built side by side (the book's arms).

    from isobook.arms import prepare_arms
    prepare_arms([config, knob_on, llama], logs=outputs / "logs")

The book trains up to three base models (the main one, chapter 04's with the knob on,
chapter 07's second model), each followed by its sets. One at a time, each on both cores,
they leave a third of the machine idle: on this 2-core machine a 2048^3 fp32 matmul runs at
95 GFLOP/s on two threads of one process and at 128 GFLOP/s in two one-thread processes
(2026-12-02). So each unbuilt arm gets a process of its own, with the CPUs shared out as
``system.threads``. The weights and sets do not depend on the threads (a test rebuilds the
smoke sets on one thread, byte for byte), so an arm built here equals one a chapter builds.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
import traceback
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, wait
from dataclasses import replace
from pathlib import Path

from tqdm import tqdm

from isobook.config import Config
from isobook.device import resolve_placement
from isobook.locks import end_with_parent
from isobook.names import base_model_path, sets_built, sets_folder

POLL_SECONDS = 5.0  # how often the progress line reads the arms' logs


def prepare_arms(configs: Sequence[Config], logs: Path) -> None:
    """Build the base model and sets of every config in `configs` not built yet.

    On a CUDA device, or with one arm to build, they are built one after the other in this
    process. Otherwise each base model (with the sets built from it) gets a process whose
    output, progress bars included, goes to ``<logs>/<sets folder name>.log``; one progress
    line here shows how far each has got. A build that fails raises here once the others
    have ended; whatever they finished stays stored."""
    groups: dict[Path, list[Config]] = {}  # arms sharing a base model are built in one process, in turn
    seen: set[Path] = set()
    for config in configs:
        if sets_folder(config) not in seen and not sets_built(config):
            seen.add(sets_folder(config))
            groups.setdefault(base_model_path(config), []).append(config)
    if not groups:
        return
    if len(groups) == 1 or resolve_placement(configs[0].system).device.type == "cuda":
        for group in groups.values():
            _build(group)
        return
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    threads = max(1, cpus // len(groups))
    logs.mkdir(parents=True, exist_ok=True)
    jobs = {sets_folder(group[0]).name: [replace(c, system=replace(c.system, threads=threads)) for c in group]
            for group in groups.values()}
    context = multiprocessing.get_context("spawn")  # torch and fork do not mix
    began = time.perf_counter()
    with ProcessPoolExecutor(max_workers=len(jobs), mp_context=context, initializer=end_with_parent,
                             initargs=(os.getpid(),)) as pool, \
            tqdm(total=len(jobs), desc=f"base models and sets ({len(jobs)} at once, logs in {logs})",
                 unit="arm") as progress:
        futures = {pool.submit(_build_logged, group, logs / f"{name}.log"): name for name, group in jobs.items()}
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, timeout=POLL_SECONDS)
            progress.update(len(finished))
            progress.set_postfix_str("; ".join(f"{futures[f]}: {_last_progress(logs / f'{futures[f]}.log')}"
                                               for f in pending))
    for future, name in futures.items():
        if future.exception() is not None:
            raise RuntimeError(f"building {name} failed (its log: {logs / f'{name}.log'})") from future.exception()
    print(f"{len(jobs)} base models and their sets built side by side in {time.perf_counter() - began:.0f} s "
          f"({threads} thread{'s' if threads > 1 else ''} each)", file=sys.stderr)


def _build(group: list[Config]) -> None:
    from isobook.pipeline import prepare_sets  # the training stack, imported only when something must train

    for config in group:
        prepare_sets(config)


def _build_logged(group: list[Config], log: Path) -> None:
    """In a worker: `_build` with stdout and stderr appended to `log`, a failure's traceback
    included (it is raised in the parent too)."""
    with open(log, "a", buffering=1) as stream:
        os.dup2(stream.fileno(), 1)
        os.dup2(stream.fileno(), 2)
        try:
            _build(group)
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
