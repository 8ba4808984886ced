"""What the policy reads: a problem in the checkpoint's chat template, and prompt text as token ids.

An instruct checkpoint expects what TRL, verl and OpenRLHF give it: the question in a user
turn of its tokenizer's chat template, followed by the assistant's generation prompt
(``task.math_file.chat_template``). The rendered text already holds the special tokens the template
writes, a BOS among them (Llama 3's ``<|begin_of_text|>``), so it is tokenized without
adding any, as ``apply_chat_template(tokenize=True)`` does; tokenizing it with special
tokens would put a second BOS in front. A raw prompt (isobook's own tasks and models) gets
the tokenizer's special tokens as before (``<bos>``).

The prompt text is written once, when a problem is drawn, and stored with the problem
sets, so profiling, training and evaluation all read the same text; the rollout engines
are the one place it becomes token ids (`encode_prompts`), and the trainer scores the ids
they return with the rollouts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from isobook.config import ConfigError

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase


def uses_chat_template(mode: str, tokenizer: PreTrainedTokenizerBase | None) -> bool:
    """Whether prompts are written in `tokenizer`'s chat template under ``task.math_file.chat_template``
    `mode` (auto: when the tokenizer has one; on: it must; off: never).

    Raises `ConfigError` for ``on`` with a tokenizer that has no template, and ValueError
    when `mode` needs a tokenizer to decide and none is given."""
    if mode == "off":
        return False
    if tokenizer is None:
        raise ValueError(f"task.math_file.chat_template: {mode!r} needs the policy's tokenizer to write prompts; "
                         "pass it to make_task (or set task.math_file.chat_template=off)")
    has_template = bool(tokenizer.chat_template)
    if mode == "on" and not has_template:
        raise ConfigError(f"task.math_file.chat_template: 'on' needs a tokenizer with a chat template, and "
                          f"{tokenizer.name_or_path or 'this tokenizer'} has none; allowed: auto, off")
    return has_template


def chat_prompt(tokenizer: PreTrainedTokenizerBase, question: str, instruction: str) -> str:
    """`question` (then `instruction` on a new line, where not empty) as one user turn of
    `tokenizer`'s chat template, ending in the assistant's generation prompt."""
    content = f"{question}\n{instruction}" if instruction else question
    return tokenizer.apply_chat_template([{"role": "user", "content": content}], tokenize=False,
                                         add_generation_prompt=True)


def encode_prompts(tokenizer: PreTrainedTokenizerBase, prompts: list[str], chat: bool) -> list[list[int]]:
    """Token ids of each prompt: chat-template text as written (its special tokens are in the
    text), a raw prompt with the tokenizer's special tokens added."""
    return tokenizer(prompts, add_special_tokens=not chat)["input_ids"]
