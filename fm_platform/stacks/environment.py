"""The platform's stacks, once per app or once per environment.

:func:`add_default_stacks` adds the training and inference stacks of one
:class:`~fm_platform.config.AppConfig` to a scope (the app, or a stage).
:class:`EnvironmentStage` is one environment of the configuration
(:class:`~fm_platform.config.environments.EnvironmentConfig`): a ``cdk.Stage`` bound to its
account and region holding those stacks, and the fleet stacks of its catalog planned for its
region. Its stacks are named ``<environment>-<stack>`` (``prod-FmpInference``) and listed by
``cdk ls`` as ``prod/FmpInference``; their construct IDs, and so their logical IDs, are
those of the single-environment app.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import aws_cdk as cdk
from constructs import Construct

from fm_platform.config import AppConfig
from fm_platform.config.environments import EnvironmentConfig
from fm_platform.constructs.secure_bucket import BucketOptionsAspect
from fm_platform.fleet.models.catalog import Catalog
from fm_platform.fleet.outputs.plan import Plan, default_plan_file
from fm_platform.rules.problems import Problems
from fm_platform.stacks.fleet import fleet_stacks, planned_catalog_file
from fm_platform.stacks.inference import InferenceStack
from fm_platform.stacks.training import TrainingStack
from fm_platform.stacks.training_eks import TrainingEksStack


@dataclass(frozen=True)
class DefaultStacks:
    """The stacks :func:`add_default_stacks` created; ``None`` where the config turned one
    off. ``stages``: the environments' stages, by name, when the configuration names
    environments (then the app itself holds no default stack)."""

    training: TrainingStack | TrainingEksStack | None
    inference: InferenceStack | None
    stages: dict[str, EnvironmentStage] = field(default_factory=dict)


def add_default_stacks(scope: Construct, config: AppConfig) -> DefaultStacks:
    """The training and inference stacks of ``config`` in ``scope``, with the buckets'
    options applied; the compliance packs are the caller's (the app's)."""
    training: TrainingStack | TrainingEksStack | None = None
    if config.deploy_training and config.training.uses_eks:
        training = TrainingEksStack(
            scope,
            config.training_stack_name,
            config=config.training,
            notifications=config.notifications,
            dashboards=config.dashboards,
            description="fm_platform: SageMaker HyperPod training cluster orchestrated by "
            "Amazon EKS",
        )
    elif config.deploy_training:
        training = TrainingStack(
            scope,
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
            scope,
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
    BucketOptionsAspect(config.buckets).add_to(scope)
    return DefaultStacks(training=training, inference=inference)


def environment_plan_file(environment: EnvironmentConfig) -> Path | None:
    """The plan file of the environment's catalog: its ``plan_file``, else
    ``<catalog>.<name>.plan.json`` next to the catalog; None without a catalog."""
    if environment.catalog is None:
        return None
    if environment.plan_file is not None:
        return Path(environment.plan_file)
    default = default_plan_file(environment.catalog)
    return default.with_name(default.name.replace(".plan.json", f".{environment.name}.plan.json"))


def plan_environments(
    environments: tuple[EnvironmentConfig, ...],
) -> dict[str, tuple[Plan, Catalog]]:
    """Each environment's catalog planned for its region (its plan file kept and written),
    by environment name; raises one ValidationError naming every environment whose catalog
    or plan file is refused (a catalog's own problems, a plan file of another region)."""
    problems = Problems("environments' catalogs")
    plans = {}
    for index, environment in enumerate(environments):
        plan_file = environment_plan_file(environment)
        if environment.catalog is None or plan_file is None:
            continue
        try:
            plans[environment.name] = planned_catalog_file(
                environment.catalog, region=environment.region, plan_file=plan_file
            )
        except ValueError as error:
            problems.add(
                f"environments[{index}].catalog",
                environment.catalog,
                f"environment {environment.name!r} ({environment.region}, plan file "
                f"{plan_file}): {str(error).replace(chr(10), ' ')}",
            )
    problems.raise_if_any()
    return plans


class EnvironmentStage(cdk.Stage):
    """One environment: a stage bound to its account and region, holding the default
    stacks of its configuration and the fleet stacks of its catalog's plan (``fleet``,
    planned for the stage's region by :func:`plan_environments`), its tags on every
    resource."""

    def __init__(
        self,
        scope: Construct,
        environment: EnvironmentConfig,
        *,
        fleet: tuple[Plan, Catalog] | None = None,
    ) -> None:
        super().__init__(
            scope,
            environment.name,
            env=cdk.Environment(account=environment.account, region=environment.region),
        )
        self.environment = environment
        self.stacks = add_default_stacks(self, environment.config)
        config = environment.config
        self.fleet = (
            fleet_stacks(
                self, *fleet, notifications=config.notifications, dashboards=config.dashboards
            )
            if fleet is not None
            else {}
        )
        for key, value in sorted(environment.tags.items()):
            cdk.Tags.of(self).add(key, value)
