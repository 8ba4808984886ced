"""Sweeps on the smoke preset: the grid, the local executor, a failing run, Ray."""

from pathlib import Path

import pytest

from conftest import smoke_config
from isobook.config import ConfigError, load_config
from isobook.run_store import run_folder
from isobook.sweeps import run_sweep, sweep_configs, sweep_points

# 2x2 grid with B_max = 8: (2, 2), (2, 4), (4, 2); (4, 4) is over B_max.
GRID = ("sweep.sets=[easy]", "sweep.batch_problems=[2, 4]", "sweep.rollouts_per_problem=[2, 4]",
        "sweep.max_batch=8", "sweep.budget=64", "evaluation.first_rollouts=16", "evaluation.validation_problems=8",
        "evaluation.train_pass_rollouts=[]", "sweep.workers=2")


def test_the_grid_respects_b_max_and_the_run_settings(tmp_path: Path) -> None:
    config = smoke_config(tmp_path, *GRID, "sweep.seeds=[0, 1]", "sweep.threads_per_worker=1")
    configs = sweep_configs(config)
    points = [(c.train.batch_problems, c.train.rollouts_per_problem, c.train.seed) for c in configs]
    assert points == [(2, 2, 0), (2, 2, 1), (2, 4, 0), (2, 4, 1), (4, 2, 0), (4, 2, 1)]
    assert {c.train.budget for c in configs} == {64} and {c.system.threads for c in configs} == {1}
    assert all(Path(c.system.outputs).is_absolute() for c in configs)
    assert len({run_folder(c) for c in configs}) == len(configs)


@pytest.mark.parametrize(("override", "message"), [
    ("sweep.batch_problems=[3, 4]", r"sweep.batch_problems: needs powers of two, got \[3, 4\]"),
    ("sweep.sets=[easy, medium]", r"sweep.sets: 'medium' is not a problem set"),
    ("sweep.executor=slurm", r"sweep.executor: 'slurm' is not allowed; allowed: local, ray"),
])
def test_bad_grids_fail_naming_the_field(override: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(None, [override])


def test_a_local_sweep_runs_every_point_and_survives_a_failing_run(outputs_with_sets: Path) -> None:
    config = smoke_config(outputs_with_sets, *GRID)
    broken = run_folder(sweep_configs(config)[1])
    broken.mkdir(parents=True)
    (broken / "state.pt").write_bytes(b"not a checkpoint")  # a corrupt file makes that run raise
    outcomes = run_sweep(config, show_progress=False)
    assert outcomes[["batch_problems", "n"]].values.tolist() == [[2, 2], [2, 4], [4, 2]]
    assert outcomes["status"].tolist() == ["finished", "error", "finished"]
    assert "state.pt: unreadable checkpoint" in outcomes["reason"].iloc[1]
    points = sweep_points(config)
    assert sorted(points.groupby(["batch_problems", "n"]).size().index.tolist()) == [(2, 2), (4, 2)]
    assert points.groupby(["batch_problems", "n"])["rollouts"].max().tolist() == [64.0, 64.0]
    assert {"val_avg@4", "val_best@4", "val_worst@4"} <= set(points.columns)
    # Rerunning reuses the finished runs; only the repaired one trains.
    (broken / "state.pt").unlink()
    again = run_sweep(config, show_progress=False)
    assert again["status"].tolist() == ["finished"] * 3


def test_a_sweep_on_a_local_ray_cluster(outputs_with_sets: Path) -> None:
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        config = smoke_config(outputs_with_sets, *GRID, "sweep.executor=ray")
        outcomes = run_sweep(config, show_progress=False)
    finally:
        ray.shutdown()
    assert outcomes["status"].tolist() == ["finished"] * 3
    assert len(sweep_points(config).groupby(["batch_problems", "n"])) == 3
