"""Deployable stacks: composition of the constructs."""

from fm_platform.stacks.inference import InferenceConfig, InferenceStack
from fm_platform.stacks.training import TrainingConfig, TrainingStack
from fm_platform.stacks.training_data import TrainingDataStack

__all__ = [
    "InferenceConfig",
    "InferenceStack",
    "TrainingConfig",
    "TrainingDataStack",
    "TrainingStack",
]
