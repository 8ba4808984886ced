"""`describe`: a config written out as a commented params file (``isobook config``)."""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import textwrap
import typing
from typing import Any

import yaml

from isobook.config.fields import bounds
from isobook.config.loading import Config


def describe(config: Config) -> str:
    """`config` as a params file: each section under its docstring, each field with its
    value and, as a comment, its help text and allowed values (a subsection, such as
    ``task.chain``, indented under its section). `load_config` reads the text back to the
    same config."""
    lines = ["# An isobook config: every field, its value, what it means and what it allows."]
    for section in dataclasses.fields(config):
        part = getattr(config, section.name)
        lines += ["", *_comment_block(inspect.getdoc(type(part)) or "", ""), f"{section.name}:",
                  *_section_lines(part, "  ")]
    return "\n".join(lines) + "\n"


def _section_lines(part: Any, indent: str) -> list[str]:
    """The fields of section `part` at `indent`, comments aligned; subsections after them."""
    fields = dataclasses.fields(part)
    rows = [(f"{indent}{f.name}: {_one_line_yaml(getattr(part, f.name))}", _field_note(f.metadata))
            for f in fields if not dataclasses.is_dataclass(getattr(part, f.name))]
    # Comments line up, except after the odd long value (a prompt template), which
    # would otherwise push every comment of its section off the screen.
    width = max((len(row) for row, _ in rows if len(row) <= 40), default=0)
    lines = [f"{row:<{width}}  # {note}" for row, note in rows]
    for f in fields:
        inner = getattr(part, f.name)
        if dataclasses.is_dataclass(inner):
            lines += [*_comment_block(inspect.getdoc(type(inner)) or "", indent), f"{indent}{f.name}:",
                      *_section_lines(inner, indent + "  ")]
    return lines


def _comment_block(text: str, indent: str) -> list[str]:
    """`text` (a docstring) as YAML comment lines at `indent`, each paragraph rewrapped."""
    lines: list[str] = []
    for paragraph in text.split("\n\n"):
        if lines:
            lines.append(f"{indent}#")
        lines += [f"{indent}# {line}" for line in textwrap.wrap(" ".join(paragraph.split()), width=88 - len(indent))]
    return lines


def _field_note(metadata: typing.Mapping[str, Any]) -> str:
    """A field's help text and, where it has them, its choices or range."""
    if metadata.get("choices") is not None:
        return f"{metadata['help']}; allowed: {', '.join(map(str, metadata['choices']))}"
    if metadata.get("low") is not None or metadata.get("high") is not None:
        return f"{metadata['help']}; allowed: {bounds(metadata['low'], metadata['high'])}"
    return metadata["help"]


def _one_line_yaml(value: Any) -> str:
    """`value` as YAML on one line (tuples as lists, strings quoted where YAML needs it)."""
    plain = json.loads(json.dumps(value))
    if isinstance(plain, str) and "\n" in plain:
        return json.dumps(plain)  # a JSON string is a YAML double-quoted one, with its newlines escaped
    text = yaml.safe_dump(plain, default_flow_style=True, sort_keys=False, width=math.inf, allow_unicode=True)
    return text.removesuffix("\n...\n").strip()  # a lone scalar ends with YAML's end-of-document marker
