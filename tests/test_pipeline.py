"""The ground floor end to end on the smoke preset: build, reuse, reproduce, resume."""

import json
from pathlib import Path

import datasets
import pytest
import torch
from safetensors.torch import load_file

import isobook.model.pretrain as base_model
import isobook.sets.build as pipeline
from isobook.cli import main
from isobook.config import Config, load_config
from isobook.sets.build import prepare_sets
from isobook.store.names import base_model_path

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "params" / "smoke.yaml"


def smoke(outputs: Path, *overrides: str) -> Config:
    return load_config(SMOKE, [f"system.outputs={outputs}", *overrides])


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    return prepare_sets(smoke(tmp_path_factory.mktemp("a")))


def test_sets_follow_the_rules_and_match_the_summary(built) -> None:
    summary = built.summary
    assert not built.cached
    assert sum(summary["histogram"]["problems"]) == summary["pool_size"] == 400
    assert {"easy", "hard", "veryeasy", "mix-dual", "mix-tri"} <= set(summary["sets"])
    for name, counts in summary["sets"].items():
        if counts["train"] == 0:
            assert not (built.folder / name).exists()
            continue
        on_disk = datasets.load_from_disk(str(built.folder / name))
        assert (len(on_disk["train"]), len(on_disk.get("validation", []))) == (counts["train"], counts["validation"])
    assert summary["sets"]["easy"]["train"] > 0 and summary["sets"]["hard"]["train"] > 0
    easy = datasets.load_from_disk(str(built.folder / "easy"))["train"].to_pandas()
    assert easy["correct"].between(5, 9).all()  # avg@16 in [0.3, 0.6]
    hard = datasets.load_from_disk(str(built.folder / "hard"))
    hard_rows = list(hard["train"]["correct"]) + list(hard["validation"]["correct"])
    assert max(hard_rows) <= 1
    assert summary["hard_pass_at_k_positive"] == pytest.approx(sum(c > 0 for c in hard_rows) / len(hard_rows), abs=1e-4)
    assert summary["stability"]["problems"] == 400 and -1 <= summary["stability"]["pearson"] <= 1
    assert summary["rollouts"] >= 2 * 400 * 16


def test_a_second_request_reuses_the_sets(built, capsys: pytest.CaptureFixture[str]) -> None:
    outputs = built.folder.parents[1]
    assert main(["sets", "--params", str(SMOKE), f"system.outputs={outputs}"]) == 0
    printed = capsys.readouterr().out
    assert "sets reused in" in printed and str(built.folder) in printed
    assert "hard problems with pass@16 > 0" in printed


def test_the_sets_do_not_depend_on_system_threads(built, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `built` asked for the preset's two threads. A base model and its sets build on one thread
    # whatever `system.threads` says (on Intel's MKL two threads round the weight gradients
    # differently, and the trained model differs), and the caller's thread count comes back.
    threads_seen: dict[str, set[int]] = {"train": set(), "profile": set()}

    def recording(name: str, function):
        def call(*args, **kwargs):
            threads_seen[name].add(torch.get_num_threads())
            return function(*args, **kwargs)
        return call

    monkeypatch.setattr(base_model, "train_base_model", recording("train", base_model.train_base_model))
    monkeypatch.setattr(pipeline, "profile_problems", recording("profile", pipeline.profile_problems))
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        again = prepare_sets(smoke(tmp_path, "system.threads=3"))
        assert threads_seen == {"train": {1}, "profile": {1}} and base_model.BUILD_THREADS == 1
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    weights = [base_model_path(smoke(root)) / "model.safetensors" for root in (built.folder.parents[1], tmp_path)]
    assert weights[0].read_bytes() == weights[1].read_bytes()
    files = sorted(p.relative_to(built.folder) for p in built.folder.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again.folder) for p in again.folder.rglob("*") if p.is_file())
    for relative in files:
        if relative.name != "summary.json":  # holds timings
            assert (built.folder / relative).read_bytes() == (again.folder / relative).read_bytes(), relative
    first, second = json.loads((built.folder / "summary.json").read_text()), again.summary
    assert first["sets"] == second["sets"] and first["histogram"] == second["histogram"]


def test_an_interrupted_base_model_resumes_to_the_same_weights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    uninterrupted = base_model.ensure_base_model(smoke(tmp_path / "whole"))
    config = smoke(tmp_path / "killed")
    real_rate = base_model.learning_rate

    def crash_at_step_250(step: int, *args: float) -> float:
        if step == 250:
            raise KeyboardInterrupt("simulated kill")
        return real_rate(step, *args)

    monkeypatch.setattr(base_model, "learning_rate", crash_at_step_250)
    with pytest.raises(KeyboardInterrupt):
        base_model.ensure_base_model(config)
    partial = base_model_path(config).with_name(base_model_path(config).name + ".partial")
    assert torch.load(partial / "state.pt", weights_only=False)["step"] == 200
    monkeypatch.setattr(base_model, "learning_rate", real_rate)
    resumed = base_model.ensure_base_model(config)
    assert not partial.exists()
    whole, again = load_file(uninterrupted / "model.safetensors"), load_file(resumed / "model.safetensors")
    assert whole.keys() == again.keys()
    for name in whole:
        assert torch.equal(whole[name], again[name]), name
    assert (resumed / "checkpoint-570" / "config.json").is_file()


def test_cli_reports_config_errors_with_the_field(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sets", "sets.pool_size=-1"]) == 2
    assert "sets.pool_size: -1 is out of range" in capsys.readouterr().err
