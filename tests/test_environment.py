"""environment.yml (conda users) lists exactly what `make` installs: the dependencies and the book and dev extras."""

import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_environment_yml_agrees_with_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    declared = set(project["dependencies"]) | set(extras["book"]) | set(extras["dev"])
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    listed = {item for item in pip_section if not item.startswith("-e")}
    assert listed == declared
    assert "python=3.11" in environment["dependencies"]
