"""The torch rollout engine: grouping, masks, and log-probs that a forward pass reproduces."""

import pytest
import torch

from isobook.config import ConfigError, ModelConfig, SamplingConfig
from isobook.model.loading import build_model
from isobook.model.tokenizer import build_char_tokenizer
from isobook.rollout import TorchEngine
from isobook.rollout.base import check_context, cut_completions
from isobook.tasks.math_file import answer_line_end

PROMPTS = ["7+5=", "1+2-3+4-5=", "9-1="]


@pytest.fixture(scope="module")
def engine() -> TorchEngine:
    tokenizer = build_char_tokenizer()
    model = build_model(ModelConfig(hidden_size=16, num_layers=1, num_heads=2, intermediate_size=32), tokenizer, seed=0)
    return TorchEngine(model.eval(), tokenizer, batch_rollouts=8)


def test_shapes_masks_and_grouping(engine: TorchEngine) -> None:
    torch.manual_seed(0)
    rollouts = engine.generate(PROMPTS, n=4, sampling=SamplingConfig(max_new_tokens=12))
    assert rollouts.completion_ids.shape[0] == 12 and len(rollouts.texts) == 12
    assert rollouts.completion_ids.shape == rollouts.logprobs.shape == rollouts.completion_mask.shape
    eos = engine.tokenizer.eos_token_id
    for row, length in zip(rollouts.completion_ids, rollouts.lengths):
        ended = (row[:length] == eos).nonzero()
        # a completion stops at its first <eos> (kept in the mask) or at max_new_tokens
        assert (len(ended) == 1 and ended[0, 0] == length - 1) or (len(ended) == 0 and length == 12)
    assert (rollouts.logprobs[rollouts.completion_mask == 0] == 0).all()
    assert (rollouts.logprobs[rollouts.completion_mask == 1] <= 0).all()


def test_logprobs_are_those_of_the_tempered_policy(engine: TorchEngine) -> None:
    torch.manual_seed(1)
    sampling = SamplingConfig(temperature=0.6, max_new_tokens=10)
    rollouts = engine.generate(PROMPTS, n=3, sampling=sampling)
    for row in range(9):
        prompt = engine.tokenizer(PROMPTS[row // 3])["input_ids"]
        length = int(rollouts.lengths[row])
        completion = rollouts.completion_ids[row, :length].tolist()
        with torch.no_grad():
            logits = engine.model(torch.tensor([prompt + completion])).logits[0]  # [T, V]
        scores = torch.log_softmax(logits[len(prompt) - 1 : -1] / sampling.temperature, dim=-1)
        expected = scores.gather(-1, torch.tensor(completion)[:, None]).squeeze(-1)
        assert torch.allclose(rollouts.logprobs[row, :length], expected, atol=1e-4)


def test_dropping_ended_rows_changes_no_draw(engine: TorchEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    from isobook.rollout import kv_decode

    sampling = SamplingConfig(temperature=1.5, max_new_tokens=40)
    results = {}
    for share in (0.0, 1.0):  # never drop; drop ended rows at every step
        monkeypatch.setattr(kv_decode, "DROP_WHEN_RUNNING", share)
        torch.manual_seed(3)
        results[share] = TorchEngine(engine.model, engine.tokenizer, batch_rollouts=48).generate(PROMPTS, 16, sampling)
    lengths = results[0.0].lengths
    assert lengths.min() < 20 and lengths.max() == 40  # rows end at different steps, so rows were dropped
    assert torch.equal(results[0.0].completion_ids, results[1.0].completion_ids)
    assert torch.allclose(results[0.0].logprobs, results[1.0].logprobs, atol=1e-5, rtol=0)


def test_generate_fallback_for_other_architectures_gives_tempered_logprobs() -> None:
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = build_char_tokenizer()
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tokenizer), n_embd=16, n_layer=1, n_head=2,
                                       bos_token_id=1, eos_token_id=2, pad_token_id=0)).eval()
    engine = TorchEngine(model, tokenizer, batch_rollouts=4)
    rollouts = engine.generate(["7+5="], n=2, sampling=SamplingConfig(temperature=0.6, max_new_tokens=6))
    length = int(rollouts.lengths[0])
    prompt = tokenizer("7+5=")["input_ids"]
    completion = rollouts.completion_ids[0, :length].tolist()
    with torch.no_grad():
        logits = model(torch.tensor([prompt + completion])).logits[0]
    expected = torch.log_softmax(logits[len(prompt) - 1 : -1] / 0.6, -1).gather(
        -1, torch.tensor(completion)[:, None]).squeeze(-1)
    assert torch.allclose(rollouts.logprobs[0, :length], expected, atol=1e-4)


def test_top_p_restricts_sampling_to_the_nucleus() -> None:
    from isobook.rollout.kv_decode import _draw

    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]])).repeat(2000, 1)
    tokens, logprobs = _draw(logits, temperature=1.0, top_p=0.7, uniform=torch.rand_like(logits))
    assert set(tokens.tolist()) == {0, 1}  # 0.5 + 0.3 reaches 0.7; the tail is cut
    renormalised = torch.log(torch.tensor([0.5, 0.3]) / 0.8)
    assert torch.allclose(logprobs, renormalised[tokens], atol=1e-5)


def test_greedy_decoding_and_bf16_autocast_over_float32_weights(engine: TorchEngine) -> None:
    greedy = SamplingConfig(temperature=0.0, max_new_tokens=10)
    first = engine.generate(PROMPTS, n=2, sampling=greedy)
    assert first.texts[0::2] == first.texts[1::2]  # one answer per prompt, whatever the seed
    assert (first.logprobs == 0).all()  # a point mass
    bf16 = TorchEngine(engine.model, engine.tokenizer, batch_rollouts=8,
                       autocast=lambda: torch.autocast("cpu", dtype=torch.bfloat16))
    torch.manual_seed(2)
    sampling = SamplingConfig(temperature=0.6, max_new_tokens=10)
    rollouts = bf16.generate(PROMPTS, n=3, sampling=sampling)
    assert engine.model.model.embed_tokens.weight.dtype == torch.float32  # weights untouched
    for row in range(9):
        prompt = engine.tokenizer(PROMPTS[row // 3])["input_ids"]
        length = int(rollouts.lengths[row])
        completion = rollouts.completion_ids[row, :length].tolist()
        with torch.no_grad():
            logits = engine.model(torch.tensor([prompt + completion])).logits[0]
        expected = torch.log_softmax(logits[len(prompt) - 1 : -1] / 0.6, -1).gather(
            -1, torch.tensor(completion)[:, None]).squeeze(-1)
        assert torch.allclose(rollouts.logprobs[row, :length], expected, atol=0.05)  # bf16's 8-bit mantissa


def test_a_llama_with_grouped_query_attention_samples_its_own_log_probs() -> None:
    tokenizer = build_char_tokenizer()
    config = ModelConfig(architecture="llama", hidden_size=16, num_layers=2, num_heads=4, num_kv_heads=2,
                         intermediate_size=32)
    model = build_model(config, tokenizer, seed=0).eval()
    assert model.config.model_type == "llama" and model.config.num_key_value_heads == 2
    attention = model.model.layers[0].self_attn
    assert attention.q_proj.bias is None and attention.k_proj.weight.shape == (8, 16)  # 2 heads of 4
    assert model.lm_head.weight.data_ptr() != model.model.embed_tokens.weight.data_ptr()  # untied
    qwen = build_model(ModelConfig(hidden_size=16, num_layers=2, num_heads=4, intermediate_size=32), tokenizer, 0)
    assert qwen.model.layers[0].self_attn.q_proj.bias is not None
    assert qwen.lm_head.weight.data_ptr() == qwen.model.embed_tokens.weight.data_ptr()  # tied

    torch.manual_seed(2)
    sampling = SamplingConfig(temperature=0.6, max_new_tokens=10)
    rollouts = TorchEngine(model, tokenizer, batch_rollouts=8).generate(PROMPTS, n=2, sampling=sampling)
    for row in range(6):
        prompt = tokenizer(PROMPTS[row // 2])["input_ids"]
        length = int(rollouts.lengths[row])
        completion = rollouts.completion_ids[row, :length].tolist()
        with torch.no_grad():
            logits = model(torch.tensor([prompt + completion])).logits[0]  # [T, V]
        scores = torch.log_softmax(logits[len(prompt) - 1 : -1] / sampling.temperature, dim=-1)
        expected = scores.gather(-1, torch.tensor(completion)[:, None]).squeeze(-1)
        assert torch.allclose(rollouts.logprobs[row, :length], expected, atol=1e-4)


class PieceTokenizer:
    """Token i is PIECES[i]; 0 is eos (the part of a tokenizer `cut_completions` uses)."""

    PIECES = ("<eos>", "1+2", "=3", "\n", "####", " 3", "7", "9-1=8", "#")
    eos_token_id = 0

    def decode(self, ids: torch.Tensor, skip_special_tokens: bool) -> str:
        return "".join(self.PIECES[int(i)] for i in ids if int(i) != 0 or not skip_special_tokens)


def test_completions_are_cut_after_their_answer_line_as_a_stop_string_would() -> None:
    """`cut_completions` keeps the shortest prefix whose text holds a whole '#### <answer>'
    line; a row without one, or with the line only after eos, is kept whole."""
    rows = [[1, 2, 3, 4, 5, 3, 4, 5, 3, 4], [1, 2, 4, 5, 6], [7, 0, 4, 5, 3], [8, 8, 8, 8, 5, 3, 3]]
    ids = [torch.tensor(row) for row in rows]
    logprobs = [-torch.arange(1.0, len(row) + 1) for row in rows]
    cut_ids, cut_logprobs = cut_completions(ids, logprobs, PieceTokenizer(), answer_line_end)
    assert cut_ids[0].tolist() == [1, 2, 3, 4, 5, 3]  # "1+2=3\n#### 3\n"
    assert torch.equal(cut_logprobs[0], logprobs[0][:6])
    assert cut_ids[3].tolist() == [8, 8, 8, 8, 5, 3]  # "#### 3\n" spelt with single #s
    for kept in (1, 2):  # no newline after the answer; the line only after eos
        assert torch.equal(cut_ids[kept], ids[kept]) and torch.equal(cut_logprobs[kept], logprobs[kept])
    assert answer_line_end("#### \n####  72 \nmore") == len("#### \n####  72 \n")  # an empty line is not one


def test_a_prompt_longer_than_the_context_is_refused_before_sampling() -> None:
    """vLLM's engine calls this before sampling (tests/test_real_checkpoint_path.py sees it refuse)."""
    context = 64
    with pytest.raises(ConfigError, match=f"allowed: model.max_positions >= {context + 1}"):
        check_context([[0] * (context - 7)], max_new_tokens=8, context=context)
    check_context([[0] * (context - 8)], max_new_tokens=8, context=context)  # fits exactly
