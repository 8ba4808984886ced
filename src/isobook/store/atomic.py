"""Atomic file and folder writes (a crash or kill leaves either the old or the new version),
the JSON caches of computed scores built on them, and reads that fail naming the file and
what to delete (`StoreError`)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import torch

from isobook.store.errors import StoreError

T = TypeVar("T")


def read_stored(path: Path, read: Callable[[Path], T], remedy: str) -> T:
    """`read(path)`, or a `StoreError` naming `path`, why it failed, and `remedy`."""
    try:
        return read(path)
    except (OSError, ValueError) as error:  # missing, or not what was written (JSON, Parquet, Arrow)
        why = " ".join(str(error).split())  # some readers' messages span several lines
        raise StoreError(f"{path}: unreadable ({type(error).__name__}: {why}); {remedy}") from error


def atomic_torch_save(obj: object, path: Path) -> None:
    """`torch.save` to `path` atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _staging_file(path)
    torch.save(obj, tmp)
    os.replace(tmp, path)


def atomic_write_text(text: str, path: Path) -> None:
    """Write `text` to `path` atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _staging_file(path)
    tmp.write_text(text)
    os.replace(tmp, path)


def atomic_write_parquet(frame: pd.DataFrame, path: Path) -> None:
    """`DataFrame.to_parquet` to `path` atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _staging_file(path)
    frame.to_parquet(tmp, index=False)
    os.replace(tmp, path)


def _staging_file(path: Path) -> Path:
    """A temporary name beside `path`, unique per process: two workers writing the same
    file (e.g. a shared cache) never write into each other's staging file."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


@contextlib.contextmanager
def atomic_folder(path: Path) -> Iterator[Path]:
    """Yield an empty staging folder that replaces `path` only if the block succeeds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}."))
    try:
        yield staging
        if path.exists():
            shutil.rmtree(path)
        os.replace(staging, path)
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def cached_json(path: Path, usable: Callable[[dict[str, Any]], bool],
                compute: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The JSON object kept at `path` if there is one and `usable` accepts it (not kept by
    an older store, not for an earlier policy), else `compute()`, written atomically. A
    damaged file is a cache miss: it is computed again and replaced."""
    if path.is_file():
        try:
            kept = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            kept = None
        if isinstance(kept, dict) and usable(kept):
            return kept
    fresh = compute()
    atomic_write_text(json.dumps(fresh), path)
    return fresh


def cached_parquet(path: Path, compute: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """The table kept at `path`, else `compute()`, written atomically. A damaged file is a
    cache miss: it is computed again and replaced."""
    if path.is_file():
        try:
            return pd.read_parquet(path)
        except (OSError, ValueError):  # a truncated or foreign file (pyarrow's errors are both)
            pass
    fresh = compute()
    atomic_write_parquet(fresh, path)
    return fresh
