"""Building several arms side by side: what the progress line reads from their logs."""

from pathlib import Path

from isobook.arms import _last_progress


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
