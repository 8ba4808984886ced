"""Building several arms side by side: what the progress line reads from their logs, what
is already built, and failures."""

from pathlib import Path

import pytest

from isobook.sets.arms import _last_progress, prepare_arms

from conftest import smoke_config


def test_the_progress_line_shows_each_arms_latest_bar(tmp_path: Path) -> None:
    log = tmp_path / "arm.log"
    assert _last_progress(log) == ""  # not started
    log.write_text("loading\n")
    assert _last_progress(log) == ""  # no bar yet
    log.write_text("base model (0.37M params):   2%|2         | 20/1000 [00:10<07:42,  2.12step/s, loss=3.2]"
                   "\rbase model (0.37M params):  15%|#4        | 147/1000 [02:06<07:05,  2.01step/s, loss=0.9]")
    assert _last_progress(log) == "base model 147/1000"
    with open(log, "a") as stream:
        stream.write("\n" + "x" * 1000 + "\nprofile avg@16:  40%|####      | 26/64 [00:30<00:44]\r")
    assert _last_progress(log) == "profile avg@16 26/64"


def test_every_failed_build_is_named_with_its_log(tmp_path: Path) -> None:
    arms = [smoke_config(tmp_path / "outputs", f"model.source={tmp_path / name}") for name in ("missing-a", "missing-b")]
    with pytest.raises(RuntimeError, match="failed") as raised:
        prepare_arms(arms, tmp_path / "logs")  # two base models: two processes at once
    logs = sorted((tmp_path / "logs").glob("*.log"))
    assert [log.name[:9] for log in logs] == ["missing-a", "missing-b"]
    for log in logs:  # each process's own reason, traceback included, in its own log
        assert str(log) in str(raised.value)
        assert "Traceback" in log.read_text() and "holds no model transformers can load" in log.read_text()


def test_built_arms_are_left_alone(smoke_outputs: Path, tmp_path: Path) -> None:
    prepare_arms([smoke_config(smoke_outputs)] * 2, tmp_path / "logs")
    assert not (tmp_path / "logs").exists()
