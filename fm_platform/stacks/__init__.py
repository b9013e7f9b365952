"""Deployable stacks: composition of the constructs."""

from fm_platform.stacks.training import TrainingConfig, TrainingStack

__all__ = ["TrainingConfig", "TrainingStack"]
