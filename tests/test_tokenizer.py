"""The char tokenizer round-trips exactly, also from a folder whose config says qwen2."""

from pathlib import Path

import pytest
from transformers import AutoTokenizer, Qwen2Config

from isobook.model.tokenizer import build_char_tokenizer, load_tokenizer

TEXTS = ["7+5-3+8=", "+5=12;-3=9;+8=17#17", "  two  spaces and (x) / y ", "#-0"]


@pytest.fixture
def model_folder(tmp_path: Path) -> Path:
    tokenizer = build_char_tokenizer()
    tokenizer.save_pretrained(tmp_path)
    Qwen2Config(vocab_size=len(tokenizer)).save_pretrained(tmp_path)
    return tmp_path


@pytest.mark.parametrize("text", TEXTS)
def test_one_token_per_character_after_bos(text: str) -> None:
    tokenizer = build_char_tokenizer()
    ids = tokenizer(text)["input_ids"]
    assert ids[0] == tokenizer.bos_token_id
    assert len(ids) == len(text) + 1
    assert tokenizer.decode(ids, skip_special_tokens=True) == text


@pytest.mark.parametrize("text", TEXTS)
def test_round_trip_through_a_qwen2_folder(model_folder: Path, text: str) -> None:
    original = build_char_tokenizer()
    loaded = load_tokenizer(model_folder)
    assert loaded(text)["input_ids"] == original(text)["input_ids"]
    assert loaded.decode(loaded(text)["input_ids"], skip_special_tokens=True) == text
    assert (loaded.pad_token_id, loaded.eos_token_id, loaded.padding_side) == (0, 2, "left")


def test_the_trap_load_tokenizer_avoids_is_real(model_folder: Path) -> None:
    """AutoTokenizer rebuilds it byte-level from the qwen2 config and drops spaces."""
    auto = AutoTokenizer.from_pretrained(model_folder)
    text = "1 + 2"
    assert auto.decode(auto(text)["input_ids"], skip_special_tokens=True) != text
    assert load_tokenizer(model_folder).decode(load_tokenizer(model_folder)(text)["input_ids"],
                                               skip_special_tokens=True) == text


def test_unknown_characters_map_to_unk() -> None:
    tokenizer = build_char_tokenizer()
    assert tokenizer("€")["input_ids"][1] == tokenizer.unk_token_id
