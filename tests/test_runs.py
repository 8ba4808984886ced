"""Whole GRPO runs on the smoke preset: the run store never loses or redoes work.

* a run killed with SIGKILL resumes from its checkpoint and ends with the same metrics as
  an uninterrupted run with the same seed;
* a finished run extended from budget C to 2C equals a single 2C run, and keeps the
  policy trained to C for studies that ask for C;
* a finished run asked again is returned without work;
* one evaluation point per doubling scores the same as two where both evaluate, and
  trains the same;
* a run whose loss stops being finite ends as failed, with the reason recorded;
* two processes asking for one run at once train it once;
* a greedy sampling config is refused before any work.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from isobook.config import ConfigError
from isobook.grpo.run import run_grpo
from isobook.grpo.transfer import transfer_counts
from isobook.store.atomic import StoreError
from isobook.store.runs import policy_at
from isobook.sweeps import run_counts

from conftest import smoke_config

# Tiny but real: 16 rollouts per update, 32 updates, evaluation every half doubling from 64.
RUN = ("train.set=easy", "train.batch_problems=4", "train.rollouts_per_problem=4", "evaluation.first_rollouts=64",
       "evaluation.points_per_doubling=2",
       "evaluation.validation_problems=20", "evaluation.train_pass_rollouts=[0, 256]",
       "evaluation.train_pass_problems=16", "evaluation.checkpoint_every=4", "recipe.base_lr=1e-3")
BUDGET = 512
TIMING = ["sample_seconds", "update_seconds", "eval_seconds"]


def comparable(metrics: pd.DataFrame) -> pd.DataFrame:
    """Metrics without wall-clock columns."""
    return metrics.drop(columns=TIMING).reset_index(drop=True)


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory: pytest.TempPathFactory, smoke_outputs: Path):
    """One uninterrupted run of BUDGET rollouts."""
    outputs = tmp_path_factory.mktemp("reference")
    for part in ("models", "sets"):
        os.symlink(smoke_outputs / part, outputs / part)
    return run_grpo(smoke_config(outputs, *RUN, f"train.budget={BUDGET}"), show_progress=False)


def test_a_run_logs_every_update_and_evaluates_on_the_schedule(reference_run) -> None:
    metrics = reference_run.metrics
    assert reference_run.status == "finished" and reference_run.updates_made == 32
    assert list(metrics["step"]) == list(range(33))
    assert list(metrics["rollouts"]) == [16.0 * s for s in range(33)]
    assert (metrics["tokens"].diff().dropna() > 0).all()
    evaluated = metrics.dropna(subset=["val_avg@4"])
    # 64 * 2**(i/2) rollouts -> updates 4, 6, 8, 12, 16, 23, 32 (first update reaching each point), and 0.
    assert list(evaluated["step"]) == [0, 4, 6, 8, 12, 16, 23, 32]
    assert ((evaluated["val_worst@4"] <= evaluated["val_avg@4"]) & (evaluated["val_avg@4"] <= evaluated["val_best@4"])).all()
    trained = metrics.iloc[1:]
    # smoke's warm-up: 64 rollouts, 4 updates of 16
    peak = 1e-3 * (16 / 128) ** 0.5  # smoke's base_lr at B = 16 under the sqrt rule, reference batch 128
    assert trained["lr"].iloc[:4].tolist() == pytest.approx([peak * (i + 1) / 4 for i in range(4)])
    assert trained["lr"].iloc[4:].eq(trained["lr"].iloc[-1]).all()  # constant after warm-up
    for column in ("reward", "entropy", "kl", "zero_variance_fraction", "response_length", "grad_norm"):
        assert trained[column].notna().all(), column
    assert trained["kl"].iloc[0] == pytest.approx(0.0, abs=1e-9)  # the policy is the base model at update 1
    assert trained["kl"].iloc[-1] > 0
    passes = pd.read_parquet(reference_run.folder / "train_pass.parquet")
    assert sorted(passes["step"].unique()) == [0, 16] and len(passes) == 32
    # Per-problem validation counts at every evaluation, of which val_avg@4 is the mean.
    counts = pd.read_parquet(reference_run.folder / "validation.parquet")
    assert counts.groupby("step")["id"].count().to_dict() == {s: 20 for s in evaluated["step"]}
    means = (counts["correct"] / counts["samples"]).groupby(counts["step"]).mean()
    assert means.tolist() == pytest.approx(evaluated["val_avg@4"].tolist())
    status = json.loads((reference_run.folder / "status.json").read_text())
    assert (status["status"], status["updates"], status["rollouts"]) == ("finished", 32, BUDGET)
    assert (reference_run.folder / "policy" / "model.safetensors").is_file()


def test_fewer_evaluation_points_leave_every_other_score_and_the_training_unchanged(reference_run,
                                                                                  outputs_with_sets: Path) -> None:
    """Each evaluation draws with the same seed and training draws by update, so one point
    per doubling gives exactly the half-doubling schedule's scores at the doublings."""
    sparse = run_grpo(smoke_config(outputs_with_sets, *RUN, f"train.budget={BUDGET}", "evaluation.points_per_doubling=1"),
                      show_progress=False)
    evaluated = sparse.metrics.dropna(subset=["val_avg@4"])
    assert list(evaluated["step"]) == [0, 4, 8, 16, 32]  # 64, 128, 256 and 512 rollouts
    dense, scores = comparable(reference_run.metrics), ["val_avg@4", "val_best@4", "val_worst@4"]
    pd.testing.assert_frame_equal(comparable(sparse.metrics).drop(columns=scores), dense.drop(columns=scores))
    pd.testing.assert_frame_equal(comparable(evaluated).set_index("step"),
                                  dense.set_index("step").loc[evaluated["step"]])
    counts = pd.read_parquet(reference_run.folder / "validation.parquet")
    pd.testing.assert_frame_equal(pd.read_parquet(sparse.folder / "validation.parquet"),
                                  counts[counts["step"].isin(evaluated["step"])].reset_index(drop=True))
    pd.testing.assert_frame_equal(pd.read_parquet(sparse.folder / "train_pass.parquet"),
                                  pd.read_parquet(reference_run.folder / "train_pass.parquet"))


def test_the_base_models_scores_are_computed_once_and_shared(reference_run, outputs_with_sets: Path) -> None:
    cached = list((reference_run.folder.parents[1] / "base_scores").glob("easy-s0-*.json"))
    assert len(cached) == 1
    stored = json.loads(cached[0].read_text())
    assert stored["scores"]["val_avg@4"] == reference_run.metrics["val_avg@4"].iloc[0]
    train_pass = pd.read_parquet(reference_run.folder / "train_pass.parquet")
    assert train_pass[train_pass["step"] == 0]["correct"].tolist() == [r["correct"] for r in stored["train_pass"]]
    # Another recipe on the same set starts from the same cached scores; it never recomputes them.
    (outputs_with_sets / "base_scores").mkdir()
    planted = {**stored, "scores": {**stored["scores"], "val_avg@4": 0.123}}
    (outputs_with_sets / "base_scores" / cached[0].name).write_text(json.dumps(planted))
    other = run_grpo(smoke_config(outputs_with_sets, *RUN, "train.budget=16", "recipe.regularisers=none"),
                     show_progress=False)
    assert other.metrics["val_avg@4"].iloc[0] == 0.123


def test_asking_again_returns_the_stored_run_without_work(reference_run) -> None:
    outputs = reference_run.folder.parents[1]
    again = run_grpo(smoke_config(outputs, *RUN, f"train.budget={BUDGET}"), show_progress=False)
    assert again.updates_made == 0 and again.folder == reference_run.folder
    pd.testing.assert_frame_equal(again.metrics, reference_run.metrics)
    smaller = run_grpo(smoke_config(outputs, *RUN, f"train.budget={BUDGET // 2}"), show_progress=False)
    assert smaller.updates_made == 0


def test_extending_c_to_2c_equals_one_2c_run(reference_run, outputs_with_sets: Path) -> None:
    shorter = smoke_config(outputs_with_sets, *RUN, f"train.budget={BUDGET // 2}")
    first = run_grpo(shorter, show_progress=False)
    assert first.updates_made == 16 and first.folder.name == reference_run.folder.name
    weights_at_c = (first.folder / "policy" / "model.safetensors").read_bytes()
    transfer_counts([shorter], ["easy"])  # scored at C, the scores kept beside the run
    scores_at_c = next(first.folder.glob("transfer-easy-*.json"))
    planted = json.loads(scores_at_c.read_text())
    scores_at_c.write_text(json.dumps({**planted, "correct": [4] * len(planted["correct"])}))
    extended = run_grpo(smoke_config(outputs_with_sets, *RUN, f"train.budget={BUDGET}"), show_progress=False)
    assert extended.updates_made == 16
    pd.testing.assert_frame_equal(comparable(extended.metrics), comparable(reference_run.metrics))
    for table in ("train_pass.parquet", "validation.parquet"):
        pd.testing.assert_frame_equal(pd.read_parquet(extended.folder / table),
                                      pd.read_parquet(reference_run.folder / table))
    # The policy trained to C is kept, and a study asking for C scores it, not the one at 2C.
    assert policy_at(extended.folder, BUDGET // 2) == extended.folder / "policies" / str(BUDGET // 2)
    assert (extended.folder / "policies" / str(BUDGET // 2) / "model.safetensors").read_bytes() == weights_at_c
    assert policy_at(extended.folder, BUDGET) == extended.folder / "policy"
    assert (extended.folder / "policy" / "model.safetensors").read_bytes() != weights_at_c
    # The scores at C moved with the policy and are reused (the planted 4s come back).
    assert not list(extended.folder.glob("transfer-*.json"))
    kept_scores = extended.folder / "policies" / str(BUDGET // 2) / scores_at_c.name
    at_c = transfer_counts([shorter], ["easy"])
    assert kept_scores.is_file() and at_c.loc[at_c["run"] != "base", "correct"].eq(4).all()
    assert set(at_c.loc[at_c["run"] != "base", "rollouts"]) == {BUDGET // 2}
    kept_scores.unlink()  # scored afresh, the kept policy gives the run's own evaluation at C, problem by problem
    at_c = transfer_counts([shorter], ["easy"])
    own = run_counts([shorter], "validation")
    own = own[own["rollouts"] == BUDGET // 2].set_index("id")["correct"].sort_index()
    again = at_c[at_c["run"] != "base"].set_index("id")["correct"].sort_index()
    pd.testing.assert_series_equal(again, own, check_dtype=False, check_names=False)


def test_a_run_finished_without_its_optimizer_keeps_its_policy_and_refuses_a_larger_budget(
        reference_run, outputs_with_sets: Path) -> None:
    """``system.keep_optimizer=false``: the same run and numbers, its weights once (in
    policy/), state.pt the rows alone; a larger budget names the field instead of resuming
    with a fresh optimizer."""
    import torch
    from safetensors.torch import load_file

    lean = run_grpo(smoke_config(outputs_with_sets, *RUN, f"train.budget={BUDGET}", "system.keep_optimizer=false"),
                    show_progress=False)
    assert lean.folder.name == reference_run.folder.name
    pd.testing.assert_frame_equal(comparable(lean.metrics), comparable(reference_run.metrics))
    weights = [load_file(run.folder / "policy" / "model.safetensors") for run in (lean, reference_run)]
    torch.testing.assert_close(*weights)  # the same updates in the same order: fp32 rounding at most
    saved = torch.load(lean.folder / "state.pt", weights_only=False)
    assert "model" not in saved and "optimizer" not in saved and saved["steps"] == BUDGET // 16
    with pytest.raises(StoreError, match=r"finished without its optimizer state \(system.keep_optimizer=false\)"):
        run_grpo(smoke_config(outputs_with_sets, *RUN, f"train.budget={2 * BUDGET}"), show_progress=False)


def test_a_study_asking_for_a_budget_the_run_never_stopped_at_is_refused(reference_run) -> None:
    outputs = reference_run.folder.parents[1]
    with pytest.raises(StoreError, match=rf"holds no policy trained to {BUDGET // 2} rollouts.*finished at {BUDGET}"):
        transfer_counts([smoke_config(outputs, *RUN, f"train.budget={BUDGET // 2}")], ["easy"])


def test_a_killed_run_resumes_to_the_same_metrics(reference_run, outputs_with_sets: Path) -> None:
    overrides = [f"system.outputs={outputs_with_sets}", *RUN, f"train.budget={BUDGET}"]
    command = [sys.executable, "-m", "isobook.cli", "train", "--params", "params/smoke.yaml", *overrides]
    status_file = outputs_with_sets / "runs" / reference_run.folder.name / "status.json"
    process = subprocess.Popen(command, cwd=Path(__file__).resolve().parents[1], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and process.poll() is None:
            if status_file.is_file() and json.loads(status_file.read_text())["updates"] >= 8:
                break
            time.sleep(0.05)
        assert process.poll() is None, "the run ended before it could be killed"
        process.send_signal(signal.SIGKILL)
        process.wait()
    finally:
        if process.poll() is None:
            process.kill()
    killed_at = json.loads(status_file.read_text())
    assert killed_at["status"] == "running" and 8 <= killed_at["updates"] < 32
    resumed = run_grpo(smoke_config(outputs_with_sets, *RUN, f"train.budget={BUDGET}"), show_progress=False)
    assert resumed.updates_made == 32 - killed_at["updates"]
    pd.testing.assert_frame_equal(comparable(resumed.metrics), comparable(reference_run.metrics))
    pd.testing.assert_frame_equal(pd.read_parquet(resumed.folder / "validation.parquet"),
                                  pd.read_parquet(reference_run.folder / "validation.parquet"))


def test_two_processes_asking_for_one_run_train_it_once(reference_run, outputs_with_sets: Path) -> None:
    command = [sys.executable, "-m", "isobook.cli", "train", "--params", "params/smoke.yaml",
               f"system.outputs={outputs_with_sets}", *RUN, f"train.budget={BUDGET}"]
    processes = [subprocess.Popen(command, cwd=Path(__file__).resolve().parents[1], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True) for _ in range(2)]
    outputs = [process.communicate(timeout=600)[0] for process in processes]
    assert [process.returncode for process in processes] == [0, 0]
    made = sorted(int(re.search(r"run finished \((\d+) updates", text).group(1)) for text in outputs)
    assert made == [0, 32]  # one trained all 32 updates, the other waited and found the run finished
    assert any("waiting for it" in text for text in outputs)
    stored = run_grpo(smoke_config(outputs_with_sets, *RUN, f"train.budget={BUDGET}"), show_progress=False)
    assert stored.updates_made == 0
    pd.testing.assert_frame_equal(comparable(stored.metrics), comparable(reference_run.metrics))


SHORT = ("evaluation.validation_problems=8", "evaluation.train_pass_rollouts=[]", "evaluation.first_rollouts=64")


def test_without_a_kl_weight_no_reference_runs_and_nothing_else_changes(outputs_with_sets: Path) -> None:
    """On hard the KL weight is 0: measuring the KL anyway (track_kl) costs a reference
    forward pass and changes no other number of the run (the pass draws no random numbers)."""
    shape = ("train.set=hard", "train.batch_problems=2", "train.rollouts_per_problem=4", "train.budget=64", *SHORT)
    off = run_grpo(smoke_config(outputs_with_sets, *shape), show_progress=False)
    on = run_grpo(smoke_config(outputs_with_sets, *shape, "recipe.track_kl=true"), show_progress=False)
    assert off.folder != on.folder
    trained_off, trained_on = off.metrics.iloc[1:], on.metrics.iloc[1:]
    assert trained_off["kl"].isna().all() and trained_on["kl"].notna().all()
    pd.testing.assert_frame_equal(comparable(off.metrics).drop(columns="kl"), comparable(on.metrics).drop(columns="kl"))


def test_the_decoupled_baseline_follows_the_n_train_runs_learning_rates_update_by_update(
        outputs_with_sets: Path) -> None:
    """Decoupled n = 8 / n_train = 2 against n = 2 at equal M: the same gradient batch, so
    the same peak learning rate and warm-up, while it samples four times the rollouts."""
    shape = ("train.set=easy", "train.batch_problems=2", *SHORT)
    decoupled = run_grpo(smoke_config(outputs_with_sets, *shape, "train.rollouts_per_problem=8", "train.n_train=2",
                                      "train.budget=256"), show_progress=False)
    small = run_grpo(smoke_config(outputs_with_sets, *shape, "train.rollouts_per_problem=2", "train.budget=64"),
                     show_progress=False)
    assert decoupled.updates_made == small.updates_made == 16
    assert decoupled.metrics["rollouts"].iloc[-1] == 4 * small.metrics["rollouts"].iloc[-1] == 256
    lr = decoupled.metrics["lr"].iloc[1:].to_numpy()
    assert lr.tolist() == small.metrics["lr"].iloc[1:].tolist()
    peak = 2e-4 * (4 / 128) ** 0.5  # base_lr scaled by sqrt(B_p * n_train / reference_batch)
    assert lr.tolist() == pytest.approx([peak * min(1.0, (step + 1) * 4 / 64) for step in range(16)])


def test_a_diverging_run_stops_with_its_reason(outputs_with_sets: Path) -> None:
    config = smoke_config(outputs_with_sets, *RUN, "recipe.base_lr=1e30", "recipe.warmup_rollouts=0",
                          "recipe.grad_clip=0", f"train.budget={BUDGET}")
    failed = run_grpo(config, show_progress=False)
    assert failed.status == "failed"
    assert "not finite" in failed.reason or "nan" in failed.reason or "inf" in failed.reason
    status = json.loads((failed.folder / "status.json").read_text())
    assert status["status"] == "failed" and status["reason"] == failed.reason
    assert len(failed.metrics) == status["updates"] + 1
    assert run_grpo(config, show_progress=False).updates_made == 0


def test_greedy_sampling_is_refused_for_training(tmp_path: Path) -> None:
    config = smoke_config(tmp_path, *RUN, "sampling.temperature=0", f"train.budget={BUDGET}")
    with pytest.raises(ConfigError, match=r"sampling.temperature: 0 \(greedy\).*allowed for training: > 0"):
        run_grpo(config, show_progress=False)
    assert not any(tmp_path.iterdir())  # nothing built, nothing written


def test_a_run_without_its_sets_or_base_model_names_the_command_that_builds_them(tmp_path: Path,
                                                                                  smoke_outputs: Path) -> None:
    """Staging is the orchestrators' (CLI, sweeps, chapters): a run only reads what they built."""
    config = smoke_config(tmp_path, *RUN, f"train.budget={BUDGET}")
    with pytest.raises(StoreError, match=r"no problem sets for this config; allowed: sets built first, by "
                                         r"`isobook sets --params"):
        run_grpo(config, show_progress=False)
    assert not (tmp_path / "models").exists()  # no base model trained on the way
    os.symlink(smoke_outputs / "sets", tmp_path / "sets")  # sets without their base model
    with pytest.raises(StoreError, match=r"no base model for this config; allowed: one built first, by "
                                         r"`isobook base-model --params"):
        run_grpo(config, show_progress=False)
    assert not (tmp_path / "models").exists()
