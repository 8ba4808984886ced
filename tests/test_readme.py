"""The README names only what exists (make targets, isobook commands and flags, files), and
its findings are generated from a built book's findings file."""

import json
import re
from pathlib import Path

from isobook.analysis.findings.multiplicity import controlled
from isobook.book.readme import END, START, block, render
from isobook.cli import COMMANDS, main

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


def test_its_findings_are_the_findings_file_rendered() -> None:
    """The README's findings block is `isobook readme`'s rendering of book/findings.json (the
    default book as last built): no number in it is copied by hand."""
    findings = json.loads((ROOT / "book" / "findings.json").read_text())
    assert block(README) == render(findings)
    headlines = [row for row in findings["book"] if row.get("headline")]
    assert headlines and all(row["claim"].replace("*", "\\*") in README for row in headlines)


def test_isobook_readme_writes_the_block_and_the_findings_file(tmp_path: Path) -> None:
    rows = [{"chapter": "02_n_versus_m", "scale": "4,096 rollouts per run", "claim": "easy: n* grows (Fig. 5)",
             "measured": "n = 32 minus n = 4: -0.075", "verdict": "reproduced", "uncertainty": "-", "family": "llm",
             "deciding": [0.1, 0.02, 0.18], "p": 0.03, "headline": True, "primary": "own-best-rate",
             "power": {"effect": 0.03, "seeds": 8.0, "problems": 200.0, "design power": 0.8, "achieved power": 0.7}},
            {"chapter": "02_n_versus_m", "scale": "4,096 rollouts per run", "claim": "hard: x", "measured": "-",
             "verdict": "unresolved", "uncertainty": "-", "family": "llm", "deciding": [0.0, -0.1, 0.1], "p": 0.9,
             "primary": "data-reuse"},
            {"chapter": "02_n_versus_m", "scale": "4,096 rollouts per run", "claim": "hard: z", "measured": "-",
             "verdict": "reproduced", "uncertainty": "95% over 2 seeds x 200 problems", "family": "llm",
             "deciding": [0.2, 0.1, 0.3], "p": 0.001, "headline": True},
            {"chapter": "04_interference", "scale": "-", "claim": "bandit: n* grows", "measured": "2 -> 16",
             "verdict": "reproduced", "uncertainty": "-", "family": "bandit"}]
    book = tmp_path / "outputs" / "book"
    book.mkdir(parents=True)
    (book / "findings.json").write_text(json.dumps(controlled(rows)))
    (tmp_path / "book").mkdir()
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{START}\nstale block\n{END}\n\nAfter.\n")
    assert main(["readme", str(book), "--readme", str(readme)]) == 0
    text = readme.read_text()
    assert text.endswith(f"{END}\n\nAfter.\n") and "stale block" not in text
    written = json.loads((tmp_path / "book" / "findings.json").read_text())
    assert block(text) == render(written) and set(written) == {"book"}
    assert "has 4 findings. On the LLM, 3: 2 reproduced, 1 unresolved. On the bandits, 1: 1 reproduced." in text
    # Holm over the two primaries alone (p = 0.03 and 0.9: 0.06), so the reproduced primary turns unresolved;
    # hard: z (p = 0.001) is exploratory, outside the family, and keeps its verdict.
    assert "procedure over the 2 primary findings" in text and "turns 1 into unresolved" in text
    lines = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert lines == ["| easy: n\\* grows (Fig. 5) | 02 | 8 confirmatory | n = 32 minus n = 4: -0.075 | **reproduced** "
                     "| unresolved | +0.100 [+0.020, +0.180] |",
                     "| hard: x | 02 | - | - | **unresolved** | unresolved | +0.000 [-0.100, +0.100] |",
                     "| hard: z | 02 | 2 | - | **reproduced** | exploratory | +0.200 [+0.100, +0.300] |"]
    readme.write_text("# no block\n")
    assert main(["readme", str(book), "--readme", str(readme)]) == 2
