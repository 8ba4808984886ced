"""Configuration: dataclass sections loaded from YAML in ``params/``, every field checked.

A params file holds any subset of the sections; ``key=value`` overrides from the command
line (``sets.pool_size=4000``, ``task.chain.conflict=0.5``) are applied on top, values parsed
as YAML. Every field is checked before any work starts: an unknown key, a wrong type or a
value out of range raises `ConfigError` naming the field and what it allows.

    fields.py      `option`, `build` and the shared checks (the validation machinery)
    pipeline.py    model, task (chain / math_file), base_model, sampling, sets, train,
                   recipe, evaluation, sweep, book, system
    studies.py     lr_envelope and data_reuse (chapter 02), primaries (the book's pre-registered
                   claims and their confirmatory seeds), bandit and interference (chapters 04
                   and 08), second_model and baseline (chapter 07), misconceptions (chapter 08)
    loading.py     `Config` (all sections and the checks across them), `load_config`, overrides
    describing.py  `describe`: a config as a commented params file
"""

from isobook.config.describing import describe
from isobook.config.fields import ConfigError
from isobook.config.loading import Config, load_config, with_overrides
from isobook.config.pipeline import (
    ADVANTAGE_ESTIMATORS,
    BINNED_SETS,
    REGULARISED_SETS,
    SINGLE_SETS,
    BaseModelConfig,
    BookConfig,
    ChainTaskConfig,
    EvaluationConfig,
    MathFileTaskConfig,
    ModelConfig,
    RecipeConfig,
    SamplingConfig,
    SetsConfig,
    SweepConfig,
    SystemConfig,
    TaskConfig,
    TrainConfig,
    regularised,
)
from isobook.config.studies import (
    BanditConfig,
    BaselineConfig,
    DataReuseConfig,
    InterferenceConfig,
    LrEnvelopeConfig,
    MisconceptionsConfig,
    PrimariesConfig,
    SecondModelConfig,
)

__all__ = [
    "ADVANTAGE_ESTIMATORS", "BINNED_SETS", "REGULARISED_SETS", "SINGLE_SETS", "BanditConfig", "BaseModelConfig",
    "BaselineConfig", "BookConfig", "ChainTaskConfig", "Config", "ConfigError", "DataReuseConfig",
    "EvaluationConfig", "InterferenceConfig", "LrEnvelopeConfig", "MathFileTaskConfig", "MisconceptionsConfig",
    "ModelConfig", "PrimariesConfig", "RecipeConfig",
    "SamplingConfig", "SecondModelConfig", "SetsConfig", "SweepConfig", "SystemConfig", "TaskConfig", "TrainConfig",
    "describe", "load_config", "regularised", "with_overrides",
]
