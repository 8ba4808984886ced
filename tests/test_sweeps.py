"""Sweeps on the smoke preset: the grid, the local executor, a failing run, Ray, a killed sweep."""

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest
import torch

from isobook.config import ConfigError, load_config
from isobook.grpo.run import problems_of
from isobook.grpo.skills import step_skills
from isobook.grpo.transfer import transfer_counts
from isobook.sets.build import load_set, stored_sets
from isobook.store.names import run_folder
from isobook.tasks import make_task
from isobook.sweeps import (
    grid_run,
    misconception_arms,
    n_grid,
    run_configs,
    run_counts,
    run_history,
    run_points,
    run_sweep,
    run_train_pass,
    sweep_configs,
    sweep_points,
)
from isobook.sweeps.execute import local_workers

from conftest import SMOKE, smoke_config

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


def test_results_do_not_depend_on_the_number_of_workers(smoke_outputs: Path, tmp_path: Path) -> None:
    histories = []
    for workers in (1, 2):
        outputs = tmp_path / f"workers-{workers}"
        shutil.copytree(smoke_outputs, outputs)
        config = smoke_config(outputs, *GRID, f"sweep.workers={workers}")
        assert run_sweep(config, show_progress=False)["status"].tolist() == ["finished"] * 3
        history = run_history(sweep_configs(config))
        histories.append(history.drop(columns=[c for c in history.columns if c.endswith("_seconds")]))
    assert len(histories[0]) > 3 and "val_avg@4" in histories[0]
    pd.testing.assert_frame_equal(*histories)  # every metric of every update, to the bit


def test_runs_start_longest_first(outputs_with_sets: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = smoke_config(outputs_with_sets, *GRID)
    configs = sweep_configs(config)  # (2, 2), (2, 4), (4, 2), 64 rollouts each
    started = run_folder(configs[0])  # 48 of its 64 rollouts already trained: 16 left
    started.mkdir(parents=True)
    (started / "status.json").write_text(json.dumps({"status": "finished", "updates": 12, "rollouts": 48}))
    submitted = []

    def record(runs, config, show_progress):
        submitted.extend((run.train.batch_problems, run.train.rollouts_per_problem) for run in runs)
        return [{"status": "finished", "reason": f"{run.train.batch_problems}x{run.train.rollouts_per_problem}"}
                for run in runs]

    monkeypatch.setattr("isobook.sweeps.execute._run_locally", record)
    outcomes = run_configs(configs, config, show_progress=False)
    assert submitted == [(2, 4), (4, 2), (2, 2)]
    assert outcomes[["batch_problems", "n", "reason"]].values.tolist() == [[2, 2, "2x2"], [2, 4, "2x4"],
                                                                          [4, 2, "4x2"]]


def test_workers_default_to_the_cpus_over_threads_per_run_and_to_one_on_a_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    cpus = len(os.sched_getaffinity(0))
    assert local_workers(load_config(None, ["system.device=cpu"])) == cpus
    assert local_workers(load_config(None, ["system.device=cpu", "sweep.threads_per_worker=2"])) == max(1, cpus // 2)
    assert local_workers(load_config(None, ["sweep.workers=3"])) == 3
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # auto resolves to a CUDA device
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: True)
    assert local_workers(load_config(None, [])) == 1


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


def test_a_sweep_on_a_two_node_ray_cluster_started_by_ray_start(outputs_with_sets: Path) -> None:
    """A head node with no CPUs for tasks and a second node joined to it (`ray start`, as on
    two machines sharing `outputs/`, the cluster's token on every node and the driver):
    `isobook sweep` goes through ``sweep.ray_address``, every run executes on the second
    node, and all of them are in the shared store."""
    pytest.importorskip("ray")
    ray_command = str(Path(sys.executable).with_name("ray"))
    port = 20000 + os.getpid() % 20000
    environment = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token",
                   "RAY_AUTH_TOKEN": secrets.token_hex(16)}  # Ray reads these when it starts, in every process
    common = ["--disable-usage-stats", "--node-ip-address=127.0.0.1"]
    sockets = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # short: Ray's socket paths must fit 107 bytes
    overrides = [f"system.outputs={outputs_with_sets}", *GRID, "sweep.executor=ray",
                 f"sweep.ray_address=127.0.0.1:{port}", "sweep.threads_per_worker=1"]
    try:
        for node in (["--head", f"--port={port}", "--num-cpus=0", f"--temp-dir={sockets}", "--include-dashboard=false"],
                     [f"--address=127.0.0.1:{port}", "--num-cpus=2"]):
            subprocess.run([ray_command, "start", *node, *common], env=environment, check=True, capture_output=True,
                           timeout=180)
        sweep = subprocess.run([sys.executable, "-m", "isobook.cli", "sweep", "--params", str(SMOKE), *overrides],
                               env=environment, capture_output=True, text=True, timeout=600)
    finally:
        subprocess.run([ray_command, "stop", "--force"], env=environment, capture_output=True, timeout=120)
        shutil.rmtree(sockets, ignore_errors=True)
    assert sweep.returncode == 0, sweep.stderr[-2000:]
    assert "sweep: 3 of 3 runs finished" in sweep.stdout
    config = smoke_config(outputs_with_sets, *GRID)
    assert all((run_folder(run) / "status.json").is_file() for run in sweep_configs(config))
    assert len(sweep_points(config).groupby(["batch_problems", "n"])) == 3


def test_runs_off_the_grid_share_the_store_carry_labels_and_score_on_other_sets(outputs_with_sets: Path) -> None:
    config = smoke_config(outputs_with_sets, *GRID, "evaluation.train_pass_rollouts=[0, 64]",
                          "evaluation.train_pass_problems=8")
    on_grid = grid_run(config, "easy", 2, 2)
    assert run_folder(on_grid) == run_folder(sweep_configs(config)[0])
    # The easy preset spelled out is the same run; a smaller training set is another.
    assert run_folder(grid_run(config, "easy", 2, 2, ["recipe.regularisers=kl+entropy"])) == run_folder(on_grid)
    small = grid_run(config, "easy", 2, 2, ["train.data_size=3"])
    assert run_folder(small) != run_folder(on_grid)
    assert grid_run(config, "easy", 2, 2, seed=5).train.seed == 5 and on_grid.train.seed == config.sweep.seeds[0]
    arms = misconception_arms(config)
    chain = arms["misconceptions 12"].task.chain
    assert list(arms) == ["misconceptions 0", "misconceptions 12"] and arms["misconceptions 0"] is config
    assert (chain.misconceptions, chain.misconception_slip, chain.slip_carry) == (12, 0.85, 0.3)
    with pytest.raises(ConfigError, match=r"misconceptions.kinds: the arm needs a number of misconceptions unlike "
                                          r"task.chain.misconceptions \(12\)"):
        misconception_arms(smoke_config(outputs_with_sets, "task.chain.misconceptions=12"))
    assert run_configs([on_grid, small], config, show_progress=False)["status"].tolist() == ["finished"] * 2

    history = run_history([on_grid, small], [{"data": "all"}, {"data": "3"}])
    assert list(history.columns[:5]) == ["set", "batch_problems", "n", "seed", "data"]
    assert history.groupby("data")["step"].max().to_dict() == {"3": 16, "all": 16}  # 64 / (2 * 2) updates
    train_pass = run_train_pass([on_grid, small])
    per_measurement = train_pass.groupby(["rollouts"])["id"].count().to_dict()
    assert per_measurement == {0: 8 + 3, 64: 8 + 3}  # the small run measures its 3 problems only
    assert train_pass["pass_at_1"].between(0, 1).all()

    # Scored again from the saved policies, the base model and the run match their own evaluations
    # problem by problem (every policy draws with the run's evaluation seed).
    own_counts = run_counts([on_grid], "validation")
    counts = transfer_counts([on_grid], ["easy", "hard"])
    assert set(counts["set"]) == {"easy", "hard"} and set(counts["run"]) == {"base", run_folder(on_grid).name}
    for step, run in ((0, "base"), (own_counts["step"].max(), run_folder(on_grid).name)):
        own = own_counts[own_counts["step"] == step].set_index("id")["correct"].sort_index()
        again = counts[(counts["run"] == run) & (counts["set"] == "easy")].set_index("id")["correct"].sort_index()
        pd.testing.assert_series_equal(again, own, check_dtype=False, check_names=False)
    assert sorted(own_counts["step"].unique()) == sorted(run_points([on_grid], 4)["step"].unique())
    # Scored once: a planted cache entry for the unchanged policy is what comes back.
    kept = next(run_folder(on_grid).glob("transfer-hard-*.json"))
    planted = json.loads(kept.read_text())
    kept.write_text(json.dumps({**planted, "correct": [4] * len(planted["correct"])}))
    again = transfer_counts([on_grid], ["hard"])
    assert again.loc[again["run"] == run_folder(on_grid).name, "correct"].eq(4).all()

    # Carry-step skills of the same policies on the hard set: one row per carry step of its
    # validation problems for each, the probabilities kept beside the transfer counts.
    skills = step_skills([on_grid], "hard")
    task = make_task(config.task)
    problems = problems_of(load_set(stored_sets(config), "hard")["validation"])[: config.evaluation.validation_problems]
    steps = sum(len(task.carry_steps(problem.prompt)) for problem in problems)
    assert skills.groupby("run").size().to_dict() == {"base": steps, run_folder(on_grid).name: steps}
    assert skills["p_right"].between(0, 1).all() and not skills["misconceived"].any()  # the smoke task has none
    kept = next(run_folder(on_grid).glob("skills-hard-r*.parquet"))
    pd.read_parquet(kept).assign(p_right=0.5).to_parquet(kept)
    assert step_skills([on_grid], "hard").query("run != 'base'")["p_right"].eq(0.5).all()  # read, not scored again


def _children(pid: int) -> set[int]:
    """The processes whose parent is `pid` (Linux /proc)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended while we looked
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads processes from Linux's /proc")
def test_workers_end_when_their_sweep_is_killed(outputs_with_sets: Path) -> None:
    command = [sys.executable, "-m", "isobook.cli", "sweep", "--params", "params/smoke.yaml",
               f"system.outputs={outputs_with_sets}", "sweep.sets=[easy]", "sweep.batch_problems=[2]",
               "sweep.rollouts_per_problem=[2, 4]", "sweep.budget=65536", "sweep.workers=2"]
    sweep = subprocess.Popen(command, cwd=Path(__file__).resolve().parents[1], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not list((outputs_with_sets / "runs").glob("*/status.json")):
            assert sweep.poll() is None, "the sweep ended before it could be killed"
            time.sleep(0.2)
        workers = _children(sweep.pid)
        assert len(workers) >= 2  # two workers (and multiprocessing's resource tracker)
        sweep.send_signal(signal.SIGKILL)
        sweep.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(pid) for pid in workers):
            time.sleep(0.2)
        assert not [pid for pid in workers if _alive(pid)], "workers outlived their sweep"
    finally:
        for pid in (sweep.pid, *workers):  # nothing left training if the test failed
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        sweep.wait()


def test_the_n_grid_keeps_the_n_within_b_max_and_the_budgets_every_n_reaches() -> None:
    default = n_grid(load_config(None))
    assert default == (8, [4, 8, 16, 32], [512, 1024, 2048, 4096])  # chapters 04 and 07 on the cpu preset
    narrow = n_grid(load_config(None, ["sweep.batch_problems=[16, 8]", "evaluation.first_rollouts=128"]))
    assert narrow == (16, [4, 8, 16], [256, 512, 1024, 2048, 4096])  # 16 x 32 > max_batch; 16 x 16 = 256


def test_reading_stored_runs_does_not_import_the_training_stack() -> None:
    """A chapter whose runs are all stored calls `run_configs`, which reads their status
    only: importing `isobook.sweeps` leaves datasets, the pipeline, the base model and the
    trainer out."""
    probe = ("import sys, isobook.sweeps\n"
             "print([name for name in ('datasets', 'isobook.sets.build', 'isobook.model.pretrain', 'isobook.grpo.run',"
             " 'isobook.grpo.trainer') if name in sys.modules])")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
