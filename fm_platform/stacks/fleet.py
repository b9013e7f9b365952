"""A fleet plan as CloudFormation stacks: one :class:`InferenceStack` per plan stack.

Each plan stack becomes an ``InferenceStack`` named after it, holding its endpoints (the
planner keeps a stack under 400 estimated resources and 180 outputs; ``InferenceStack``
itself refuses more than 500 resources). Stack assignment lives in the plan, so adding or
removing models never moves an endpoint between stacks. Stacks are independent, so
``cdk deploy --all --concurrency N`` deploys them in parallel.

Kinds: Inference Components, single-model, multi-model and asynchronous endpoints (the
last scaling from zero on the plan's backlog per instance, each instance taking the
concurrency the plan's throughput assumes).

Alarms: a model's p50 latency objective is the catalog's ``latency_p50_ms`` (per model on
Inference Components endpoints, per endpoint for dedicated models); multi-model endpoints
are watched for errors and instances (their latency includes loading models on demand).

Containers: LMI with ``OPTION_TENSOR_PARALLEL_DEGREE`` = accelerators per copy for the
``lmi`` framework; other frameworks get the stack's default image (override per endpoint
with an :class:`InferenceStack` of your own).
"""

from __future__ import annotations

import math
from typing import Any

from constructs import Construct

from fm_platform.config.inference import (
    AsyncEndpointConfig,
    InferenceComponentEndpointConfig,
    InferenceComponentModelConfig,
    InferenceConfig,
    MultiModelEndpointConfig,
    SingleModelEndpointConfig,
)
from fm_platform.constructs.inference.async_scaling import AsyncScaling
from fm_platform.constructs.inference.component_scaling import ComponentScaling
from fm_platform.constructs.inference.instance_scaling import InstanceScaling
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.observability.endpoint_alarm import EndpointAlarmOptions
from fm_platform.constructs.observability.model_alarm import ModelAlarmOptions
from fm_platform.fleet.catalog import Catalog, ModelEntry
from fm_platform.fleet.kinds import ASYNC, IC, MULTI, SINGLE
from fm_platform.fleet.plan import EndpointPlan, Plan
from fm_platform.fleet.sizing import resolve
from fm_platform.stacks.artifacts import ModelArtifactsStack
from fm_platform.stacks.inference import InferenceStack


def _instance_target(endpoint: EndpointPlan) -> float:
    """The plan's scaling target of an instance-scaled endpoint: invocations per instance
    per minute (single-model, multi-model), queued and in-process requests per instance
    (asynchronous)."""
    if endpoint.scaling_target is None:
        raise ValueError(
            f"plan endpoint {endpoint.name} has no scaling target (a version 1 plan file?); "
            "re-plan with fmp plan"
        )
    return endpoint.scaling_target


def _objective_ms(entry: ModelEntry) -> int | None:
    """The catalog's ``latency_p50_ms`` as the whole milliseconds an alarm compares with
    (rounded up, so the alarm never fires below the objective)."""
    return None if entry.latency_p50_ms is None else math.ceil(entry.latency_p50_ms)


def _weights_gib(entry: ModelEntry, catalog: Catalog) -> float:
    """The model's weights (parameters x bytes per parameter), which its startup timeouts
    and storage volume follow."""
    return round(resolve(entry, catalog).weights_gib, 2)


def _environment(framework: str, accelerators: int) -> dict[str, str]:
    if framework != "lmi":
        return {}
    return {
        "OPTION_ROLLING_BATCH": "vllm",
        "OPTION_TENSOR_PARALLEL_DEGREE": str(max(1, accelerators)),
    }


def _ic_endpoint(
    plan: Plan, catalog: Catalog, endpoint: EndpointPlan
) -> InferenceComponentEndpointConfig:
    entries = {m.name: m for m in catalog.models}
    models = []
    for name in endpoint.models:
        p, entry = plan.placements[name], entries[name]
        fixed = p.min_copies == 1 and p.max_copies == 1
        models.append(
            InferenceComponentModelConfig(
                model_name=name,
                accelerators=p.accelerators,
                min_memory_mib=p.memory_mib,
                cpu_cores=p.cpu_cores,
                container=ModelContainer(
                    environment=_environment(entry.framework, p.accelerators),
                    model_size_gib=_weights_gib(entry, catalog),
                ),
                initial_copies=1,
                scaling=None
                if fixed
                else ComponentScaling(
                    min_copies=p.min_copies,
                    max_copies=max(1, p.max_copies),
                    target_value=p.rpm_per_copy,
                ),
                alarms=ModelAlarmOptions(latency_objective_ms=_objective_ms(entry)),
            )
        )
    initial = max(1, endpoint.min_instances)
    return InferenceComponentEndpointConfig(
        name=endpoint.name,
        instance_type=endpoint.instance_type,
        models=tuple(models),
        initial_instance_count=initial,
        min_instance_count=endpoint.min_instances,
        max_instance_count=max(initial, endpoint.max_instances),
    )


def _single(plan: Plan, catalog: Catalog, endpoint: EndpointPlan) -> SingleModelEndpointConfig:
    name = endpoint.models[0]
    p = plan.placements[name]
    entry = next(m for m in catalog.models if m.name == name)
    scaling = (
        InstanceScaling(
            min_instances=1,
            max_instances=endpoint.max_instances,
            target_invocations_per_instance=_instance_target(endpoint),
        )
        if endpoint.max_instances > 1
        else None
    )
    return SingleModelEndpointConfig(
        name=endpoint.name,
        instance_type=endpoint.instance_type,
        container=ModelContainer(
            environment=_environment(entry.framework, p.accelerators),
            model_size_gib=_weights_gib(entry, catalog),
        ),
        scaling=scaling,
        network_isolation=True,
        alarms=EndpointAlarmOptions(latency_objective_ms=_objective_ms(entry)),
    )


def _multi(catalog: Catalog, endpoint: EndpointPlan) -> MultiModelEndpointConfig:
    entries = {m.name: m for m in catalog.models}
    return MultiModelEndpointConfig(
        name=endpoint.name,
        instance_type=endpoint.instance_type,
        model_size_gib=max(_weights_gib(entries[name], catalog) for name in endpoint.models),
        scaling=InstanceScaling(
            min_instances=endpoint.min_instances,
            max_instances=max(endpoint.min_instances, endpoint.max_instances),
            target_invocations_per_instance=_instance_target(endpoint),
        ),
    )


def _async(plan: Plan, catalog: Catalog, endpoint: EndpointPlan) -> AsyncEndpointConfig:
    """An asynchronous endpoint scaling from zero to the plan's peak instances on the plan's
    backlog per instance, each instance taking the concurrency its throughput is planned
    at."""
    name = endpoint.models[0]
    p = plan.placements[name]
    entry = next(m for m in catalog.models if m.name == name)
    return AsyncEndpointConfig(
        name=endpoint.name,
        model_name=name,
        instance_type=endpoint.instance_type,
        container=ModelContainer(
            environment=_environment(entry.framework, p.accelerators),
            model_size_gib=_weights_gib(entry, catalog),
        ),
        scaling=AsyncScaling(
            min_instances=0,
            max_instances=max(1, endpoint.max_instances),
            target_backlog_per_instance=_instance_target(endpoint),
        ),
        max_concurrent_invocations_per_instance=p.concurrency,
    )


def stack_config(plan: Plan, catalog: Catalog, stack: str) -> InferenceConfig:
    """The :class:`InferenceConfig` of one plan stack."""
    endpoints = plan.endpoints_in(stack)
    return InferenceConfig(
        ic_endpoints=tuple(_ic_endpoint(plan, catalog, e) for e in endpoints if e.kind == IC),
        single_model_endpoints=tuple(
            _single(plan, catalog, e) for e in endpoints if e.kind == SINGLE
        ),
        multi_model_endpoints=tuple(_multi(catalog, e) for e in endpoints if e.kind == MULTI),
        async_endpoints=tuple(_async(plan, catalog, e) for e in endpoints if e.kind == ASYNC),
    )


def fleet_stacks(
    scope: Construct, plan: Plan, catalog: Catalog, **stack_kwargs: Any
) -> dict[str, InferenceStack]:
    """One :class:`InferenceStack` per plan stack, by stack name, all reading their models
    from one :class:`ModelArtifactsStack` named ``<catalog>-artifacts`` (deploy it and
    upload the models first)."""
    artifacts = ModelArtifactsStack(
        scope,
        f"{plan.catalog}-artifacts",
        description=f"fm_platform fleet {plan.catalog}: model artifacts bucket (deploy it and "
        "upload the models before the endpoint stacks)",
        **stack_kwargs,
    )
    stacks = {}
    for stack in plan.stacks:
        stacks[stack] = InferenceStack(
            scope,
            stack,
            config=stack_config(plan, catalog, stack),
            artifacts=artifacts.artifacts,
            description=f"fm_platform fleet {plan.catalog}: stack {stack} of "
            f"{len(plan.stacks)} (planned from a model catalog)",
            **stack_kwargs,
        )
    return stacks


def fleet_stacks_from_file(scope: Construct, catalog_path: str) -> dict[str, InferenceStack]:
    """Plan the catalog at ``catalog_path`` (keeping ``<catalog>.plan.json`` when it exists,
    with its region's prices, and writing it) and add its stacks to ``scope``."""
    from fm_platform.fleet.catalog import load_catalog
    from fm_platform.fleet.options import family_types
    from fm_platform.fleet.plan import default_plan_file, read_plan
    from fm_platform.fleet.planner import plan_fleet
    from fm_platform.hardware.prices import DEFAULT_REGION

    plan_file = default_plan_file(catalog_path)
    previous = read_plan(plan_file)
    region = previous.region if previous else DEFAULT_REGION
    catalog = load_catalog(catalog_path, family_types(region))
    plan = plan_fleet(catalog, previous, region=region)
    plan.write(plan_file)
    return fleet_stacks(scope, plan, catalog)
