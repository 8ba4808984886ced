"""One writer per run folder, and worker processes that end with the process that started them.

A run folder is held through an advisory lock (``fcntl.flock``) on ``<folder>/.lock``: the
operating system releases it when its holder exits or is killed (SIGKILL, the OOM killer,
a job scheduler), so a crashed writer never leaves a stale lock behind. A second process
asking for the same run waits for the holder, then finds the run settled or resumes it
from the holder's last checkpoint.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path


@contextlib.contextmanager
def holding(folder: Path, on_busy: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold `folder`'s lock for the block. If another process holds it, `on_busy` gets the
    holder's description once and may raise (to report the run busy instead); then this
    process waits for the holder."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_busy is not None:
                handle.seek(0)
                on_busy(handle.read().strip() or "another process")
            fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}")
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def end_with_parent(parent_pid: int, poll_seconds: float = 0.5) -> None:
    """In a worker process: exit as soon as the process `parent_pid` is gone (its parent
    changes when it dies), training or idle. Meant as a process pool's initializer."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(poll_seconds)
        os._exit(1)  # no cleanup: the run's last checkpoint is what a rerun resumes from

    threading.Thread(target=watch, name="end-with-parent", daemon=True).start()
