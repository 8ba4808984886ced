"""benchmarks/gpu_check.py runs end to end at toy size on CPU, so a lent GPU's few minutes
are not lost to a broken script."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_check.py"


def test_gpu_check_dry_run_prints_its_table_last() -> None:
    result = subprocess.run([sys.executable, str(SCRIPT), "--size", "tiny", "--device", "cpu", "--precision", "bf16",
                             "--batch-problems", "4", "--n", "2", "--new-tokens", "8", "--micro-batch-tokens", "64",
                             "--no-vllm"], capture_output=True, text=True, check=True, timeout=300)
    lines = result.stdout.strip().splitlines()
    rows = lines[lines.index("| measurement | value |") + 2:]
    table = dict(row.strip("| ").split(" | ") for row in rows)
    assert table["precision"] == "bf16 autocast over float32 weights"
    assert float(table["torch engine: rollouts/s"]) > 0
    assert float(table["GRPO update: trained tokens/s"].split()[0]) > 0
    assert table["model"].startswith("tiny, ")
