"""Per-skill accuracy: each carry step's result located in the worked answer, and its
probability under teacher forcing equal to a plain forward pass over prompt and answer."""

import math

import pytest
import torch

from isobook.config import ModelConfig
from isobook.grpo.skills import STEP_COLUMNS, carry_step_accuracy
from isobook.model.loading import build_model
from isobook.model.tokenizer import build_char_tokenizer
from isobook.tasks.chain import ChainArithmetic, misconceived_kinds, result_spans, step_kind


def test_each_steps_span_holds_its_result_and_the_delimiter_after_it() -> None:
    task = ChainArithmetic()
    steps = task.teacher_steps("7a+5b-3c+8=", rng=None)
    answer = task.teacher_completion("7a+5b-3c+8=", rng=None)
    assert [answer[begin:end] for begin, end in result_spans(steps)] == ["12;", "9;", "17#"]
    for problem in task.problems(100, seed=1):
        steps = task.teacher_steps(problem.prompt, rng=None)
        answer = task.teacher_completion(problem.prompt, rng=None)
        for step, (begin, end) in zip(steps, result_spans(steps)):
            assert answer[begin:end - 1] == str(step.result) and answer[end - 1] in ";#"
            assert answer[:begin].endswith(f"{step.letter}{step.op}{step.operand}=")


def test_carry_steps_are_the_carry_steps_with_their_kind_and_misconception() -> None:
    task = ChainArithmetic(misconceptions=30)
    misconceived = set(misconceived_kinds(30))
    for problem in task.problems(100, seed=2):
        carries = task.carry_steps(problem.prompt)
        steps = [s for s in task.teacher_steps(problem.prompt, rng=None) if s.carry]
        assert [c.kind for c in carries] == [step_kind(s.left, s.op, s.operand) for s in steps]
        assert [c.kind for c in carries if c.misconceived] == [k for k in problem.meta["misconceived"].split(";") if k]
        assert all(c.misconceived == (c.kind in misconceived) for c in carries)


def test_a_steps_probability_is_the_product_of_its_result_tokens_in_a_plain_forward_pass() -> None:
    tokenizer = build_char_tokenizer()
    model = build_model(ModelConfig(hidden_size=32, num_layers=2, num_heads=2, intermediate_size=64),
                        tokenizer, seed=0).eval()
    task = ChainArithmetic(misconceptions=45)
    problems = task.problems(12, seed=4)
    temperature = 0.6
    steps = carry_step_accuracy(model, tokenizer, task, problems, temperature, row_tokens=128)
    assert list(steps.columns) == STEP_COLUMNS
    assert len(steps) == sum(len(task.carry_steps(p.prompt)) for p in problems)
    for problem in problems:
        prompt = tokenizer(problem.prompt)["input_ids"]  # <bos> first
        answer = task.teacher_completion(problem.prompt, rng=None)
        ids = torch.tensor([prompt + tokenizer(answer, add_special_tokens=False)["input_ids"]])
        with torch.no_grad():
            logp = torch.log_softmax(model(input_ids=ids).logits[0].float() / temperature, dim=-1)  # [L, V]
        mine = steps[steps["id"] == problem.id]
        for (_, row), carry in zip(mine.iterrows(), task.carry_steps(problem.prompt)):
            begin, end = carry.span
            # answer character c is token len(prompt) + c, predicted at the column before it
            expected = sum(float(logp[len(prompt) + c - 1, ids[0, len(prompt) + c]]) for c in range(begin, end))
            # float32 log-softmax over a 55-token vocabulary, packed or not: a few 1e-6 per token
            assert row["p_right"] == pytest.approx(math.exp(expected), rel=1e-4)
            assert (row["kind"], row["misconceived"]) == (carry.kind, carry.misconceived)


def test_a_tokenizer_that_merges_characters_is_refused() -> None:
    class Merging:
        pad_token_id = 0

        def __call__(self, texts, add_special_tokens=True):
            return {"input_ids": [[1] * max(1, len(text) // 2) for text in texts]}

    task = ChainArithmetic()
    with pytest.raises(ValueError, match="one token per character"):
        carry_step_accuracy(None, Merging(), task, task.problems(2, seed=0), 0.6, row_tokens=128)
