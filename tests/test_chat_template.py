"""Instruct checkpoints read math problems in their tokenizer's chat template (task.math_file.chat_template),
with one BOS in the ids the engine samples from and the trainer scores (a tiny local Llama)."""

import json
from pathlib import Path

import datasets
import pandas as pd
import pytest
import torch

from isobook.config import Config, ConfigError, SamplingConfig, load_config
from isobook.grpo.run import run_grpo
from isobook.grpo.trainer import completion_logprobs
from isobook.model.tokenizer import load_tokenizer
from isobook.rollout import Rollouts, TorchEngine, inference_engine
from isobook.sets.build import prepare_sets
from isobook.tasks import make_task

from conftest import save_tiny_llama

# A chat template in the shape of Llama 3's: the BOS is part of the rendered text.
TEMPLATE = ("{{ bos_token }}{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}</{{ m['role'] }}>"
            "{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}")
BOS = 1  # isobook's character tokenizer: <pad> <bos> <eos> <unk>, then the alphabet


def write_problems(path: Path, count: int) -> list[str]:
    """`count` sums (answers past 1000, which a random tiny model never writes); their questions."""
    questions = [f"{a} + 1000" for a in range(count)]
    path.write_text("\n".join(json.dumps({"q": q, "a": str(1000 + a)}) for a, q in enumerate(questions)))
    return questions


def math_config(tmp_path: Path, folder: Path, *overrides: str) -> Config:
    problems = tmp_path / "problems.jsonl"
    if not problems.is_file():
        write_problems(problems, 1)
    return load_config(None, [
        f"model.source={folder}", "task.family=math-file", f"task.math_file.path={problems}", "task.math_file.question_field=q",
        "task.math_file.answer_field=a", "sampling.max_new_tokens=4", f"system.outputs={tmp_path / 'outputs'}", *overrides])


@pytest.fixture
def chat_llama(tmp_path: Path) -> Path:
    folder = tmp_path / "chat-llama"
    save_tiny_llama(folder, chat_template=TEMPLATE)
    return folder


@pytest.fixture
def plain_llama(tmp_path: Path) -> Path:
    folder = tmp_path / "plain-llama"
    save_tiny_llama(folder)
    return folder


def test_auto_writes_the_chat_template_and_the_engine_feeds_one_bos(tmp_path: Path, chat_llama: Path) -> None:
    config = math_config(tmp_path, chat_llama, "task.math_file.chat_template=auto")  # task.math_file.instruction at its default
    engine, tokenizer = inference_engine(config, chat_llama)
    problem = make_task(config.task, tokenizer).problems(1, seed=0)[0]
    instruction = "Please reason step by step, and put your final answer within \\boxed{}."
    assert problem.prompt == f"<bos><user>0 + 1000\n{instruction}</user><assistant>"

    torch.manual_seed(0)
    rollouts = engine.generate([problem.prompt], 2, config.sampling)
    ids = rollouts.prompt_ids[0]
    chat_ids = tokenizer.apply_chat_template([{"role": "user", "content": f"0 + 1000\n{instruction}"}],
                                             tokenize=True, add_generation_prompt=True)["input_ids"]
    assert ids == chat_ids  # what transformers itself feeds the model
    assert ids[:7] == [BOS, *tokenizer.convert_tokens_to_ids(list("<user>"))]
    assert ids.count(BOS) == 1
    assert tokenizer(problem.prompt)["input_ids"][:2] == [BOS, BOS]  # the trap: special tokens added again

    # The trainer scores the engine's ids: its log-probs are the ones the engine sampled with.
    model = engine.model
    with torch.no_grad():
        scored, _ = completion_logprobs(model, [ids, ids], rollouts.completion_ids, rollouts.completion_mask,
                                        config.sampling.temperature, 64, tokenizer.pad_token_id, with_entropy=False)
        doubled, _ = completion_logprobs(model, [[BOS, *ids]] * 2, rollouts.completion_ids, rollouts.completion_mask,
                                         config.sampling.temperature, 64, tokenizer.pad_token_id, with_entropy=False)
    assert torch.allclose(scored, rollouts.logprobs, atol=1e-5)
    assert (doubled - rollouts.logprobs).abs().max() > 1e-3  # a random model: small, but far beyond rounding


@pytest.mark.parametrize("model, mode", [("chat", "off"), ("plain", "auto")])
def test_off_and_auto_without_a_template_give_the_raw_prompt(tmp_path: Path, chat_llama: Path, plain_llama: Path,
                                                             model: str, mode: str) -> None:
    folder = chat_llama if model == "chat" else plain_llama
    config = math_config(tmp_path, folder, f"task.math_file.chat_template={mode}")
    engine, tokenizer = inference_engine(config, folder)
    problem = make_task(config.task, tokenizer).problems(1, seed=0)[0]
    assert problem.prompt == "0 + 1000\nPut the final answer within \\boxed{}."  # task.math_file.prompt_template's default
    ids = engine.generate([problem.prompt], 1, config.sampling).prompt_ids[0]
    assert ids == tokenizer(problem.prompt)["input_ids"]
    assert ids[:2] == [BOS, tokenizer.convert_tokens_to_ids("0")]
    assert ids.count(BOS) == 1


def test_on_without_a_template_is_a_one_line_error_naming_the_field(tmp_path: Path, plain_llama: Path) -> None:
    config = math_config(tmp_path, plain_llama, "task.math_file.chat_template=on")
    with pytest.raises(ConfigError) as error:
        prepare_sets(config)
    assert str(error.value) == (f"task.math_file.chat_template: 'on' needs a tokenizer with a chat template, and {plain_llama} "
                                "has none; allowed: auto, off")
    assert not (tmp_path / "outputs" / "sets").exists()  # refused before any profiling


def test_drawing_chat_prompts_needs_the_tokenizer(tmp_path: Path, chat_llama: Path) -> None:
    config = math_config(tmp_path, chat_llama, "task.math_file.chat_template=auto")
    task = make_task(config.task)  # enough to score
    assert task.reward("\\boxed{1000}", "1000") == 1.0
    with pytest.raises(ValueError, match="task.math_file.chat_template: 'auto' needs the policy's tokenizer"):
        task.problems(1, seed=0)


def test_profiling_training_and_evaluation_read_the_same_chat_prompts(tmp_path: Path, chat_llama: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    questions = write_problems(tmp_path / "problems.jsonl", 8)
    # A different n for each use, to tell the engine calls apart: profile 4, training 2,
    # validation 3, training-set pass rates 5.
    config = math_config(tmp_path, chat_llama, "task.math_file.chat_template=auto", "task.math_file.instruction=think",
                         "sets.pool_size=8", "sets.samples=4", "sets.xhard_samples=4", "sets.validation_size=2",
                         "train.set=hard", "train.batch_problems=2", "train.rollouts_per_problem=2", "train.budget=8", "recipe.track_kl=false",
                         "evaluation.k=2", "evaluation.samples=3", "evaluation.validation_problems=2",
                         "evaluation.first_rollouts=4", "evaluation.train_pass_rollouts=[0]",
                         "evaluation.train_pass_problems=2", "evaluation.train_pass_samples=5")
    tokenizer = load_tokenizer(chat_llama)
    calls: list[tuple[int, list[str], list[list[int]]]] = []
    generate = TorchEngine.generate

    def recording(engine: TorchEngine, prompts: list[str], n: int, sampling: SamplingConfig,
                  progress=None) -> Rollouts:
        rollouts = generate(engine, prompts, n, sampling, progress)
        calls.append((n, list(prompts), rollouts.prompt_ids))
        return rollouts

    monkeypatch.setattr(TorchEngine, "generate", recording)
    prepare_sets(config)  # staged as the CLI and sweeps do: a run only reads its sets
    result = run_grpo(config, show_progress=False)
    assert result.status == "finished" and result.updates_made == 2

    chat = {f"<bos><user>{q}\nthink</user><assistant>" for q in questions}
    sets = result.folder.parents[1] / "sets"
    (sets_folder,) = sets.iterdir()
    assert set(pd.read_parquet(sets_folder / "profile.parquet")["prompt"]) == chat
    hard = datasets.load_from_disk(str(sets_folder / "hard"))
    train, validation = set(hard["train"]["prompt"]), set(hard["validation"]["prompt"])
    assert train | validation == chat  # the random model solves nothing: every problem is hard

    by_use = {n: set() for n in (4, 2, 3, 5)}
    for n, prompts, prompt_ids in calls:
        by_use[n].update(prompts)
        for text, ids in zip(prompts, prompt_ids):
            # one id per character after the template's own <bos> (the new line is <unk>)
            assert ids == [BOS, *tokenizer.convert_tokens_to_ids(list(text.removeprefix("<bos>")))]
    assert by_use[4] == chat  # profiling
    assert by_use[2] and by_use[2] <= train  # training
    assert by_use[3] == validation and by_use[5] <= train  # evaluation
