"""Shared fixtures: the smoke preset's base model and sets, built once per test session."""

import shutil
from pathlib import Path

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from isobook.config import Config, load_config
from isobook.model.tokenizer import build_char_tokenizer
from isobook.sets.build import prepare_sets

SMOKE = Path(__file__).resolve().parents[1] / "params" / "smoke.yaml"


def smoke_config(outputs: Path, *overrides: str) -> Config:
    """The smoke preset writing to `outputs`, with overrides."""
    return load_config(SMOKE, [f"system.outputs={outputs}", *overrides])


def save_tiny_llama(folder: Path, chat_template: str | None = None) -> None:
    """A tiny random Llama with isobook's character tokenizer, as a user's checkpoint folder;
    `chat_template` (Jinja) is saved with its tokenizer where given."""
    tokenizer = build_char_tokenizer()
    tokenizer.chat_template = chat_template
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


@pytest.fixture(scope="session")
def smoke_outputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An outputs folder holding the smoke base model and sets (read-only: copy it to write)."""
    outputs = tmp_path_factory.mktemp("smoke-outputs")
    prepare_sets(smoke_config(outputs))
    return outputs


@pytest.fixture
def outputs_with_sets(smoke_outputs: Path, tmp_path: Path) -> Path:
    """A private outputs folder with the smoke base model and sets already in it."""
    target = tmp_path / "outputs"
    shutil.copytree(smoke_outputs, target)
    return target
