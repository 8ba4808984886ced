"""Shared fixtures: the smoke preset's base model and sets, built once per test session."""

import shutil
from pathlib import Path

import pytest

from isobook.config import Config, load_config
from isobook.pipeline import prepare_sets

SMOKE = Path(__file__).resolve().parents[1] / "params" / "smoke.yaml"


def smoke_config(outputs: Path, *overrides: str) -> Config:
    """The smoke preset writing to `outputs`, with overrides."""
    return load_config(SMOKE, [f"system.outputs={outputs}", *overrides])


@pytest.fixture(scope="session")
def smoke_outputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An outputs folder holding the smoke base model and sets (read-only: copy it to write)."""
    outputs = tmp_path_factory.mktemp("smoke-outputs")
    prepare_sets(smoke_config(outputs))
    return outputs


@pytest.fixture
def outputs_with_sets(smoke_outputs: Path, tmp_path: Path) -> Path:
    """A private outputs folder with the smoke base model and sets already in it."""
    target = tmp_path / "outputs"
    shutil.copytree(smoke_outputs, target)
    return target
