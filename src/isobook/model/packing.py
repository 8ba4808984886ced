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

import numpy as np
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


@dataclass
class PackedGroups:
    """Rows where each prompt is stored once for several of its completions, and where each
    completion landed."""

    input_ids: torch.Tensor  # [rows, row_tokens], `pad` after the last segment of a row
    position_ids: torch.Tensor  # [rows, row_tokens], a completion's positions continue its prompt's
    attention_mask: torch.Tensor  # [rows, row_tokens, row_tokens] bool, True where query i may attend key j
    row: list[int]  # [completions] row holding each completion
    prompt_end: list[int]  # [completions] column of the last token of its prompt
    start: list[int]  # [completions] column of its first token


def pack_shared_prompts(prompts: list[list[int]], completions: list[list[int]], row_tokens: int,
                        pad: int) -> PackedGroups:
    """Completions packed into rows of `row_tokens` with their prompt stored once per row.

    First-fit decreasing over completions: each goes, in order of length, into the first
    row that already holds its prompt and has room for it, else into the first row with
    room for the prompt and it (a new segment ``prompt, completion, ...``), else into a new
    row. Each completion attends to its segment's prompt and to its own earlier tokens only,
    with positions continuing the prompt's, so its logits are those of ``prompt +
    completion`` alone, while the prompt's tokens are computed once per row rather than once
    per completion (the n completions of a GRPO group share one prompt).
    """
    groups: dict[tuple[int, ...], int] = {}
    group = [groups.setdefault(tuple(prompt), len(groups)) for prompt in prompts]  # [completions]
    free: list[int] = []  # [rows] tokens left
    segments: list[dict[int, list[int]]] = []  # [rows] group -> its completions there, in order
    for index in sorted(range(len(prompts)), key=lambda i: -len(completions[i])):
        prompt_length, length = len(prompts[index]), len(completions[index])
        if prompt_length + length > row_tokens:
            raise ValueError(f"model.max_positions: a {prompt_length + length}-token sequence does not fit rows of "
                             f"{row_tokens}")
        slot = next((r for r, left in enumerate(free) if left >= length and group[index] in segments[r]), None)
        if slot is None:
            slot = next((r for r, left in enumerate(free) if left >= prompt_length + length), None)
            if slot is None:
                free.append(row_tokens)
                segments.append({})
                slot = len(free) - 1
            segments[slot][group[index]] = []
            free[slot] -= prompt_length
        segments[slot][group[index]].append(index)
        free[slot] -= length
    prompt_of_group = dict(zip(group, prompts))
    input_ids, positions, segment, branch = [], [], [], []  # row after row; segment and branch -1 on padding
    row, prompt_end, start = [0] * len(prompts), [0] * len(prompts), [0] * len(prompts)
    number = 0  # of the segment
    for r, held in enumerate(segments):
        ids, position, owner, part = [], [], [], []
        for g, members in held.items():
            prompt = prompt_of_group[g]
            ids += prompt
            position += range(len(prompt))
            owner += [number] * len(prompt)
            part += [0] * len(prompt)
            last_prompt_column = len(ids) - 1
            for k, index in enumerate(members, start=1):
                length = len(completions[index])
                row[index], prompt_end[index], start[index] = r, last_prompt_column, len(ids)
                ids += completions[index]
                position += range(len(prompt), len(prompt) + length)
                owner += [number] * length
                part += [k] * length
            number += 1
        room = row_tokens - len(ids)
        input_ids += ids + [pad] * room
        positions += position + list(range(room))
        segment += owner + [-1] * room
        branch += part + [-1] * room
    shape = (len(segments), row_tokens)
    segment_of, branch_of = (torch.tensor(np.array(x)).view(shape) for x in (segment, branch))  # [rows, row_tokens]
    causal = torch.ones(row_tokens, row_tokens, dtype=torch.bool).tril()  # [row_tokens, row_tokens]
    same_segment = segment_of[:, :, None] == segment_of[:, None, :]
    visible = (branch_of[:, None, :] == 0) | (branch_of[:, :, None] == branch_of[:, None, :])
    return PackedGroups(torch.tensor(np.array(input_ids)).view(shape), torch.tensor(np.array(positions)).view(shape),
                        same_segment & visible & causal, row, prompt_end, start)
