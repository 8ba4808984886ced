"""Training rollouts per second of a preset's sweep grid, evaluation included.

    .venv/bin/python benchmarks/sweep_throughput.py                          # the cpu grid, 2 workers
    .venv/bin/python benchmarks/sweep_throughput.py --store /path/to/outputs "sweep.sets=[easy]"

The grid runs from scratch into a temporary outputs folder that holds only the base model,
the problem sets and the base model's scores, copied from `--store` (the model and sets
are built there first if absent, base scores are computed inside the timed sweep if
absent: `make main` leaves all three in ``outputs/``), so every run trains and evaluates. It
prints the wall time, the rollouts trained, and the share of the runs' time spent sampling
for training, updating and the rest (evaluation, checkpoints), ending with
``training rollouts/s: <x>``.

To compare two versions of isobook on the same day, run this script twice with the other
version first on the path (``PYTHONPATH=<checkout>/src``): the script only uses
`load_config`, `prepare_sets`, `run_sweep`, `sweep_configs` and `run_history`.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STORED = ("models", "sets", "base_scores")  # what the grid reuses; runs/ is left behind


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--params", default=str(ROOT / "params" / "cpu.yaml"))
    parser.add_argument("--store", default=str(ROOT / "outputs"), help="outputs folder with the base model and sets")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("overrides", nargs="*", help="key=value config overrides (sweep.sets=[easy], ...)")
    args = parser.parse_args()

    import isobook
    from isobook.config import load_config
    from isobook.sets.build import prepare_sets
    from isobook.sweeps import run_history, run_sweep, sweep_configs

    store = Path(args.store).resolve()
    prepare_sets(load_config(args.params, [*args.overrides, f"system.outputs={store}"]))
    with tempfile.TemporaryDirectory(prefix="sweep-throughput-") as scratch:
        for name in STORED:
            if (store / name).is_dir():
                shutil.copytree(store / name, Path(scratch) / name)
        config = load_config(args.params, [*args.overrides, f"system.outputs={scratch}",
                                           f"sweep.workers={args.workers}"])
        began = time.perf_counter()
        outcomes = run_sweep(config)
        wall = time.perf_counter() - began
        history = run_history(sweep_configs(config))
    if set(outcomes["status"]) != {"finished"}:
        raise SystemExit(f"not every run finished:\n{outcomes.to_string()}")
    updates = history[history["step"] > 0]
    rollouts = float(updates["step_rollouts"].sum())
    sampling, updating = float(updates["sample_seconds"].sum()), float(updates["update_seconds"].sum())
    busy = wall * args.workers  # worker-seconds the grid had
    print(f"\nisobook from {list(isobook.__path__)[0]}")
    print(f"{len(outcomes)} runs, {rollouts:,.0f} training rollouts, {args.workers} workers, {wall:.1f} s wall")
    print(f"of the workers' time: training sampling {sampling / busy:.0%}, updates {updating / busy:.0%}, "
          f"the rest (evaluation, checkpoints, start-up) {1 - (sampling + updating) / busy:.0%}")
    print(f"seconds in the runs: training sampling {sampling:.1f}, updates {updating:.1f}")
    print(f"training rollouts/s: {rollouts / wall:.1f}")


if __name__ == "__main__":
    main()
