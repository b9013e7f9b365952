"""Deployable stacks: composition of the constructs."""

from fm_platform.stacks.inference import InferenceConfig, InferenceStack
from fm_platform.stacks.training import TrainingConfig, TrainingStack

__all__ = ["InferenceConfig", "InferenceStack", "TrainingConfig", "TrainingStack"]
