"""The README names only what exists: make targets, isobook commands and flags, and files."""

import re
from pathlib import Path

from isobook.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
# Files the README may name that a build or the user makes, not the checkout.
MADE = ("outputs/", ".venv", "/tmp/", "/models/", "/data/")


def test_the_readme_stays_a_front_door() -> None:
    lines = README.splitlines()
    assert len(lines) <= 250
    assert not re.search(r"\b[0-9a-f]{7,40}\b", README.replace("0.1.0", "")), "no commit hashes"


def test_every_make_target_it_names_is_in_the_makefile() -> None:
    makefile = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([\w-]+):", makefile, flags=re.M))
    named = set(re.findall(r"\bmake ([a-z][\w-]*)", README))
    assert named and named <= targets, named - targets


def test_every_isobook_command_and_flag_it_names_exists() -> None:
    commands = set(re.findall(r"isobook (?:<command> )?([a-z][\w-]*) (?:--|[a-z]+\.)", README))
    commands |= set(re.findall(r"`([a-z][\w-]*)`(?=[ ,(])", README.split("Every stage is also a command")[1]
                               .split("```")[0]))
    assert commands and commands <= set(COMMANDS), commands - set(COMMANDS)
    flags = set(re.findall(r"isobook [^\n`]*?(--[a-z][\w-]*)", README))
    assert flags == {"--params"}


def test_every_file_it_names_is_in_the_checkout() -> None:
    named = set(re.findall(r"(?<![\w/.])((?:\.ci|benchmarks|book|params|src|tests)/[\w./-]*\w)", README))
    named |= set(re.findall(r"`([\w-]+\.(?:yml|yaml|toml|md))`", README))
    missing = sorted(path for path in named if not path.startswith(MADE) and not (ROOT / path).exists())
    assert len(named) > 10 and missing == []
