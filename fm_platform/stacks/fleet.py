"""A fleet plan as CloudFormation stacks: one :class:`InferenceStack` per plan stack.

Each plan stack becomes an ``InferenceStack`` named after it, holding its endpoints (the
planner keeps a stack under 400 estimated resources and 180 outputs; ``InferenceStack``
itself refuses more than 500 resources). Stack assignment lives in the plan, so adding or
removing models never moves an endpoint between stacks. Stacks are independent, so
``cdk deploy --all --concurrency N`` deploys them in parallel.

Alarms: a model's p50 latency objective is the catalog's ``latency_p50_ms`` (per model on
Inference Components endpoints, per endpoint for dedicated models); multi-model endpoints
are watched for errors and instances (their latency includes loading models on demand).

Containers: LMI with ``OPTION_TENSOR_PARALLEL_DEGREE`` = accelerators per copy for the
``lmi`` framework; other frameworks get the stack's default image (override per endpoint
with an :class:`InferenceStack` of your own).
"""

from __future__ import annotations

from typing import Any

from constructs import Construct

from fm_platform.config.inference import (
    InferenceComponentEndpointConfig,
    InferenceComponentModelConfig,
    InferenceConfig,
    MultiModelEndpointConfig,
    SingleModelEndpointConfig,
)
from fm_platform.constructs.inference.component_scaling import ComponentScaling
from fm_platform.constructs.inference.instance_scaling import InstanceScaling
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.observability.endpoint_alarm import EndpointAlarmOptions
from fm_platform.constructs.observability.model_alarm import ModelAlarmOptions
from fm_platform.fleet.catalog import Catalog
from fm_platform.fleet.plan import EndpointPlan, Plan
from fm_platform.fleet.planner import IC, MULTI, SINGLE
from fm_platform.stacks.inference import InferenceStack

#: Invocations per instance per minute a multi-model endpoint scales on.
MME_TARGET_INVOCATIONS = 200.0


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
                container=ModelContainer(environment=_environment(entry.framework, p.accelerators)),
                initial_copies=1,
                scaling=None
                if fixed
                else ComponentScaling(
                    min_copies=p.min_copies,
                    max_copies=max(1, p.max_copies),
                    target_value=entry.rpm_per_copy,
                ),
                alarms=ModelAlarmOptions(latency_objective_ms=entry.latency_p50_ms),
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
            target_invocations_per_instance=entry.rpm_per_copy,
        )
        if endpoint.max_instances > 1
        else None
    )
    return SingleModelEndpointConfig(
        name=endpoint.name,
        instance_type=endpoint.instance_type,
        container=ModelContainer(environment=_environment(entry.framework, p.accelerators)),
        scaling=scaling,
        network_isolation=True,
        alarms=EndpointAlarmOptions(latency_objective_ms=entry.latency_p50_ms),
    )


def _multi(endpoint: EndpointPlan) -> MultiModelEndpointConfig:
    return MultiModelEndpointConfig(
        name=endpoint.name,
        instance_type=endpoint.instance_type,
        scaling=InstanceScaling(
            min_instances=endpoint.min_instances,
            max_instances=max(endpoint.min_instances, endpoint.max_instances),
            target_invocations_per_instance=MME_TARGET_INVOCATIONS,
        ),
    )


def stack_config(plan: Plan, catalog: Catalog, stack: str) -> InferenceConfig:
    """The :class:`InferenceConfig` of one plan stack."""
    endpoints = plan.endpoints_in(stack)
    return InferenceConfig(
        ic_endpoints=tuple(_ic_endpoint(plan, catalog, e) for e in endpoints if e.kind == IC),
        single_model_endpoints=tuple(
            _single(plan, catalog, e) for e in endpoints if e.kind == SINGLE
        ),
        multi_model_endpoints=tuple(_multi(e) for e in endpoints if e.kind == MULTI),
    )


def fleet_stacks(
    scope: Construct, plan: Plan, catalog: Catalog, **stack_kwargs: Any
) -> dict[str, InferenceStack]:
    """One :class:`InferenceStack` per plan stack, by stack name."""
    return {
        stack: InferenceStack(
            scope,
            stack,
            config=stack_config(plan, catalog, stack),
            description=f"fm_platform fleet {plan.catalog}: stack {stack} of "
            f"{len(plan.stacks)} (planned from a model catalog)",
            **stack_kwargs,
        )
        for stack in plan.stacks
    }


def fleet_stacks_from_file(scope: Construct, catalog_path: str) -> dict[str, InferenceStack]:
    """Plan the catalog at ``catalog_path`` (keeping ``<catalog>.plan.json`` when it exists,
    and writing it) and add its stacks to ``scope``."""
    from fm_platform.fleet.catalog import load_catalog
    from fm_platform.fleet.plan import default_plan_file, read_plan
    from fm_platform.fleet.planner import plan_fleet
    from fm_platform.fleet.sizing import families

    plan_file = default_plan_file(catalog_path)
    catalog = load_catalog(catalog_path, families())
    plan = plan_fleet(catalog, read_plan(plan_file))
    plan.write(plan_file)
    return fleet_stacks(scope, plan, catalog)
