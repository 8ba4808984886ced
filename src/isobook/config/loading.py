"""The whole config (`Config`, one field per section), read from a params file with ``key=value`` overrides."""

from __future__ import annotations

import dataclasses
import json
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from isobook.config import pipeline, studies
from isobook.config.fields import ConfigError, build


@dataclass(frozen=True)
class Config:
    """Everything one isobook job needs; see the section classes for the fields."""

    model: pipeline.ModelConfig = field(default_factory=pipeline.ModelConfig)
    task: pipeline.TaskConfig = field(default_factory=pipeline.TaskConfig)
    base_model: pipeline.BaseModelConfig = field(default_factory=pipeline.BaseModelConfig)
    sampling: pipeline.SamplingConfig = field(default_factory=pipeline.SamplingConfig)
    sets: pipeline.SetsConfig = field(default_factory=pipeline.SetsConfig)
    train: pipeline.TrainConfig = field(default_factory=pipeline.TrainConfig)
    recipe: pipeline.RecipeConfig = field(default_factory=pipeline.RecipeConfig)
    evaluation: pipeline.EvaluationConfig = field(default_factory=pipeline.EvaluationConfig)
    sweep: pipeline.SweepConfig = field(default_factory=pipeline.SweepConfig)
    lr_envelope: studies.LrEnvelopeConfig = field(default_factory=studies.LrEnvelopeConfig)
    data_reuse: studies.DataReuseConfig = field(default_factory=studies.DataReuseConfig)
    primaries: studies.PrimariesConfig = field(default_factory=studies.PrimariesConfig)
    bandit: studies.BanditConfig = field(default_factory=studies.BanditConfig)
    interference: studies.InterferenceConfig = field(default_factory=studies.InterferenceConfig)
    second_model: studies.SecondModelConfig = field(default_factory=studies.SecondModelConfig)
    baseline: studies.BaselineConfig = field(default_factory=studies.BaselineConfig)
    misconceptions: studies.MisconceptionsConfig = field(default_factory=studies.MisconceptionsConfig)
    book: pipeline.BookConfig = field(default_factory=pipeline.BookConfig)
    system: pipeline.SystemConfig = field(default_factory=pipeline.SystemConfig)

    def __post_init__(self) -> None:
        names = self.set_names()
        chosen_sets = {"train.set": (self.train.set,), "sweep.sets": self.sweep.sets,
                       "interference.sets": self.interference.sets,
                       "lr_envelope.sets": self.lr_envelope.sets, "data_reuse.set": (self.data_reuse.set,), "second_model.set": (self.second_model.set,),
                       "baseline.set": (self.baseline.set,)}
        for where, chosen in chosen_sets.items():
            unknown = [name for name in chosen if name not in names]
            if unknown:
                raise ConfigError(f"{where}: {unknown[0]!r} is not a problem set; allowed: {', '.join(names)}")

        chose = sorted(set(self.primaries.seeds) & set(self.lr_envelope.seeds)) if self.lr_envelope.sets else []
        if chose:
            raise ConfigError(f"primaries.seeds: {chose} also choose the learning rates (lr_envelope.seeds); allowed: "
                              f"confirmatory seeds none of {list(self.lr_envelope.seeds)}")

        second = self.second_model.model.max_positions
        if second not in (self.model.max_positions, pipeline.ModelConfig().max_positions):
            raise ConfigError(f"second_model.model.max_positions: the second model reads the same sequences, "
                              f"model.max_positions={self.model.max_positions} long; allowed: that, or the default "
                              f"(set model.max_positions instead), got {second}")

    def set_names(self) -> tuple[str, ...]:
        """Every problem set `isobook sets` builds under this config."""
        return (*pipeline.SINGLE_SETS, *self.sets.mixtures)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_plain(self) -> dict[str, Any]:
        """`to_dict` in JSON's types (tuples as lists): a run's ``config.yaml`` as it reads back."""
        return json.loads(json.dumps(self.to_dict()))


def load_config(params: str | Path | None = None, overrides: typing.Sequence[str] = ()) -> Config:
    """The config from a params YAML file (optional) with ``key=value`` overrides applied."""
    data: dict[str, Any] = {}
    if params is not None:
        path = Path(params)
        if not path.is_file():
            raise ConfigError(f"params: no such file {path}")
        try:
            loaded = yaml.safe_load(path.read_text()) or {}
        except UnicodeDecodeError as error:
            raise ConfigError(f"params: {path} is not text ({error.reason} at byte {error.start}); "
                              "allowed: a YAML file like params/cpu.yaml") from error
        except yaml.YAMLError as error:
            raise ConfigError(f"params: {path} is not valid YAML {_yaml_problem(error)}") from error
        if not isinstance(loaded, dict):
            raise ConfigError(f"params: {path} holds a {type(loaded).__name__}; allowed: a mapping of "
                              f"sections ({', '.join(f.name for f in dataclasses.fields(Config))})")
        data = loaded
    return _overridden(data, overrides)


def _yaml_problem(error: yaml.YAMLError) -> str:
    """Where YAML parsing failed and why, in one line (PyYAML's own text spans several)."""
    if not isinstance(error, yaml.MarkedYAMLError) or error.problem_mark is None:
        return f"({str(error).splitlines()[0]})"
    mark, context, opened = error.problem_mark, error.context, error.context_mark
    text = f"at line {mark.line + 1}, column {mark.column + 1}: {error.problem}"
    if context and opened is not None:  # e.g. an unclosed '[' is noticed at the end of the file
        text += f" ({context} from line {opened.line + 1}, column {opened.column + 1})"
    return text


def with_overrides(config: Config, overrides: typing.Sequence[str]) -> Config:
    """`config` with ``key=value`` overrides applied, validated like a params file."""
    return _overridden(config.to_dict(), overrides)


def _overridden(data: dict[str, Any], overrides: typing.Sequence[str]) -> Config:
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"override {item!r}: expected key=value, e.g. sets.pool_size=4000")
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError as error:
            raise ConfigError(f"override {item!r}: the value is not valid YAML {_yaml_problem(error)}; "
                              "allowed: a YAML value, e.g. 4000, [4, 8], {hard: 1.0}, or text in quotes") from error
        _set_path(data, key.strip().split("."), value)
    return build(Config, data, "")


def _set_path(data: dict[str, Any], keys: list[str], value: Any) -> None:
    for key in keys[:-1]:
        data = data.setdefault(key, {})
        if not isinstance(data, dict):
            raise ConfigError(f"override {'.'.join(keys)}: {key} is not a section")
    data[keys[-1]] = value
