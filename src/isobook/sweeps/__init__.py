"""Sweeps: a grid of GRPO runs (paper section 5), built (`grid`), executed on this machine
or on a Ray cluster (`execute`), and read back from the run store (`results`).

    from isobook.config import load_config
    from isobook.sweeps import (grid_run, run_configs, run_history, run_points, run_sweep, sweep_configs,
                                sweep_points)
    config = load_config("params/cpu.yaml", ["sweep.rollouts_per_problem=[4, 8, 16]"])
    outcomes = run_sweep(config)         # one row per run: its folder, status, reason
    points = sweep_points(config)        # every evaluation point of every finished run
    subset = [c for c in sweep_configs(config) if c.train.batch_rollouts == 128]
    run_configs(subset, config); run_points(subset, config.evaluation.k)   # part of a grid
    ablation = [grid_run(config, "easy", 8, 16, ["recipe.regularisers=none"])]   # off the grid
    run_configs(ablation, config); run_history(ablation, [{"recipe": "none"}])  # every update
"""

from isobook.sweeps.execute import execute_run, run_configs, run_sweep
from isobook.sweeps.grid import (
    GRID_COLUMNS,
    grid_row,
    grid_run,
    misconception_arms,
    model_arms,
    n_grid,
    sweep_configs,
)
from isobook.sweeps.results import mean_over_seeds, run_counts, run_history, run_points, run_train_pass, sweep_points

__all__ = ["GRID_COLUMNS", "execute_run", "grid_row", "grid_run", "mean_over_seeds", "misconception_arms",
           "model_arms", "n_grid", "run_configs", "run_counts", "run_history", "run_points", "run_sweep",
           "run_train_pass", "sweep_configs", "sweep_points"]
