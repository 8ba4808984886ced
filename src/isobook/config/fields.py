"""The validation machinery: `Section`, `option` fields with help and allowed values, `build` from plain data.

A section's own checks (`Section.check`) name its fields relative to it (``num_heads: must
divide hidden_size=96``) and the section prefixes its `Section.PATH` (``model.num_heads``);
`build` puts the path it was read at in its place, so the same section read under ``model``
and under ``second_model.model`` names the field the user wrote.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Sequence
from dataclasses import field
from typing import Any, ClassVar


class ConfigError(ValueError):
    """A params file or override names an unknown field or gives a value it does not allow."""


class Section:
    """A config section (a frozen dataclass deriving from this): `check` raises `ConfigError`
    naming fields relative to the section, and the error carries `PATH`, where the section
    sits in a params file."""

    PATH: ClassVar[str] = ""

    def __post_init__(self) -> None:
        try:
            self.check()
        except ConfigError as error:
            raise ConfigError(join(self.PATH, str(error))) from None

    def check(self) -> None:
        """Checks across this section's fields (each field's own range is `build`'s)."""


def option(default: Any, help: str, *, low: float | None = None, high: float | None = None,
           choices: tuple[Any, ...] | None = None, factory: bool = False) -> Any:
    """A dataclass field with its help text and allowed values, checked by `build`.

    `low`/`high` bound numbers (inclusive); `choices` lists allowed values; `factory`: `default`
    is called for each new instance (mutable values, nested sections).
    """
    metadata = {"help": help, "low": low, "high": high, "choices": choices}
    if factory:
        return field(default_factory=default, metadata=metadata)
    return field(default=default, metadata=metadata)


def needs_powers_of_two(name: str, values: int | Sequence[int], least: int = 1) -> None:
    """Raise naming field `name` unless `values` (one number, or a non-empty list) are powers of two >= `least`."""
    listed = [values] if isinstance(values, int) else list(values)
    if not listed or any(v < least or v & (v - 1) for v in listed):
        wanted = ("a power of two" if isinstance(values, int) else "powers of two") + (f" >= {least}" if least > 1 else "")
        raise ConfigError(f"{name}: needs {wanted}, got {values if isinstance(values, int) else listed}")


def needs_distinct_seeds(name: str, seeds: Sequence[int]) -> None:
    """Raise naming field `name` unless `seeds` holds at least two distinct seeds >= 0."""
    if len(set(seeds)) < 2 or min(seeds) < 0:
        raise ConfigError(f"{name}: needs at least two distinct seeds >= 0, got {list(seeds)}")


# Fields of earlier versions, and what a params file says instead.
REPLACED_FIELDS = {
    "recipe.normalize_std": "recipe.advantage (true: grpo, false: drgrpo)",
    **{f"task.{name}": f"task.chain.{name}" for name in
       ("min_ops", "max_ops", "min_carries", "max_carries", "max_value", "slip_carry", "slip_plain", "conflict")},
    **{f"task.{name}": f"task.math_file.{name}" for name in
       ("path", "question_field", "answer_field", "prompt_template", "chat_template", "instruction")},
    "data_reuse.seeds": "primaries.seeds (the data-reuse grid trains on the confirmatory seeds)",
    "interference.conflict": "nothing (the book runs no dialect arm; task.chain.conflict sets the task's own)",
    **{f"second_model.{name}": f"second_model.model.{name}" for name in
       ("source", "architecture", "hidden_size", "num_layers", "num_heads", "num_kv_heads", "intermediate_size")},
}


def build(cls: type, data: Any, where: str, base: Any = None) -> Any:
    """An instance of dataclass `cls` from plain `data`, every field checked; fields `data`
    leaves out keep their value in `base` (an instance of `cls`), else the class default."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where or 'params'}: expected a mapping, got {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        path = join(where, unknown[0])
        if path in REPLACED_FIELDS:
            raise ConfigError(f"{path}: replaced; allowed: {REPLACED_FIELDS[path]}")
        raise ConfigError(f"{path}: unknown field; allowed: {', '.join(sorted(fields))}")
    hints = typing.get_type_hints(cls)
    values = {name: _check(join(where, name), hints[name], value, fields[name], _current(base, fields[name]))
              for name, value in data.items()}
    kept = {f.name: getattr(base, f.name) for f in dataclasses.fields(base)} if base is not None else {}
    try:
        return cls(**{**kept, **values})
    except ConfigError as error:  # the section's own check, at the section's usual place
        own = f"{getattr(cls, 'PATH', '')}."
        if not where or own == "." or not str(error).startswith(own):
            raise
        raise ConfigError(f"{where}.{str(error).removeprefix(own)}") from None


def _current(base: Any, field_: dataclasses.Field) -> Any:
    """`field_`'s value in `base` (an instance of the section, perhaps of an earlier class
    without the field), else its default."""
    if base is not None and hasattr(base, field_.name):
        return getattr(base, field_.name)
    return default_of(field_)


def join(where: str, name: str) -> str:
    """The dotted path of field `name` in the section at `where` (``''``: the top)."""
    return f"{where}.{name}" if where else name


def default_of(field_: dataclasses.Field) -> Any:
    """The value a field takes when the params leave it out."""
    if field_.default_factory is not dataclasses.MISSING:
        return field_.default_factory()
    return field_.default


def _check(path: str, hint: Any, value: Any, field_: dataclasses.Field, current: Any) -> Any:
    """`value` for `field_` at `path`, checked; a subsection starts from `current`, its value so far."""
    if dataclasses.is_dataclass(hint):
        return build(hint, value, path, base=current)
    metadata = field_.metadata
    choices = metadata.get("choices")
    if isinstance(value, bool) and choices is not None and {"on", "off"} <= set(choices):
        value = "on" if value else "off"  # YAML 1.1 reads a bare on/off as a boolean
    value = _coerce(path, hint, value)
    if choices is not None and value not in choices:
        raise ConfigError(f"{path}: {value!r} is not allowed; allowed: {', '.join(map(str, choices))}")
    low, high = metadata.get("low"), metadata.get("high")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if low is not None and value < low or high is not None and value > high:
            raise ConfigError(f"{path}: {value} is out of range; allowed: {bounds(low, high)}")
    return value


def bounds(low: float | None, high: float | None) -> str:
    """An inclusive range as the errors and `describe` write it: ``[1, inf]``."""
    return f"[{low if low is not None else '-inf'}, {high if high is not None else 'inf'}]"


def _coerce(path: str, hint: Any, value: Any) -> Any:
    """`value` as type `hint`, or a ConfigError saying what type was expected."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _coerce(path, inner[0], value)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{path}: expected a list, got {value!r}")
        return tuple(_coerce(f"{path}[{i}]", args[0], v) for i, v in enumerate(value))
    if origin is tuple:
        if not isinstance(value, (list, tuple)) or len(value) != len(args):
            raise ConfigError(f"{path}: expected a list of {len(args)} numbers, got {value!r}")
        return tuple(_coerce(f"{path}[{i}]", a, v) for i, (a, v) in enumerate(zip(args, value)))
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: expected a mapping, got {value!r}")
        key_type, value_type = args
        return {_coerce(path, key_type, k): _coerce(f"{path}.{k}", value_type, v) for k, v in value.items()}
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint is float and isinstance(value, str):
        try:  # YAML 1.1 reads 5e-3 (no dot) as a string
            return float(value)
        except ValueError:
            pass
    if hint in (int, float, str, bool) and (type(value) is not hint):
        raise ConfigError(f"{path}: expected {hint.__name__}, got {value!r} ({type(value).__name__})")
    return value
