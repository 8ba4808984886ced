"""The pieces of a GRPO update: packing, packed log-probs, the recipe's numbers, schedules, batches,
micro-batches."""

from dataclasses import replace
from pathlib import Path

import pytest
import torch

from isobook.config import EvaluationConfig, RecipeConfig
from isobook.grpo.evaluation import evaluation_steps, train_pass_steps
from isobook.grpo.loss import ZeroVarianceFilter
from isobook.grpo.recipe import LrScaling, loss_weights, lr_at, scaled_lr
from isobook.grpo.trainer import GRPOTrainer, TrainerSettings, completion_logprobs, micro_batches
from isobook.model.loading import load_causal_lm, set_activation_checkpointing
from isobook.model.packing import pack_sequences, pack_shared_prompts
from isobook.model.pretrain import ensure_base_model
from isobook.rollout import TorchEngine
from isobook.tasks import make_task

from conftest import smoke_config


def test_packing_places_every_sequence_once_with_restarting_positions() -> None:
    sequences = [[1, 2, 3], [4, 5], [6, 7, 8, 9], [10]]
    packed = pack_sequences(sequences, row_tokens=5, pad=0)
    # First-fit decreasing: [6 7 8 9 10] and [1 2 3 4 5], no padding left.
    assert packed.input_ids.tolist() == [[6, 7, 8, 9, 10], [1, 2, 3, 4, 5]]
    for sequence, row, start in zip(sequences, packed.row, packed.start):
        assert packed.input_ids[row, start : start + len(sequence)].tolist() == sequence
        assert packed.position_ids[row, start : start + len(sequence)].tolist() == list(range(len(sequence)))
    assert sum(len(s) for s in sequences) == int((packed.input_ids != 0).sum())
    with pytest.raises(ValueError, match="model.max_positions: a 6-token sequence does not fit rows of 5"):
        pack_sequences([[1] * 6], row_tokens=5, pad=0)


def test_shared_packing_stores_a_prompt_once_per_row_and_hides_siblings() -> None:
    prompts = [[1, 2], [1, 2], [1, 2], [3], [3]]
    completions = [[10, 11, 12], [20, 21], [30], [40, 41, 42], [50]]
    packed = pack_shared_prompts(prompts, completions, row_tokens=8, pad=0)
    for index, (prompt, completion) in enumerate(zip(prompts, completions)):
        row, start, end = packed.row[index], packed.start[index], packed.prompt_end[index]
        assert packed.input_ids[row, start : start + len(completion)].tolist() == completion
        assert packed.input_ids[row, end - len(prompt) + 1 : end + 1].tolist() == prompt
        # Positions continue the prompt's, as if the completion followed it alone.
        assert packed.position_ids[row, end - len(prompt) + 1 : end + 1].tolist() == list(range(len(prompt)))
        assert packed.position_ids[row, start : start + len(completion)].tolist() == list(
            range(len(prompt), len(prompt) + len(completion)))
        # A completion's tokens see its prompt and its own earlier tokens, and nothing else.
        for offset in range(len(completion)):
            seen = packed.attention_mask[row, start + offset].nonzero().flatten().tolist()
            assert seen == [*range(end - len(prompt) + 1, end + 1), *range(start, start + offset + 1)]
    # Each row holds a prompt at most once: [1 2 | 10 11 12 | 20 21 | 30] and [3 | 40 41 42 | 50].
    assert packed.input_ids.tolist() == [[1, 2, 10, 11, 12, 20, 21, 30], [3, 40, 41, 42, 50, 0, 0, 0]]
    with pytest.raises(ValueError, match="model.max_positions: a 9-token sequence does not fit rows of 8"):
        pack_shared_prompts([[1, 2]], [[5] * 7], row_tokens=8, pad=0)


@pytest.fixture(scope="module")
def smoke_model(smoke_outputs: Path):
    config = smoke_config(smoke_outputs)
    model, tokenizer = load_causal_lm(ensure_base_model(config))
    return config, model.eval(), tokenizer


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_packed_logprobs_and_gradients_equal_one_sequence_at_a_time(smoke_model, attention: str) -> None:
    config, model, tokenizer = smoke_model
    model.set_attn_implementation(attention)
    torch.manual_seed(0)
    prompts = [p.prompt for p in make_task(config.task).problems(6, seed=3)]
    rollouts = TorchEngine(model, tokenizer).generate(prompts, 3, config.sampling)
    prompt_ids = [ids for ids in tokenizer(prompts)["input_ids"] for _ in range(3)]
    packed, entropy = completion_logprobs(model, prompt_ids, rollouts.completion_ids, rollouts.completion_mask,
                                          temperature=0.6, row_tokens=64, pad=tokenizer.pad_token_id,
                                          with_entropy=True)
    packed_gradient = torch.autograd.grad(packed.sum(), model.model.embed_tokens.weight)[0]
    alone_sum = 0.0
    for i, prompt in enumerate(prompt_ids):
        length = int(rollouts.lengths[i])
        ids = torch.tensor([prompt + rollouts.completion_ids[i, :length].tolist()])
        logits = model(input_ids=ids).logits[0, len(prompt) - 1 : -1] / 0.6  # [length, V]
        logp = torch.log_softmax(logits, -1)
        expected = logp.gather(-1, ids[0, len(prompt):, None])[:, 0]
        alone_sum = alone_sum + expected.sum()
        assert torch.allclose(packed[i, :length], expected, atol=1e-5)
        assert torch.allclose(entropy[i, :length], -(logp.exp() * logp).sum(-1), atol=1e-5)
        assert not packed[i, length:].any()
    alone_gradient = torch.autograd.grad(alone_sum, model.model.embed_tokens.weight)[0]
    assert torch.allclose(packed_gradient, alone_gradient, atol=1e-4, rtol=1e-4)
    # The engine sampled from exactly these distributions (its log-probs are the behaviour policy's).
    assert torch.allclose(packed.detach(), rollouts.logprobs, atol=1e-4)
    model.set_attn_implementation("sdpa")


def test_vocabulary_chunks_give_the_same_logprobs_entropies_and_gradients(smoke_model) -> None:
    """The head projected 3 tokens at a time, each chunk recomputed in the backward pass,
    equals one chunk: same log-probs and entropies, same gradient of a loss using both."""
    config, model, tokenizer = smoke_model
    torch.manual_seed(1)
    prompts = [p.prompt for p in make_task(config.task).problems(4, seed=5)]
    rollouts = TorchEngine(model, tokenizer).generate(prompts, 2, config.sampling)
    prompt_ids = [ids for ids in tokenizer(prompts)["input_ids"] for _ in range(2)]
    assert int(rollouts.lengths.sum()) > 3 * 10  # many chunks
    results = []
    for chunk in (None, 3):
        model.zero_grad()
        logp, entropy = completion_logprobs(model, prompt_ids, rollouts.completion_ids, rollouts.completion_mask,
                                            temperature=0.6, row_tokens=64, pad=tokenizer.pad_token_id,
                                            with_entropy=True, chunk_tokens=chunk)
        (logp.sum() + 0.5 * entropy.sum()).backward()
        results.append((logp.detach(), entropy.detach(), [p.grad.clone() for p in model.parameters()]))
    (whole_logp, whole_entropy, whole_grads), (chunked_logp, chunked_entropy, chunked_grads) = results
    model.zero_grad()
    assert torch.allclose(chunked_logp, whole_logp, atol=1e-5)
    assert torch.allclose(chunked_entropy, whole_entropy, atol=1e-5)
    assert (whole_entropy[rollouts.completion_mask.bool()] >= 0).all()
    for chunked, whole in zip(chunked_grads, whole_grads):
        # Chunks sum a parameter's gradient over the K tokens in another order: float32
        # rounding of about K * 2**-24 relative, K ~ 10^2 here.
        assert float((chunked - whole).norm()) <= 1e-5 * float(whole.norm())


def test_learning_rate_scaling_and_warmup() -> None:
    assert scaled_lr(1e-4, 256, 1024, LrScaling.SQRT) == pytest.approx(2e-4)
    assert scaled_lr(1e-4, 256, 1024, LrScaling.LINEAR) == pytest.approx(4e-4)
    assert scaled_lr(1e-4, 256, 64, LrScaling.CONSTANT) == 1e-4
    assert [lr_at(s, 1.0, 128, 512) for s in range(6)] == [0.25, 0.5, 0.75, 1.0, 1.0, 1.0]
    assert lr_at(0, 1.0, 128, 0) == 1.0


@pytest.mark.parametrize("budget", [512, 4096])
def test_warm_up_takes_the_same_share_of_a_budget_at_every_n(budget: int) -> None:
    """The grid's batches (B_p = 8, n = 4 ... 32) spend the same rollouts warming up:
    the rollouts each spends below its peak learning rate, over the budget."""
    shares = set()
    for n in (4, 8, 16, 32):
        batch = 8 * n
        below_peak = sum(batch for step in range(budget // batch) if lr_at(step, 1.0, batch, 512) < 1.0)
        shares.add((below_peak + batch) / budget)  # through the update that first reaches the peak
    assert shares == {512 / budget}


def test_regulariser_presets_follow_the_paper() -> None:
    auto = RecipeConfig()
    assert (loss_weights(auto, "easy").kl, loss_weights(auto, "easy").entropy) == (1e-3, 1e-3)
    for name in ("hard", "xhard", "mix-dual", "mix-tri"):
        assert (loss_weights(auto, name).kl, loss_weights(auto, name).entropy) == (0.0, 0.0)
    forced = RecipeConfig(regularisers="kl+entropy", kl=0.05, zero_variance="regularisers")
    assert loss_weights(forced, "hard").kl == 0.05
    assert loss_weights(forced, "hard").zero_variance is ZeroVarianceFilter.REGULARISERS
    assert loss_weights(RecipeConfig(regularisers="none"), "easy").entropy == 0.0


def test_evaluation_schedule_is_log_spaced_and_independent_of_the_budget() -> None:
    settings = EvaluationConfig(first_rollouts=512, points_per_doubling=2)
    # points 512, 724, 1024, 1448, 2048, 2896, 4096 rollouts at 256 per update
    assert evaluation_steps(256, 16, settings) == [0, 2, 3, 4, 6, 8, 12, 16]
    assert evaluation_steps(256, 10, settings) == [0, 2, 3, 4, 6, 8, 10]  # the last update is always evaluated
    longer = evaluation_steps(256, 64, settings)
    assert longer[: len(evaluation_steps(256, 16, settings))] == evaluation_steps(256, 16, settings)
    assert train_pass_steps(256, 64, EvaluationConfig(train_pass_rollouts=(0, 1000, 10**6))) == [0, 4]


def _trainer(smoke_model, problems, optimizer_class=torch.optim.AdamW, **train) -> GRPOTrainer:
    config, model, tokenizer = smoke_model
    config = smoke_config(Path(config.system.outputs), *(f"train.{k}={v}" for k, v in train.items()))
    settings = replace(TrainerSettings.from_config(config), seed=7)
    task = make_task(config.task)
    optimizer = optimizer_class(model.parameters(), lr=0.0)
    return GRPOTrainer(model, None, tokenizer, TorchEngine(model, tokenizer), task, problems, optimizer, settings)


def test_batches_walk_epochs_without_replacement(smoke_model) -> None:
    problems = make_task(smoke_model[0].task).problems(12, seed=1)
    trainer = _trainer(smoke_model, problems, batch_problems=4)
    first_epoch = [p.id for step in range(3) for p in trainer.batch_problems(step)]
    second_epoch = [p.id for step in range(3, 6) for p in trainer.batch_problems(step)]
    assert sorted(first_epoch) == sorted(second_epoch) == sorted(p.id for p in problems)
    assert first_epoch != second_epoch  # a fresh permutation per epoch
    assert [p.id for p in trainer.batch_problems(4)] == [p.id for p in trainer.batch_problems(4)]


def test_one_step_counts_compute_and_decoupled_baseline_trains_on_a_subset(smoke_model) -> None:
    problems = make_task(smoke_model[0].task).problems(32, seed=2)
    full = _trainer(smoke_model, problems, batch_problems=4, rollouts_per_problem=4).step(0, lr=0.0)
    assert full["step_rollouts"] == 16 and full["step_tokens"] == pytest.approx(16 * full["response_length"])
    assert 0.0 <= full["reward"] <= 1.0 and 0.0 <= full["zero_variance_fraction"] <= 1.0
    assert full["tis_truncated_fraction"] == 0.0  # trainer and engine agree on this model
    decoupled = _trainer(smoke_model, problems, batch_problems=4, rollouts_per_problem=4, n_train=2).step(0, lr=0.0)
    assert decoupled["step_rollouts"] == 16  # compute counts every sampled rollout
    assert decoupled["reward"] == full["reward"]  # same seed, same samples; only the update differs


def test_micro_batches_group_consecutive_rollouts_within_the_token_limit() -> None:
    groups = [g.tolist() for g in micro_batches([30, 20, 50, 70, 10, 10], max_tokens=60)]
    assert groups == [[0, 1], [2], [3], [4, 5]]  # a rollout over the limit gets a group of its own
    assert [g.tolist() for g in micro_batches([30, 20], max_tokens=0)] == [[0, 1]]


def test_micro_batches_and_gradient_checkpointing_leave_the_update_unchanged(smoke_model) -> None:
    """Micro-batching promises the same gradient, summed in another order. Plain SGD's step
    is linear in it (`w - lr * g`), so the updates are compared; Adam's first step,
    `lr * g / (|g| + eps)`, would turn a near-zero component's rounding into a move of up
    to `lr`, which is no promise of micro-batching."""
    _, model, _ = smoke_model
    problems = make_task(smoke_model[0].task).problems(32, seed=5)
    original = {name: tensor.clone() for name, tensor in model.state_dict().items()}
    rows, updates = {}, {}
    # 48 tokens: one or two rollouts per forward/backward pass
    variants = {"whole batch": (0, False), "micro-batches": (48, False), "checkpointed micro-batches": (48, True)}
    try:
        for variant, (tokens, checkpointing) in variants.items():
            model.load_state_dict(original)
            if checkpointing:
                set_activation_checkpointing(model, True)
            trainer = _trainer(smoke_model, problems, torch.optim.SGD, batch_problems=4, rollouts_per_problem=4)
            trainer.settings = replace(trainer.settings, micro_batch_tokens=tokens)
            rows[variant] = trainer.step(0, lr=1e-3)
            updates[variant] = {name: tensor - original[name] for name, tensor in model.state_dict().items()}
    finally:
        set_activation_checkpointing(model, False)
        model.load_state_dict(original)
        model.eval()
    whole = "whole batch"
    assert any(updates[whole][name].any() for name in original)
    for variant in ("micro-batches", "checkpointed micro-batches"):
        assert rows[variant]["reward"] == rows[whole]["reward"]  # same rollouts
        for column in ("policy_loss", "entropy", "grad_norm", "clip_fraction"):
            assert rows[variant][column] == pytest.approx(rows[whole][column], rel=1e-5, abs=1e-8), (variant, column)
        for name in original:
            # A gradient component is a float32 sum over at most ~10^3 token terms; another
            # order of summation moves it by at most ~10^3 * 2^-24 (6e-5) of the largest
            # terms' size, so 1e-4 of the tensor's largest update bounds the difference.
            # The weights' own rounding (w + lr * g in float32) adds 2^-24 * |w|.
            expected, got = updates[whole][name], updates[variant][name]
            bound = 1e-4 * float(expected.abs().max()) + 2.0**-23 * float(original[name].abs().max())
            assert float((got - expected).abs().max()) <= bound, (variant, name)
