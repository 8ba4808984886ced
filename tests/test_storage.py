"""Store helpers: JSON and table caches recompute what is damaged; a run folder's lock has one holder."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from isobook.store.atomic import cached_json, cached_parquet
from isobook.store.locks import holding


def test_a_cache_recomputes_what_is_missing_unusable_or_damaged(tmp_path: Path) -> None:
    path, calls = tmp_path / "scores.json", []

    def compute() -> dict:
        calls.append(1)
        return {"version": 2, "score": 0.5}

    def usable(kept: dict) -> bool:
        return kept.get("version") == 2

    assert cached_json(path, usable, compute) == {"version": 2, "score": 0.5} and len(calls) == 1
    assert cached_json(path, usable, compute)["score"] == 0.5 and len(calls) == 1  # kept
    path.write_text(json.dumps({"version": 1}))  # kept by an older store
    cached_json(path, usable, compute)
    path.write_text('{"version": 2, "sco')  # cut short by a crash elsewhere
    assert cached_json(path, usable, compute)["score"] == 0.5 and len(calls) == 3
    assert json.loads(path.read_text()) == {"version": 2, "score": 0.5}


def test_a_table_cache_keeps_what_it_computed_and_recomputes_a_damaged_file(tmp_path: Path) -> None:
    path, calls = tmp_path / "bandits" / "curves.parquet", []

    def compute() -> pd.DataFrame:
        calls.append(1)
        return pd.DataFrame({"n": [2, 8], "suboptimality": [0.25, 0.5]})

    assert cached_parquet(path, compute)["suboptimality"].tolist() == [0.25, 0.5] and len(calls) == 1
    assert cached_parquet(path, compute)["n"].tolist() == [2, 8] and len(calls) == 1  # read back, not computed
    path.write_bytes(path.read_bytes()[:20])  # cut short by a crash elsewhere
    assert cached_parquet(path, compute)["n"].tolist() == [2, 8] and len(calls) == 2
    assert pd.read_parquet(path)["suboptimality"].tolist() == [0.25, 0.5]
    assert [f.name for f in path.parent.iterdir()] == ["curves.parquet"]  # no staging file left


def test_a_held_run_folder_is_reported_with_its_holder_then_released_by_its_death(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from pathlib import Path; "
                               "from isobook.store.locks import holding\n"
                               f"with holding(Path({str(folder)!r})):\n    print('held', flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"

        def refuse(description: str) -> None:
            raise RuntimeError(description)

        with pytest.raises(RuntimeError, match=f"pid {holder.pid}"):
            with holding(folder, on_busy=refuse):
                pass
    finally:
        holder.kill()  # SIGKILL: the operating system releases the lock
        holder.wait()
    with holding(folder, on_busy=refuse):  # refuse would raise if the dead holder still held it
        assert (folder / ".lock").read_text() == f"pid {os.getpid()}"
