"""Builds the default app: the training and inference stacks from an :class:`AppConfig`,
with the cdk-nag packs applied. :func:`main` is the entry point ``app.py`` runs."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import aws_cdk as cdk

from fm_platform.config import AppConfig, config_source, load_config
from fm_platform.constructs.secure_bucket import BucketOptionsAspect
from fm_platform.core.compliance import apply_compliance_packs
from fm_platform.rules.problems import ValidationError
from fm_platform.stacks.inference import InferenceStack
from fm_platform.stacks.training import TrainingStack
from fm_platform.stacks.training_eks import TrainingEksStack


@dataclass(frozen=True)
class DefaultStacks:
    """The stacks :func:`build_app` created; ``None`` where the config turned one off."""

    training: TrainingStack | TrainingEksStack | None
    inference: InferenceStack | None


CATALOG_CONTEXT_KEY = "catalog"


def build_app(app: cdk.App, config: AppConfig | None = None) -> DefaultStacks:
    """Add the platform's stacks to ``app`` and run the compliance packs on it.

    With context ``catalog`` (named in ``cdk.json``, or ``-c catalog=FILE`` for one
    command) the app holds only the catalog's planned fleet stacks
    (:mod:`fm_platform.stacks.fleet`) and reads no configuration. Otherwise it holds the
    default stacks from ``config``, by default what the app's context names
    (:meth:`AppConfig.from_context`): the configuration file ``cdk.json`` names (the
    project's ``fmp-config.json`` holds the demo fleet) or a ``fm_platform`` context
    object; without either, the training example and no endpoint. Stacks are
    environment-agnostic: synth needs no credentials and no lookups.
    """
    catalog = app.node.try_get_context(CATALOG_CONTEXT_KEY)
    if catalog:
        from fm_platform.stacks.fleet import fleet_stacks_from_file

        fleet_stacks_from_file(app, catalog)
        apply_compliance_packs(app)
        return DefaultStacks(training=None, inference=None)
    config = config or AppConfig.from_context(app)
    training: TrainingStack | TrainingEksStack | None = None
    if config.deploy_training and config.training.uses_eks:
        training = TrainingEksStack(
            app,
            config.training_stack_name,
            config=config.training,
            notifications=config.notifications,
            description="fm_platform: SageMaker HyperPod training cluster orchestrated by "
            "Amazon EKS",
        )
    elif config.deploy_training:
        training = TrainingStack(
            app,
            config.training_stack_name,
            config=config.training,
            notifications=config.notifications,
            dashboards=config.dashboards,
            # Its stateful half (network, FSx, buckets) goes into "<name>Data".
            description="fm_platform: SageMaker HyperPod (Slurm) training cluster and its "
            "lifecycle-script upload",
        )
    inference = (
        InferenceStack(
            app,
            config.inference_stack_name,
            config=config.inference,
            notifications=config.notifications,
            dashboards=config.dashboards,
            # Its model bucket goes into "<name>Artifacts", deployed first.
            description="fm_platform: SageMaker endpoints for foundation models "
            "(Inference Components, single-model, multi-model, asynchronous)",
        )
        if config.deploy_inference
        else None
    )
    BucketOptionsAspect(config.buckets).add_to(app)
    apply_compliance_packs(app)
    return DefaultStacks(training=training, inference=inference)


def main() -> int:
    """Synthesize the app, saying on stderr what it is built from (so every ``cdk``
    command shows it): the catalog of the fleet mode, or the configuration. A bad
    configuration or catalog prints ``fm_platform: invalid ...:`` and one line per problem,
    a failed synth-time check one line; both return 1 without a traceback."""
    app = cdk.App()
    try:
        catalog = app.node.try_get_context(CATALOG_CONTEXT_KEY)
        if catalog:
            print(_fleet_mode_notice(str(catalog)), file=sys.stderr)
            build_app(app)
        else:
            source = config_source(app)
            print(f"fm_platform: using {source.description}", file=sys.stderr)
            config = AppConfig() if source.data is None else load_config(source.data)
            build_app(app, config)
        app.synth()
    except ValidationError as error:
        print(f"fm_platform: {error}", file=sys.stderr)
        return 1
    except RuntimeError as error:
        if "Validation failed" not in str(error):
            raise
        print(f"fm_platform: synthesis stopped: {error}", file=sys.stderr)
        return 1
    return 0


def _fleet_mode_notice(catalog: str) -> str:
    """Which catalog the app plans, and whether ``cdk.json`` names it (else this command
    alone builds the fleet, and the next one without ``-c catalog`` the default stacks)."""
    notice = f"fm_platform: fleet mode: stacks planned from catalog {catalog}; the "
    notice += "configuration file is not read"
    if _catalog_in_cdk_json() != catalog:
        notice += (
            f" (given for this command only: without -c {CATALOG_CONTEXT_KEY}=... the app "
            "builds the default stacks instead; name the catalog under "
            f'"{CATALOG_CONTEXT_KEY}" in cdk.json\'s "context" to make the fleet the '
            "project's app for every command)"
        )
    return notice


def _catalog_in_cdk_json() -> str | None:
    path = Path("cdk.json")
    try:
        context = json.loads(path.read_text()).get("context", {})
    except (OSError, ValueError):
        return None
    value = context.get(CATALOG_CONTEXT_KEY)
    return str(value) if value else None
