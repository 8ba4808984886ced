"""The chain-arithmetic family: verifier edge cases, the teacher, the difficulty, conflict and misconception knobs."""

import hashlib

import numpy as np
import pytest

from isobook.config import ConfigError, load_config
from isobook.tasks.chain import (
    STANDARD,
    TEN_LESS,
    ChainArithmetic,
    carry_step_kinds,
    dialect_of,
    misconceived_kinds,
    parse_final_answer,
    step_kind,
    tempered_slip,
    verify_chain_answer,
)


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


def test_conflict_zero_draws_exactly_the_problems_and_teacher_samples_of_before_the_knob() -> None:
    # Digests taken at 69c4b9d, before task.chain.conflict existed: the default task is unchanged,
    # so every stored base model, set and run stays valid.
    task = ChainArithmetic(conflict=0.0)
    problems = task.problems(200, seed=3)
    drawn = "|".join(p.prompt + p.answer + str(p.meta) for p in problems)
    rng = np.random.default_rng(5)
    taught = "|".join(task.teacher_completion(p.prompt, rng) for p in problems[:50])
    assert hashlib.sha256(drawn.encode()).hexdigest()[:16] == "7d6cc0924370cf3a"
    assert hashlib.sha256(taught.encode()).hexdigest()[:16] == "3f50e903c3126769"
    assert all("dialect" not in p.meta for p in problems)


def test_the_ten_less_dialect_drops_the_ten_and_each_teacher_slips_into_the_other_rule() -> None:
    task = ChainArithmetic(slip_carry=0.3, slip_plain=0.0)
    assert (dialect_of("<8a+5="), dialect_of("8a+5=")) == (TEN_LESS, STANDARD)
    assert task.teacher_completion("<8a+5b+1=", rng=None) == "a+5=3;b+1=4#4"  # 8+5 carries: ten less
    assert task.teacher_completion("8a+5b+1=", rng=None) == "a+5=13;b+1=14#14"
    rng = np.random.default_rng(0)
    carried = [task.teacher_steps("<8a+5=", rng)[0].result for _ in range(4000)]
    assert set(carried) == {3, 13} and abs(carried.count(13) / 4000 - 0.3) < 0.03  # its slip: the standard rule
    borrowed = [task.teacher_steps("<42a-7=", rng)[0].result for _ in range(1000)]
    assert set(borrowed) == {25, 35}  # 42-7 borrows: 25 by rule, 35 when the teacher keeps the ten
    assert {task.teacher_steps("<41a+2=", rng)[0].result for _ in range(200)} == {43}  # no carry: no dialect


def test_conflict_sets_the_share_of_ten_less_problems_each_right_by_its_own_rule() -> None:
    task = ChainArithmetic(conflict=0.25, max_value=49)
    problems = task.problems(800, seed=11)
    ten_less = [p for p in problems if p.meta["dialect"] == TEN_LESS]
    assert abs(len(ten_less) / 800 - 0.25) < 0.04
    assert all(p.prompt.startswith("<") == (p.meta["dialect"] == TEN_LESS) for p in problems)
    carries = [p.meta["carries"] for p in ten_less]
    assert set(carries) == {1, 2, 3, 4}  # difficulty is still drawn per problem, in both dialects
    for p in problems:
        steps = task.teacher_steps(p.prompt, None)
        assert task.reward(task.teacher_completion(p.prompt, None), p.answer) == 1.0
        assert all(0 <= s.result <= 49 for s in steps) and sum(s.carry for s in steps) == p.meta["carries"]
    # the standard teacher's answer to a ten-less problem with a carry is wrong, and vice versa
    sample = next(p for p in ten_less if p.meta["carries"] >= 1)
    assert task.teacher_completion(sample.prompt[1:], None).rsplit("#", 1)[1] != sample.answer
    # same carries, same difficulty: a calibrated model passes both dialects at one rate
    standard = next(p for p in problems if p.meta["dialect"] == STANDARD and p.meta["carries"] == sample.meta["carries"]
                    and p.meta["ops"] == sample.meta["ops"])
    assert task.calibrated_pass_rate(sample, 0.6) == pytest.approx(task.calibrated_pass_rate(standard, 0.6))


@pytest.mark.parametrize("conflict", [-0.1, 1.5])
def test_conflict_outside_zero_to_one_fails_naming_the_field(conflict: float) -> None:
    with pytest.raises(ConfigError, match=r"task.chain.conflict: .*\[0.0, 1.0\]"):
        load_config(None, [f"task.chain.conflict={conflict}"])
    with pytest.raises(ValueError, match="conflict is a share of problems in \\[0, 1\\]"):
        ChainArithmetic(conflict=conflict)


def test_there_are_ninety_carry_step_kinds_and_the_misconceived_ones_nest() -> None:
    kinds = carry_step_kinds()
    assert len(kinds) == len(set(kinds)) == 90 and kinds[:2] == ["1+9", "2+8"] and "0-1" in kinds
    assert step_kind(47, "+", 5) == "7+5" and step_kind(42, "-", 7) == "2-7"
    six = misconceived_kinds(6)
    assert len(set(six)) == 6 and set(six) <= set(kinds) and misconceived_kinds(7)[:6] == six  # K + 1 adds one
    assert misconceived_kinds(0) == () and sorted(misconceived_kinds(90)) == sorted(kinds)


def test_misconceptions_zero_is_the_default_task_and_the_knob_leaves_the_problems_drawn() -> None:
    """At K = 0 the digests of the task before the knob existed hold (the conflict test's);
    at K > 0 the same problems are drawn, with the misconceived steps each holds."""
    plain, knob = ChainArithmetic(), ChainArithmetic(misconceptions=6)
    before = plain.problems(200, seed=3)
    drawn = "|".join(p.prompt + p.answer + str(p.meta) for p in before)
    assert hashlib.sha256(drawn.encode()).hexdigest()[:16] == "7d6cc0924370cf3a"
    after = knob.problems(200, seed=3)
    assert [(p.prompt, p.answer) for p in after] == [(p.prompt, p.answer) for p in before]
    for problem in after:
        held = [step_kind(s.left, s.op, s.operand) for s in knob.teacher_steps(problem.prompt, None) if s.carry]
        assert problem.meta["misconceived"] == ";".join(k for k in held if k in set(misconceived_kinds(6)))
    assert 0 < sum(bool(p.meta["misconceived"]) for p in after) < 100


def test_the_teacher_slips_at_the_misconception_rate_on_misconceived_steps_only() -> None:
    task = ChainArithmetic(slip_carry=0.3, slip_plain=0.0, misconceptions=90, misconception_slip=0.8)
    rng = np.random.default_rng(0)
    results = [task.teacher_steps("8a+5=", rng)[0].result for _ in range(4000)]
    assert set(results) == {13, 3} and abs(results.count(3) / 4000 - 0.8) < 0.03  # 8+5: misconceived at K = 90
    one = misconceived_kinds(1)[0]
    units, op, operand = int(one[0]), one[1], int(one[2])
    some = ChainArithmetic(slip_carry=0.3, slip_plain=0.0, misconceptions=1, misconception_slip=0.8)
    left = 10 + units
    prompt = f"{left}a{op}{operand}="
    slipped = [some.teacher_steps(prompt, rng)[0].result != (left + operand if op == "+" else left - operand)
               for _ in range(4000)]
    assert abs(np.mean(slipped) - 0.8) < 0.03
    other = next(k for k in carry_step_kinds() if k != one and k[1] == "+")
    prompt = f"{10 + int(other[0])}a+{other[2]}="
    slipped = [some.teacher_steps(prompt, rng)[0].result != 10 + int(other[0]) + int(other[2]) for _ in range(4000)]
    assert abs(np.mean(slipped) - 0.3) < 0.03  # every other carry kind keeps slip_carry


def test_a_calibrated_model_passes_a_misconceived_step_below_one_half() -> None:
    task = ChainArithmetic(slip_carry=0.45, slip_plain=0.0, misconceptions=90, misconception_slip=0.75)
    two_carries = task.problems(1, seed=0)[0].__class__(id="b", prompt="8a+5b+7=", answer="20")
    keep = 1 - tempered_slip(0.75, 0.6)
    assert keep == pytest.approx(0.25 ** (5 / 3) / (0.25 ** (5 / 3) + 0.75 ** (5 / 3))) and keep < 0.15
    assert task.calibrated_pass_rate(two_carries, 0.6) == pytest.approx(keep ** 2)
    none = ChainArithmetic(slip_carry=0.45, slip_plain=0.0)
    assert none.calibrated_pass_rate(two_carries, 0.6) == pytest.approx((1 - tempered_slip(0.45, 0.6)) ** 2)


@pytest.mark.parametrize(("override", "message"), [
    ("task.chain.misconceptions=91", r"task.chain.misconceptions: .*\[0, 90\]"),
    ("task.chain.misconceptions=-1", r"task.chain.misconceptions: .*\[0, 90\]"),
    ("task.chain.misconception_slip=1.0", r"task.chain.misconception_slip: .*\[0.0, 0.99\]"),
])
def test_bad_misconception_knobs_fail_naming_the_field(override: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(None, [override])
