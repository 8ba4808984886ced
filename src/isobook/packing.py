"""Packing variable-length sequences into fixed-width rows, without padding waste.

Sequences go into rows of `row_tokens` tokens first-fit decreasing; positions restart at 0
for each sequence, which transformers turns into a block-diagonal causal mask (no attention
across sequences) when the model runs with ``position_ids`` and ``use_cache=False``.
Both the base model's supervised steps and the GRPO update pack this way: on this task
sequences run from 8 to 130 tokens, and padding each to the longest wasted half a batch
(a packed 128-sample step was 1.5x faster than a padded one, measured here).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class Packed:
    """Rows of packed sequences and where each sequence landed."""

    input_ids: torch.Tensor  # [rows, row_tokens], `pad` after the last sequence of a row
    position_ids: torch.Tensor  # [rows, row_tokens], restarting at 0 for every sequence
    row: list[int]  # [sequences] row holding each sequence
    start: list[int]  # [sequences] its first token's column in that row


def pack_sequences(sequences: list[list[int]], row_tokens: int, pad: int) -> Packed:
    """`sequences` (token ids) packed into rows of `row_tokens`; see the module docstring."""
    rows: list[list[int]] = []
    free: list[int] = []
    row_of = [0] * len(sequences)
    start_of = [0] * len(sequences)
    for index in sorted(range(len(sequences)), key=lambda i: -len(sequences[i])):
        length = len(sequences[index])
        if length > row_tokens:
            raise ValueError(f"model.max_positions: a {length}-token sequence does not fit rows of {row_tokens}")
        slot = next((r for r, room in enumerate(free) if room >= length), None)
        if slot is None:
            rows.append([])
            free.append(row_tokens)
            slot = len(rows) - 1
        row_of[index], start_of[index] = slot, row_tokens - free[slot]
        rows[slot].append(index)
        free[slot] -= length
    input_ids, positions = [], []
    for members, room in zip(rows, free):
        input_ids.append([t for i in members for t in sequences[i]] + [pad] * room)
        positions.append([p for i in members for p in range(len(sequences[i]))] + list(range(room)))
    return Packed(torch.tensor(input_ids), torch.tensor(positions), row_of, start_of)
