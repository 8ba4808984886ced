"""The character-level tokenizer of isobook's own base models, and loading any tokenizer.

One token per character, ``<bos>`` prepended by the post-processor, ``<eos>`` closes a
completion. Saved next to the model with ``save_pretrained``. Loading goes through
`load_tokenizer`: ``AutoTokenizer`` on a folder whose config says ``qwen2`` silently
rebuilds a custom tokenizer as the byte-level Qwen2 one (spaces vanish, no warning), so a
folder whose ``tokenizer_config.json`` names a generic class (``PreTrainedTokenizerFast``,
or ``TokenizersBackend`` as transformers 5 writes it) is loaded as exactly that tokenizer.
"""

from __future__ import annotations

import json
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors
from transformers import AutoTokenizer, PreTrainedTokenizerBase, PreTrainedTokenizerFast

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
SPECIAL_TOKENS = (PAD, BOS, EOS, UNK)
# Everything the synthetic tasks write, plus room for spaces and simple math text.
_GENERIC_TOKENIZER_CLASSES = {"PreTrainedTokenizerFast", "TokenizersBackend"}
DEFAULT_ALPHABET = "0123456789+-*/=;#.,()<> abcdefghijklmnopqrstuvwxyz"


def build_char_tokenizer(alphabet: str = DEFAULT_ALPHABET) -> PreTrainedTokenizerFast:
    """A tokenizer with one id per character of `alphabet`, after the four special tokens."""
    if len(set(alphabet)) != len(alphabet):
        raise ValueError("tokenizer alphabet: characters must be unique")
    vocab = {token: i for i, token in enumerate(SPECIAL_TOKENS)}
    for char in alphabet:
        vocab[char] = len(vocab)
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
    core.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    core.decoder = decoders.Fuse()
    core.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", special_tokens=[(BOS, vocab[BOS])]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token=BOS,
        eos_token=EOS,
        pad_token=PAD,
        unk_token=UNK,
        padding_side="left",
    )


def load_tokenizer(name_or_path: str | Path) -> PreTrainedTokenizerBase:
    """The tokenizer saved in a model folder (or named by a hub id), loaded faithfully."""
    config_file = Path(name_or_path) / "tokenizer_config.json"
    if config_file.is_file():
        saved_class = json.loads(config_file.read_text()).get("tokenizer_class")
        if saved_class in _GENERIC_TOKENIZER_CLASSES:
            return PreTrainedTokenizerFast.from_pretrained(str(name_or_path))
    tokenizer = AutoTokenizer.from_pretrained(str(name_or_path))
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    return tokenizer
