"""Builds the default app: the training and inference stacks from an :class:`AppConfig`,
with the cdk-nag packs applied."""

from __future__ import annotations

from dataclasses import dataclass

import aws_cdk as cdk

from fm_platform.compliance import apply_compliance_packs
from fm_platform.config import AppConfig
from fm_platform.stacks.inference import InferenceStack
from fm_platform.stacks.training import TrainingStack


@dataclass(frozen=True)
class DefaultStacks:
    """The stacks :func:`build_app` created; ``None`` where the config turned one off."""

    training: TrainingStack | None
    inference: InferenceStack | None


def build_app(app: cdk.App, config: AppConfig | None = None) -> DefaultStacks:
    """Add the platform's stacks to ``app`` and run the compliance packs on it.

    ``config`` defaults to what the app's context says (:meth:`AppConfig.from_context`):
    the seed examples unless a config file or a ``fm_platform`` context object overrides
    them. With context ``catalog`` (``cdk synth -c catalog=examples/catalog.yaml``) the app
    holds the catalog's planned fleet stacks instead (:mod:`fm_platform.stacks.fleet`).
    Stacks are environment-agnostic: synth needs no credentials and no lookups.
    """
    catalog = app.node.try_get_context("catalog")
    if catalog:
        from fm_platform.stacks.fleet import fleet_stacks_from_file

        fleet_stacks_from_file(app, catalog)
        apply_compliance_packs(app)
        return DefaultStacks(training=None, inference=None)
    config = config or AppConfig.from_context(app)
    training = (
        TrainingStack(
            app,
            config.training_stack_name,
            config=config.training,
            description="fm_platform: SageMaker HyperPod (Slurm) training cluster, "
            "its network, FSx for Lustre and lifecycle scripts",
        )
        if config.deploy_training
        else None
    )
    inference = (
        InferenceStack(
            app,
            config.inference_stack_name,
            config=config.inference,
            description="fm_platform: SageMaker endpoints for foundation models "
            "(Inference Components, single-model, multi-model)",
        )
        if config.deploy_inference
        else None
    )
    apply_compliance_packs(app)
    return DefaultStacks(training=training, inference=inference)
