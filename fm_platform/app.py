"""Builds the default app: the training and inference stacks from an :class:`AppConfig`,
with the cdk-nag packs applied. :func:`main` is the entry point ``app.py`` runs."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import aws_cdk as cdk

from fm_platform.compliance import apply_compliance_packs
from fm_platform.config import AppConfig, config_source, load_config
from fm_platform.rules.problems import ValidationError
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
            notifications=config.notifications,
            dashboards=config.dashboards,
            # Its stateful half (network, FSx, buckets) goes into "<name>Data".
            description="fm_platform: SageMaker HyperPod (Slurm) training cluster and its "
            "lifecycle-script upload",
        )
        if config.deploy_training
        else None
    )
    inference = (
        InferenceStack(
            app,
            config.inference_stack_name,
            config=config.inference,
            notifications=config.notifications,
            dashboards=config.dashboards,
            description="fm_platform: SageMaker endpoints for foundation models "
            "(Inference Components, single-model, multi-model)",
        )
        if config.deploy_inference
        else None
    )
    apply_compliance_packs(app)
    return DefaultStacks(training=training, inference=inference)


def main() -> int:
    """Synthesize the app from the configuration its context names, saying on stderr which
    one (so every ``cdk`` command shows it). A bad configuration prints
    ``fm_platform: invalid configuration:`` and one line per problem, and returns 1."""
    app = cdk.App()
    try:
        source = config_source(app)
        print(f"fm_platform: using {source.description}", file=sys.stderr)
        config = AppConfig() if source.data is None else load_config(source.data)
        build_app(app, config)
    except ValidationError as error:
        print(f"fm_platform: {error}", file=sys.stderr)
        return 1
    app.synth()
    return 0
