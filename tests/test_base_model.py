"""Teacher batches are packed without leaking attention across samples; the LR schedule."""

import numpy as np
import pytest
import torch

from isobook.config import ModelConfig
from isobook.model.loading import build_model
from isobook.model.pretrain import IGNORE, learning_rate, teacher_batch
from isobook.model.tokenizer import build_char_tokenizer
from isobook.tasks import ChainArithmetic


def test_packed_rows_give_each_sample_its_own_logits() -> None:
    tokenizer = build_char_tokenizer()
    model = build_model(ModelConfig(hidden_size=32, num_layers=2, num_heads=2, intermediate_size=64),
                        tokenizer, seed=0).eval()
    batch = teacher_batch(ChainArithmetic(max_ops=4, max_carries=2), tokenizer, 12, np.random.default_rng(0), row_tokens=64)
    assert batch["input_ids"].shape[1] == 64 and batch["input_ids"].shape[0] < 12
    with torch.no_grad():
        packed = model(input_ids=batch["input_ids"], position_ids=batch["position_ids"], use_cache=False).logits
    checked = 0
    for row in range(batch["input_ids"].shape[0]):
        positions = batch["position_ids"][row]
        starts = (positions == 0).nonzero().flatten().tolist() + [len(positions)]
        for start, end in zip(starts[:-1], starts[1:]):
            ids = batch["input_ids"][row, start:end]
            if ids[0] != tokenizer.bos_token_id:
                continue  # the padding at the row's end
            with torch.no_grad():
                alone = model(input_ids=ids[None]).logits[0]
            assert torch.allclose(alone, packed[row, start:end], atol=1e-5)
            checked += 1
    assert checked == 12


def test_only_completions_carry_loss() -> None:
    tokenizer = build_char_tokenizer()
    batch = teacher_batch(ChainArithmetic(max_ops=3, max_carries=2), tokenizer, 8, np.random.default_rng(1), row_tokens=48)
    for ids, labels in zip(batch["input_ids"], batch["labels"]):
        text = tokenizer.decode([t for t, lab in zip(ids.tolist(), labels.tolist()) if lab != IGNORE])
        # every supervised stretch is a worked answer closed by <eos>
        assert text.count("<eos>") == text.count("#") > 0
        assert "=" not in text.split(";")[0][:1]
        assert (labels[ids == tokenizer.bos_token_id] == IGNORE).all()
        assert (labels[ids == tokenizer.pad_token_id] == IGNORE).all()


def test_a_sample_longer_than_a_row_is_refused() -> None:
    with pytest.raises(ValueError, match="model.max_positions"):
        teacher_batch(ChainArithmetic(min_ops=12, max_ops=12), build_char_tokenizer(), 2,
                      np.random.default_rng(0), row_tokens=40)


def test_learning_rate_warms_up_then_decays_to_the_floor() -> None:
    rates = [learning_rate(step, 1e-3, 10, 110, 0.1) for step in range(111)]
    assert rates[0] == pytest.approx(1e-4) and rates[9] == pytest.approx(1e-3)
    assert rates[60] == pytest.approx(1e-4 + 0.9e-3 * 0.5)  # half-way down the cosine
    assert rates[110] == pytest.approx(1e-4)
    assert all(a >= b for a, b in zip(rates[9:], rates[10:]))
