"""Per-skill accuracy of a policy on the chain task: how likely it writes each carry/borrow
step right, given the correct worked answer up to that step (teacher forcing).

    from isobook.grpo.skills import step_skills
    steps = step_skills(configs, "hard")   # one row per (policy, problem, carry step)

A chain problem is solved when every step is; its carry/borrow steps are where the teacher
slips, each misconceived kind (``task.chain.misconceptions``) far more often than the rest.
Scoring each step under teacher forcing separates the skills a problem needs: the
probability of the step's exact result (``12;``, where a slip writes ``2;``) at the sampling
temperature, after a correct prefix. Unlike sampled pass rates it has no sampling noise,
and it reads a policy's skill on every kind its problems hold, solved or not. The base
model's rates say whether it learnt the teacher's kind-specific slips; a trained policy's
say which skills GRPO improved, and on which problems.
"""

from __future__ import annotations

import pandas as pd
import torch
from torch.nn.utils.rnn import pad_sequence

from isobook.config import Config
from isobook.device import resolve_placement
from isobook.grpo.run import problems_of
from isobook.grpo.trainer import completion_logprobs
from isobook.grpo.transfer import finished_policies
from isobook.model.loading import load_causal_lm
from isobook.sets.build import load_set, stored_sets
from isobook.store.atomic import cached_parquet
from isobook.store.names import skills_cache_name
from isobook.tasks import Problem, make_task
from isobook.tasks.chain import ChainArithmetic

STEP_COLUMNS = ["id", "step", "kind", "misconceived", "p_right"]
BATCH_PROBLEMS = 256  # problems per forward pass


def carry_step_accuracy(model: torch.nn.Module, tokenizer, task: ChainArithmetic, problems: list[Problem],
                        temperature: float, row_tokens: int) -> pd.DataFrame:
    """The probability, under `model` sampled at `temperature` (> 0; no top-p truncation),
    of each carry/borrow step's exact result in each problem's correct worked answer, every
    earlier token given: one row per step, columns `STEP_COLUMNS` (``step`` counts the
    problem's carry steps from 0).

    Needs a tokenizer with one token per character (isobook's own): spans of the answer's
    text are spans of its tokens."""
    if temperature <= 0:
        raise ValueError(f"step skills: a probability at temperature {temperature} is not defined; allowed: > 0")
    rows = []
    for start in range(0, len(problems), BATCH_PROBLEMS):
        part = problems[start : start + BATCH_PROBLEMS]
        answers = [task.teacher_completion(problem.prompt, rng=None) for problem in part]
        prompts = tokenizer([problem.prompt for problem in part])["input_ids"]  # <bos> first
        completions = tokenizer(answers, add_special_tokens=False)["input_ids"]
        if any(len(ids) != len(text) for ids, text in zip(completions, answers)):
            raise ValueError("step skills: the tokenizer must give one token per character (isobook's own model)")
        completion_ids = pad_sequence([torch.tensor(ids) for ids in completions], batch_first=True,
                                      padding_value=tokenizer.pad_token_id)  # [N, T]
        lengths = torch.tensor([len(ids) for ids in completions])
        mask = (torch.arange(completion_ids.shape[1]) < lengths[:, None]).float()  # [N, T]
        with torch.no_grad():
            token_logp, _ = completion_logprobs(model, prompts, completion_ids, mask, temperature, row_tokens,
                                                tokenizer.pad_token_id, with_entropy=False)  # [N, T]
        token_logp = token_logp.cpu()
        for i, problem in enumerate(part):
            for index, step in enumerate(task.carry_steps(problem.prompt)):
                begin, end = step.span
                rows.append((problem.id, index, step.kind, step.misconceived,
                             float(token_logp[i, begin:end].sum().exp())))
    return pd.DataFrame(rows, columns=STEP_COLUMNS)


def step_skills(configs: list[Config], set_name: str) -> pd.DataFrame:
    """`carry_step_accuracy` of the base model and of every finished run's policy in
    `configs` (`transfer.finished_policies`) on the first ``evaluation.validation_problems``
    validation problems of `set_name`: one row per (``run``, ``train_set``, ``n``, ``seed``,
    ``rollouts``, ``id``, ``step``) with ``kind``, ``misconceived`` and ``p_right``; the
    base model's rows stand on every seed of `configs`. Kept as
    ``skills-<set>-r<rollouts>-<hash>.parquet`` beside each policy's transfer counts."""
    policies = finished_policies(configs)
    first = configs[0]
    task = make_task(first.task)
    if not isinstance(task, ChainArithmetic):
        raise ValueError(f"step skills: the chain task's worked answers are scored; task.family is {first.task.family}")
    problems = problems_of(load_set(stored_sets(first), set_name)["validation"])[: first.evaluation.validation_problems]
    placement = resolve_placement(first.system)
    frames = []
    for identity, seeds, weights, cache in policies:

        def score() -> pd.DataFrame:
            model, tokenizer = load_causal_lm(weights, dtype=placement.dtype, device=placement.device)
            return carry_step_accuracy(model.eval(), tokenizer, task, problems, first.sampling.temperature,
                                       first.model.max_positions)

        steps = cached_parquet(cache / skills_cache_name(first, set_name, identity["rollouts"]), score)
        for train_seed in seeds:
            frames.append(steps.assign(**{**identity, "seed": train_seed}))
    return pd.concat(frames, ignore_index=True)
