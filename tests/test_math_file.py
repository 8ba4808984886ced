"""Real math problem files: loading with datasets, answer extraction, math-verify checks."""

import json
from pathlib import Path

import pandas as pd
import pytest

from isobook.cli import main
from isobook.config import MathFileTaskConfig, TaskConfig
from isobook.tasks import make_task
from isobook.tasks.math_file import MathFile, reference_answer, verify_math_answer
from isobook.tasks.word_problems import write_word_problems

ROWS = [
    {"question": "Half of one?", "answer": "\\frac{1}{2}"},
    {"question": "Tom has 3 apples and buys 4.", "answer": "He has 3 + 4 = 7 apples.\n#### 7"},
    {"question": "Big sum?", "answer": "Adding gives \\boxed{1,234}... no: \\boxed{1234}"},
]


@pytest.fixture
def jsonl_file(tmp_path: Path) -> Path:
    path = tmp_path / "mini.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in ROWS) + "\n")
    return path


def test_reference_answers_are_extracted() -> None:
    assert reference_answer("He has 7.\n#### 1,200") == "1200"
    assert reference_answer("so \\boxed{\\frac{a}{b+1}} end") == "\\frac{a}{b+1}"
    assert reference_answer(" 42 ") == "42"


@pytest.mark.parametrize(
    ("completion", "answer", "reward"),
    [
        ("The answer is $\\boxed{0.5}$.", "\\frac{1}{2}", 1.0),
        ("So we get \\boxed{\\frac{2}{4}}", "\\frac{1}{2}", 1.0),
        ("Final answer: 7", "7", 1.0),
        ("\\boxed{7.0}", "7", 1.0),
        ("\\boxed{8}", "7", 0.0),
        ("I cannot solve this.", "7", 0.0),
        ("", "7", 0.0),
        ("\\boxed{x^2+2x+1}", "(x+1)^2", 1.0),
    ],
)
def test_math_verify_equivalences(completion: str, answer: str, reward: float) -> None:
    assert verify_math_answer(completion, answer) == reward


def test_jsonl_and_parquet_load_the_same_problems(jsonl_file: Path, tmp_path: Path) -> None:
    parquet = tmp_path / "mini.parquet"
    pd.DataFrame(ROWS).to_parquet(parquet)
    from_json = MathFile(str(jsonl_file), prompt_template="Q: {question}").problems(10, seed=0)
    from_parquet = MathFile(str(parquet), prompt_template="Q: {question}").problems(10, seed=0)
    assert len(from_json) == 3
    assert [p.answer for p in from_json] == [p.answer for p in from_parquet]
    answers = {p.prompt: p.answer for p in from_json}
    assert answers["Q: Tom has 3 apples and buys 4."] == "7"
    assert answers["Q: Big sum?"] == "1234"


def test_registry_builds_a_math_file_task_that_scores(jsonl_file: Path) -> None:
    task = make_task(TaskConfig(family="math-file", math_file=MathFileTaskConfig(path=str(jsonl_file), chat_template="off")))
    problem = next(p for p in task.problems(3, seed=1) if p.answer == "7")
    assert problem.prompt == "Tom has 3 apples and buys 4.\nPut the final answer within \\boxed{}."
    assert task.reward("3 + 4 = \\boxed{7}", problem.answer) == 1.0


def test_missing_column_names_the_field(jsonl_file: Path) -> None:
    with pytest.raises(ValueError, match="task.math_file.question_field: no column 'problem'"):
        MathFile(str(jsonl_file), question_field="problem").problems(1, seed=0)


def test_unsupported_suffix_names_the_allowed_ones(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text("question,answer\n")
    with pytest.raises(ValueError, match="allowed: .jsonl, .json, .parquet"):
        MathFile(str(path)).problems(1, seed=0)


def test_word_problems_are_a_math_file_table_with_both_answer_styles(tmp_path: Path) -> None:
    """`isobook word-problems` writes a table the math-file task reads; each reference
    solution, given as a completion, earns reward 1 (the '####' ones and the boxed ones), and
    the three step counts come in equal shares."""
    path = tmp_path / "word-problems.jsonl"
    assert main(["word-problems", "--out", str(path), "--count", "60"]) == 0
    assert not write_word_problems(path, 60, 0)  # already there: not rewritten
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [sum(row["steps"] == k for row in rows) for k in (1, 2, 3)] == [20, 20, 20]
    assert sum("####" in row["answer"] for row in rows) == 45 and sum("\\boxed{" in row["answer"] for row in rows) == 15
    task = MathFile(str(path))
    problems = task.problems(60, seed=0)
    solutions = {f"word-problems-{i}": row["answer"] for i, row in enumerate(rows)}
    assert all(task.reward(solutions[p.id], p.answer) == 1.0 for p in problems)
    assert all(p.answer.isdigit() for p in problems)
    assert main(["word-problems", "--out", str(path), "--count", "0"]) == 2
