"""Rollout engines: n sampled completions per prompt, with per-token log-probs."""

from isobook.rollout.base import RolloutEngine, Rollouts
from isobook.rollout.engines import inference_engine, training_engine
from isobook.rollout.torch_engine import TorchEngine

__all__ = ["RolloutEngine", "Rollouts", "TorchEngine", "inference_engine", "training_engine"]
