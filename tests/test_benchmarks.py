"""benchmarks/gpu_check.py runs end to end at toy size on CPU, so a lent GPU's few minutes
are not lost to a broken script, and it runs from a checkout where nothing can be installed."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu_check.py"


DRY_RUN = ["--size", "tiny", "--device", "cpu", "--precision", "bf16", "--batch-problems", "4", "--n", "2",
           "--new-tokens", "8", "--micro-batch-tokens", "64"]
VLLM_INSTALLED = importlib.util.find_spec("vllm") is not None


def printed_table(stdout: str) -> tuple[list[str], dict[str, str]]:
    """The markdown rows after the table's header, and the same as {measurement: value}."""
    lines = stdout.strip().splitlines()
    rows = lines[lines.index("| measurement | value |") + 2:]
    return rows, dict(row.strip("| ").split(" | ") for row in rows)


def test_gpu_check_dry_run_prints_its_table_last() -> None:
    """Where vLLM is not installed its row says so, and the dry run still exits 0 (vLLM's
    own start, 25-35 s, is left out where it is installed)."""
    skip_vllm = ["--no-vllm"] if VLLM_INSTALLED else []
    result = subprocess.run([sys.executable, str(SCRIPT), *DRY_RUN, *skip_vllm], capture_output=True, text=True,
                            check=True, timeout=300)
    rows, table = printed_table(result.stdout)
    assert table["precision"] == "bf16 autocast over float32 weights"
    assert float(table["torch engine: rollouts/s"]) > 0
    assert float(table["GRPO step: trained tokens/s"].split()[0]) > 0
    assert table["model"].startswith("tiny, ")
    assert rows[-1].startswith("| this script, imports excluded | ")
    # The GPU preset's prompt path: its own BPE tokenizer, eos and pad apart, chat prompts.
    assert table["chat path: tokenizer"].endswith("ChatML template; eos im_end (2), pad endoftext (0)")
    assert float(table["chat path: prompt tokens (mean)"]) > 20
    assert float(table["chat path: torch engine rollouts/s (cut at the answer line)"]) > 0
    if importlib.util.find_spec("math_verify") is not None:
        assert table["chat path: math-verify, reference solutions right"] == "64 of 64"
    if not VLLM_INSTALLED:
        assert table["vLLM engine"] == ("not run: vLLM is not installed (`pip install -e .[vllm]` on a GPU machine, "
                                        "`make venv-vllm` on a CPU one)")
    # every row was also logged as it was measured, so a run killed by its time limit keeps them
    assert f"measured: torch engine: rollouts/s: {table['torch engine: rollouts/s']}" in result.stderr


def test_a_failing_step_costs_its_own_rows_only() -> None:
    """The GRPO step raises: its row says so, the rows before and after it are kept, the
    table is still printed and the exit status is 1."""
    run_with_broken_step = (
        "import runpy, sys\n"
        "from isobook.grpo.trainer import GRPOTrainer\n"
        "def broken(self, *args, **kwargs): raise RuntimeError('CUDA out of memory (simulated)')\n"
        "GRPOTrainer.step = broken\n"
        f"sys.argv = [{str(SCRIPT)!r}, *{DRY_RUN!r}, '--no-vllm']\n"
        f"sys.path.insert(0, {str(SCRIPT.parent)!r})\n"
        f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')\n")
    result = subprocess.run([sys.executable, "-c", run_with_broken_step], capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    rows, table = printed_table(result.stdout)
    assert table["GRPO step"] == "failed: RuntimeError: CUDA out of memory (simulated)"
    assert float(table["torch engine: rollouts/s"]) > 0
    assert not any(name.startswith("GRPO step: ") for name in table)
    assert rows[-1].startswith("| this script, imports excluded | ")
    assert "Traceback" in result.stderr and "in broken" in result.stderr


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is seen here")
def test_gpu_check_refuses_the_full_size_when_no_gpu_is_seen() -> None:
    result = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 2  # argparse's usage error, before any model is built
    assert "--size qwen2.5-0.5b needs a GPU and torch sees none" in result.stderr


def test_the_training_path_imports_neither_datasets_nor_math_verify() -> None:
    """The lent GPU machine has neither and no network to install them: the trainer, the
    torch engine and the chain task must import without them."""
    probe = ("import sys, isobook.grpo.trainer, isobook.rollout, isobook.device, isobook.model.loading, isobook.tasks; "
             "print(sorted({'datasets', 'math_verify'} & set(sys.modules)))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=300)
    assert result.stdout.strip() == "[]"
