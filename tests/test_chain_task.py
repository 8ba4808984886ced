"""The chain-arithmetic family: verifier edge cases, the teacher, the difficulty knob."""

import numpy as np
import pytest

from isobook.tasks.chain import ChainArithmetic, parse_final_answer, tempered_slip, verify_chain_answer


@pytest.mark.parametrize(
    ("completion", "answer", "reward"),
    [
        ("a+5=12;b-3=9;c+8=17#17", "17", 1.0),
        ("a+5=12;b-3=9;c+8=17# 17 ", "17", 1.0),  # whitespace around the final answer
        ("a+5=12#012", "12", 1.0),  # leading zeros are the same integer
        ("#+17", "17", 1.0),  # explicit plus sign
        ("#-3", "-3", 1.0),
        ("#3", "-3", 0.0),  # the sign matters
        ("#-0", "0", 1.0),
        ("a+5=12;b-3=9;c+8=17", "17", 0.0),  # no final answer marker
        ("#", "17", 0.0),  # empty answer
        ("#1 7", "17", 0.0),  # inner whitespace: malformed
        ("#17abc", "17", 0.0),
        ("#17#18", "17", 0.0),  # the last marker counts
        ("#18#17", "17", 1.0),
        ("#1.7e1", "17", 0.0),  # integers only
    ],
)
def test_verifier_edge_cases(completion: str, answer: str, reward: float) -> None:
    assert verify_chain_answer(completion, answer) == reward


def test_parse_final_answer_returns_none_when_malformed() -> None:
    assert parse_final_answer("no marker") is None
    assert parse_final_answer("#--3") is None
    assert parse_final_answer("#\n42\n") == 42


def test_teacher_without_slips_is_right_and_readable() -> None:
    task = ChainArithmetic()
    assert task.teacher_completion("7a+5b-3c+8=", rng=None) == "a+5=12;b-3=9;c+8=17#17"
    for problem in task.problems(200, seed=3):
        assert task.reward(task.teacher_completion(problem.prompt, None), problem.answer) == 1.0


def test_problems_respect_knobs_and_are_reproducible() -> None:
    task = ChainArithmetic(min_ops=3, max_ops=5, min_carries=1, max_carries=2, max_value=19)
    problems = task.problems(300, seed=7)
    assert [p.prompt for p in problems] == [p.prompt for p in task.problems(300, seed=7)]
    assert {p.meta["ops"] for p in problems} == {3, 4, 5}
    carries = [p.meta["carries"] for p in problems]
    assert set(carries) == {1, 2} and abs(carries.count(1) - 150) < 30  # drawn uniformly
    for p in problems:
        steps = task.teacher_steps(p.prompt, None)
        assert all(0 <= s.result <= 19 for s in steps)
        assert sum(s.carry for s in steps) == p.meta["carries"]


def test_teacher_slips_at_its_rate_and_by_ten_on_carries() -> None:
    task = ChainArithmetic(slip_carry=0.3, slip_plain=0.0)
    rng = np.random.default_rng(0)
    results = [task.teacher_steps("8a+5=", rng)[0].result for _ in range(4000)]
    assert set(results) == {13, 3}  # forgetting the carry is off by ten
    assert abs(results.count(3) / 4000 - 0.3) < 0.03
    borrow = [task.teacher_steps("42a-7=", rng)[0].result for _ in range(1000)]
    assert set(borrow) == {35, 25}  # borrowing twice: ten too low, like a forgotten carry


def test_slips_never_cancel() -> None:
    """Every slip lowers the running value, so a slipped chain never ends on the answer."""
    task = ChainArithmetic(slip_carry=0.5, slip_plain=0.2)
    rng = np.random.default_rng(1)
    for problem in task.problems(300, seed=2):
        steps = task.teacher_steps(problem.prompt, rng)
        slipped = any(s.result != (s.left + s.operand if s.op == "+" else s.left - s.operand) for s in steps)
        assert (steps[-1].result == int(problem.answer)) != slipped


def test_tempered_slip_matches_hand_computation() -> None:
    # p = 0.45 at T = 0.6: 0.45**(5/3) / (0.45**(5/3) + 0.55**(5/3))
    assert tempered_slip(0.45, 0.6) == pytest.approx(0.26384 / (0.26384 + 0.36921), rel=1e-3)
    assert tempered_slip(0.3, 1.0) == pytest.approx(0.3)
    assert tempered_slip(0.0, 0.6) == 0.0
    assert tempered_slip(0.5, 0.6) == pytest.approx(0.5)


def test_calibrated_pass_rate_falls_with_carries() -> None:
    task = ChainArithmetic(slip_carry=0.45, slip_plain=0.0)
    easy = task.problems(1, seed=0)[0]
    no_carry = type(easy)(id="a", prompt="1a+2b+3=", answer="6")
    two_carries = type(easy)(id="b", prompt="8a+5b+7=", answer="20")
    keep = 1 - tempered_slip(0.45, 0.6)
    assert task.calibrated_pass_rate(no_carry, 0.6) == pytest.approx(1.0)
    assert task.calibrated_pass_rate(two_carries, 0.6) == pytest.approx(keep**2)
