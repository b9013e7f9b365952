"""Deployable stacks: composition of the constructs."""

from fm_platform.config.inference import InferenceConfig
from fm_platform.config.training import TrainingConfig
from fm_platform.stacks.inference import InferenceStack
from fm_platform.stacks.training import TrainingStack
from fm_platform.stacks.training_data import TrainingDataStack

__all__ = [
    "InferenceConfig",
    "InferenceStack",
    "TrainingConfig",
    "TrainingDataStack",
    "TrainingStack",
]
