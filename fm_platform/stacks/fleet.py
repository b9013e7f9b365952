"""A fleet plan as CloudFormation stacks: one :class:`InferenceStack` per plan stack.

Each plan stack becomes an ``InferenceStack`` named after it, holding its endpoints (the
planner fills a stack to 400 estimated resources and 180 outputs, a re-plan's models
joining its endpoints to 450 and 190; ``InferenceStack`` itself refuses more than 500
resources). Stack assignment lives in the plan, so adding or
removing models never moves an endpoint between stacks. Stacks are independent, so
``cdk deploy --all --concurrency N`` deploys them in parallel.

Kinds: Inference Components, single-model, multi-model, asynchronous endpoints (scaling
from zero on the plan's backlog per instance, each instance taking the concurrency the
plan's throughput assumes) and serverless endpoints (the plan's memory size and
``MaxConcurrency``, no provisioned concurrency).

Alarms: a model's p50 latency objective is the catalog's ``latency_p50_ms`` (per model on
Inference Components endpoints, per endpoint for dedicated and serverless models);
multi-model endpoints
are watched for errors and instances (their latency includes loading models on demand).

Fallback pools: an endpoint the plan gives pools (:mod:`fm_platform.fleet.placing.pools`) lists
their types after its own (``InstancePools``) and may grow to the most instances any of
its types needs; an Inference Components model whose copy takes other resources on a
pool's type gets them there (``Specifications``); where a model's container differs on a
pool's type (image, tensor-parallel degree, concurrency), that type gets a model of its
own reading the same weights (a component's per-type ``ModelName``, a single-model
pool's ``ModelNameOverride``).

Containers: each model runs its container family's Deep Learning Container for the
plan's region and the endpoint's hardware (or the catalog's ``image``), with the
environment that makes it serve what the plan sized (:mod:`fm_platform.fleet.outputs.serving`),
its weights from the catalog's ``weights_uri`` (read and decrypt granted to its role), the
hub (no artifacts) or the artifacts bucket. An endpoint runs network-isolated unless a
model on it downloads from the hub (:func:`fm_platform.fleet.outputs.serving.endpoint_isolated`;
the planner keeps hub models on endpoints of their own). A multi-model endpoint runs the
image and environment the plan's container family gives its models (one for all of
them). LoRA adapters of the catalog become adapter components on their base's component
(:mod:`fm_platform.fleet.models.adapters`).

Moves: a model a re-plan moved to another Inference Components endpoint (the plan's
``moved_from``) gets a component named after its new endpoint
(``<stack>-<model>-<key>-<endpoint>``, kept while it stays there), and so do its
adapters: with the same instance type and variant both endpoints have the same key, and
the new component, created before the old one is deleted, cannot take the old one's name.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

from aws_cdk import CfnOutput, Environment, Stage, Token
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct

from fm_platform.config.inference import (
    AsyncEndpointConfig,
    InferenceComponentEndpointConfig,
    InferenceComponentModelConfig,
    InferenceConfig,
    MultiModelEndpointConfig,
    ServerlessEndpointConfig,
    SingleModelEndpointConfig,
)
from fm_platform.constructs.inference.adapter_component import (
    AdapterComponent,
    AdapterComponentProps,
)
from fm_platform.constructs.inference.async_scaling import AsyncScaling
from fm_platform.constructs.inference.component_scaling import ComponentScaling
from fm_platform.constructs.inference.instance_pools import FallbackPool, InstanceTypeResources
from fm_platform.constructs.inference.instance_scaling import InstanceScaling
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.observability.endpoint_alarm import EndpointAlarmOptions
from fm_platform.constructs.observability.model_alarm import ModelAlarmOptions
from fm_platform.constructs.observability.serverless_alarm import ServerlessEndpointAlarmOptions
from fm_platform.constructs.observability.topic import NotificationTopicOptions
from fm_platform.fleet.deciding.kinds import ASYNC, IC, MULTI, SERVERLESS, SINGLE
from fm_platform.fleet.deciding.options import Shape
from fm_platform.fleet.models.adapters import adapters_by_base
from fm_platform.fleet.models.catalog import Catalog, ModelEntry
from fm_platform.fleet.outputs.plan import (
    EndpointPlan,
    Placement,
    Plan,
    PoolPlan,
    default_plan_file,
    read_plan,
)
from fm_platform.fleet.outputs.serving import ModelServing, endpoint_isolated, model_serving
from fm_platform.fleet.placing.packing import instances_needed
from fm_platform.fleet.planning import plan_catalog
from fm_platform.fleet.sizing.needs import resolve
from fm_platform.hardware.instances import instance_spec
from fm_platform.hardware.prices import DEFAULT_REGION
from fm_platform.rules.problems import Problems
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


def _serving(
    plan: Plan, catalog: Catalog, endpoint: EndpointPlan, name: str, pool: PoolPlan | None = None
) -> ModelServing:
    """How ``name`` is served on the endpoint's type, or on ``pool``'s type with its copy
    shape and concurrency there (the model a pool's type runs when its container
    differs)."""
    entry = next(m for m in catalog.models if m.name == name)
    placement = plan.placements[name]
    if pool is not None:
        shape = pool.models[name]
        placement = replace(
            placement, accelerators=shape.accelerators, concurrency=shape.concurrency
        )
    return model_serving(
        entry,
        resolve(entry, catalog),
        placement,
        pool.instance_type if pool is not None else endpoint.instance_type,
        plan.region,
        adapters=len(adapters_by_base(catalog).get(name, ())),
        kind=endpoint.kind,
    )


def _container(serving: ModelServing, entry: ModelEntry, catalog: Catalog) -> ModelContainer:
    """The container of ``serving``: its image and environment, and its weights (the
    catalog's URI, the artifacts bucket by default, none for a hub model)."""
    return ModelContainer(
        image=serving.image,
        environment=serving.environment,
        model_data_url=serving.weights_uri,
        model_size_gib=_weights_gib(entry, catalog),
        uses_artifacts=entry.hub is None,
    )


def _per_type(
    plan: Plan, catalog: Catalog, endpoint: EndpointPlan, p: Placement, own: ModelContainer
) -> tuple[InstanceTypeResources, ...]:
    """What each copy of ``p`` reserves and runs on the endpoint's fallback types, where it
    differs from its own type (the plan's pools): the type's shape, and a container of its
    own where the container differs there (image, tensor-parallel degree, concurrency)."""
    entry = next(m for m in catalog.models if m.name == p.name)
    entries = []
    for pool in endpoint.pools:
        shape = pool.models[p.name]
        serving = _serving(plan, catalog, endpoint, p.name, pool)
        container = _container(serving, entry, catalog)
        resources = (shape.accelerators, shape.memory_mib, shape.cpu_cores)
        if resources == (p.accelerators, p.memory_mib, p.cpu_cores) and container == own:
            continue
        entries.append(
            InstanceTypeResources(
                instance_type=pool.instance_type,
                accelerators=shape.accelerators,
                min_memory_mib=shape.memory_mib,
                cpu_cores=shape.cpu_cores,
                container=None if container == own else container,
            )
        )
    return tuple(entries)


def _most_instances(endpoint: EndpointPlan) -> int:
    """The most instances the endpoint needs at maximum scale on any of its types."""
    return max([endpoint.max_instances, *(pool.max_instances for pool in endpoint.pools)])


def _ic_endpoint(
    plan: Plan, catalog: Catalog, endpoint: EndpointPlan
) -> InferenceComponentEndpointConfig:
    entries = {m.name: m for m in catalog.models}
    models = []
    for name in endpoint.models:
        p, entry = plan.placements[name], entries[name]
        fixed = p.min_copies == 1 and p.max_copies == 1
        serving = _serving(plan, catalog, endpoint, name)
        container = _container(serving, entry, catalog)
        models.append(
            InferenceComponentModelConfig(
                model_name=name,
                name_suffix=p.component_suffix,
                accelerators=p.accelerators,
                min_memory_mib=p.memory_mib,
                cpu_cores=p.cpu_cores,
                per_instance_type=_per_type(plan, catalog, endpoint, p, container),
                container=container,
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
    # Every component starts at one copy (initial_copies above): the endpoint starts with
    # the instances those copies need, so none waits for managed scaling to add one.
    placements = [plan.placements[name] for name in endpoint.models]
    first_copies = instances_needed(
        ((Shape(p.accelerators, p.memory_mib, p.cpu_cores), 1) for p in placements),
        instance_spec(endpoint.instance_type),
    )
    initial = max(1, endpoint.min_instances, first_copies)
    return InferenceComponentEndpointConfig(
        name=endpoint.name,
        instance_type=endpoint.instance_type,
        models=tuple(models),
        initial_instance_count=initial,
        min_instance_count=endpoint.min_instances,
        max_instance_count=max(initial, _most_instances(endpoint)),
        fallback_instance_types=tuple(endpoint.fallback_types),
        network_isolation=endpoint_isolated(endpoint, entries),
    )


def _single(plan: Plan, catalog: Catalog, endpoint: EndpointPlan) -> SingleModelEndpointConfig:
    name = endpoint.models[0]
    entry = next(m for m in catalog.models if m.name == name)
    most = _most_instances(endpoint)
    scaling = (
        InstanceScaling(
            min_instances=1,
            max_instances=most,
            target_invocations_per_instance=_instance_target(endpoint),
        )
        if most > 1
        else None
    )
    serving = _serving(plan, catalog, endpoint, name)
    container = _container(serving, entry, catalog)
    return SingleModelEndpointConfig(
        name=endpoint.name,
        instance_type=endpoint.instance_type,
        container=container,
        scaling=scaling,
        network_isolation=serving.network_isolation,
        alarms=EndpointAlarmOptions(latency_objective_ms=_objective_ms(entry)),
        fallback_pools=tuple(
            _fallback_pool(plan, catalog, endpoint, pool, container) for pool in endpoint.pools
        ),
    )


def _fallback_pool(
    plan: Plan, catalog: Catalog, endpoint: EndpointPlan, pool: PoolPlan, own: ModelContainer
) -> FallbackPool:
    """A single-model endpoint's fallback pool: with a model of its own when its container
    differs on that type (image, tensor-parallel degree, concurrency), reading the same
    weights."""
    name = endpoint.models[0]
    entry = next(m for m in catalog.models if m.name == name)
    container = _container(_serving(plan, catalog, endpoint, name, pool), entry, catalog)
    if container == own:
        return FallbackPool(instance_type=pool.instance_type)
    return FallbackPool(instance_type=pool.instance_type, container=container)


def _multi(plan: Plan, catalog: Catalog, endpoint: EndpointPlan) -> MultiModelEndpointConfig:
    """A multi-model endpoint running the container the plan names for its models: the
    image and environment of their family on the endpoint's type (the planner gives one
    endpoint models of one container and environment only)."""
    entries = {m.name: m for m in catalog.models}
    serving = _serving(plan, catalog, endpoint, endpoint.models[0])
    return MultiModelEndpointConfig(
        name=endpoint.name,
        instance_type=endpoint.instance_type,
        image=serving.image,
        environment=serving.environment,
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
    serving = _serving(plan, catalog, endpoint, name)
    return AsyncEndpointConfig(
        name=endpoint.name,
        model_name=name,
        instance_type=endpoint.instance_type,
        container=_container(serving, entry, catalog),
        network_isolation=serving.network_isolation,
        scaling=AsyncScaling(
            min_instances=0,
            max_instances=max(1, endpoint.max_instances),
            target_backlog_per_instance=_instance_target(endpoint),
        ),
        max_concurrent_invocations_per_instance=p.concurrency,
    )


def _serverless(plan: Plan, catalog: Catalog, endpoint: EndpointPlan) -> ServerlessEndpointConfig:
    """A serverless endpoint of the plan's memory size (its placement's ``memory_mib``) and
    ``MaxConcurrency`` (its ``max_instances``), on demand (no provisioned concurrency)."""
    name = endpoint.models[0]
    p = plan.placements[name]
    entry = next(m for m in catalog.models if m.name == name)
    serving = _serving(plan, catalog, endpoint, name)
    return ServerlessEndpointConfig(
        name=endpoint.name,
        model_name=name,
        container=_container(serving, entry, catalog),
        memory_size_mib=p.memory_mib,
        max_concurrency=max(1, endpoint.max_instances),
        alarms=ServerlessEndpointAlarmOptions(latency_objective_ms=_objective_ms(entry)),
    )


def stack_config(plan: Plan, catalog: Catalog, stack: str) -> InferenceConfig:
    """The :class:`InferenceConfig` of one plan stack."""
    endpoints = plan.endpoints_in(stack)
    return InferenceConfig(
        ic_endpoints=tuple(_ic_endpoint(plan, catalog, e) for e in endpoints if e.kind == IC),
        single_model_endpoints=tuple(
            _single(plan, catalog, e) for e in endpoints if e.kind == SINGLE
        ),
        multi_model_endpoints=tuple(_multi(plan, catalog, e) for e in endpoints if e.kind == MULTI),
        async_endpoints=tuple(_async(plan, catalog, e) for e in endpoints if e.kind == ASYNC),
        serverless_endpoints=tuple(
            _serverless(plan, catalog, e) for e in endpoints if e.kind == SERVERLESS
        ),
    )


def fleet_stacks(
    scope: Construct,
    plan: Plan,
    catalog: Catalog,
    *,
    notifications: NotificationTopicOptions | None = NotificationTopicOptions(),  # noqa: B008
    dashboards: bool = True,
    **stack_kwargs: Any,
) -> dict[str, InferenceStack]:
    """One :class:`InferenceStack` per plan stack, by stack name, all reading their models
    from one :class:`ModelArtifactsStack` named ``<catalog>-artifacts`` (deploy it and
    upload the models first). ``notifications`` and ``dashboards``: each inference stack's
    (:class:`InferenceStack`), by default a topic without subscriber and a dashboard.

    Every stack is bound to the plan's region (its images, prices and ECR grants are that
    region's): their ``env`` is ``Environment(region=plan.region)`` with the account of an
    ``env`` given in ``stack_kwargs`` (else the enclosing stage's, else the deploying
    credentials'); an ``env`` or a stage of another region is refused."""
    stack_kwargs = {**stack_kwargs, "env": _plan_environment(scope, plan, stack_kwargs.get("env"))}
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
            notifications=notifications,
            dashboards=dashboards,
            description=f"fm_platform fleet {plan.catalog}: stack {stack} of "
            f"{len(plan.stacks)} (planned from a model catalog)",
            **stack_kwargs,
        )
    _grant_weights_keys(plan, catalog, stacks)
    _add_adapters(plan, catalog, stacks)
    return stacks


def _plan_environment(
    scope: Construct, plan: Plan, env: Environment | dict[str, Any] | None
) -> Environment:
    """The environment of a plan's stacks: the plan's region, and the account of ``env``
    (when given). A region of ``env`` or of the stage holding ``scope`` other than the
    plan's is refused: the plan's images and prices are its region's (re-plan with ``fmp
    plan --region``)."""
    if isinstance(env, dict):
        env = Environment(**env)
    problems = Problems("fleet environment")
    stage = scope if isinstance(scope, Stage) else Stage.of(scope)
    for field, region in (
        ("env.region", env.region if env is not None else None),
        ("stage region", stage.region if stage is not None else None),
    ):
        if region is not None and (Token.is_unresolved(region) or region != plan.region):
            problems.add(
                field,
                region,
                f"the plan of catalog {plan.catalog} is for {plan.region} (its images, prices "
                f"and ECR grants are that region's): deploy its stacks to {plan.region} "
                "(leave the region out or give it), or re-plan for this region with fmp plan "
                "--region REGION",
            )
    problems.raise_if_any()
    return Environment(account=env.account if env is not None else None, region=plan.region)


def _role_of(stack: InferenceStack, endpoint: EndpointPlan, model: str) -> iam.IRole:
    if endpoint.kind == IC:
        return stack.ic_models[model].endpoint.execution_role
    if endpoint.kind == SINGLE:
        return stack.single_model_endpoints[endpoint.name].execution_role
    if endpoint.kind == SERVERLESS:
        return stack.serverless_endpoints[endpoint.name].execution_role
    return stack.async_endpoints[endpoint.name].execution_role


def _grant_weights_keys(plan: Plan, catalog: Catalog, stacks: dict[str, InferenceStack]) -> None:
    """Decrypt with each catalog ``weights_kms_key_arn`` for the role reading the weights
    (the bucket read itself follows from the weights' URI)."""
    for entry in catalog.models:
        placement = plan.placements.get(entry.name)
        if entry.weights_kms_key_arn is None or placement is None:
            continue
        endpoint = plan.endpoints[placement.endpoint]
        stack = stacks[endpoint.stack]
        key = kms.Key.from_key_arn(stack, f"WeightsKey-{entry.name}", entry.weights_kms_key_arn)
        key.grant_decrypt(_role_of(stack, endpoint, entry.name))


def _add_adapters(plan: Plan, catalog: Catalog, stacks: dict[str, InferenceStack]) -> None:
    """Each catalog adapter as an :class:`AdapterComponent` on its base's component; a
    base the plan put anywhere but on Inference Components is refused."""
    problems = Problems("fleet adapters")
    for base, adapters in adapters_by_base(catalog).items():
        endpoint = plan.endpoints[plan.placements[base].endpoint]
        if endpoint.kind != IC:
            for adapter in adapters:
                problems.add(
                    f"{adapter.name}.base_model",
                    base,
                    f"is planned on a {endpoint.kind} endpoint; adapters are served only on "
                    "an Inference Components base",
                )
            continue
        stack = stacks[endpoint.stack]
        created = []
        for adapter in adapters:
            key = None
            if adapter.weights_kms_key_arn is not None:
                key = kms.Key.from_key_arn(
                    stack, f"AdapterKey-{adapter.name}", adapter.weights_kms_key_arn
                )
            created.append(
                AdapterComponent(
                    stack,
                    f"Adapter-{adapter.name}",
                    AdapterComponentProps(
                        base=stack.ic_models[base],
                        adapter_name=adapter.name,
                        artifact_url=adapter.adapter or "",
                        artifact_key=key,
                    ),
                )
            )
        CfnOutput(
            stack,
            "Adapters" + "".join(part.capitalize() for part in base.split("-")),
            description=f"LoRA adapter component names on {base} ({endpoint.name}), "
            "comma-separated: invoke one with fmp endpoint invoke --component NAME",
            value=",".join(a.component_name for a in created),
        )
    problems.raise_if_any()


def fleet_stacks_from_file(scope: Construct, catalog_path: str) -> dict[str, InferenceStack]:
    """Plan the catalog at ``catalog_path`` (keeping ``<catalog>.plan.json`` when it exists,
    with its region's prices, and writing it) and add its stacks to ``scope``."""
    return fleet_stacks(scope, *planned_catalog_file(catalog_path))


def planned_catalog_file(
    catalog_path: str, *, region: str | None = None, plan_file: str | Path | None = None
) -> tuple[Plan, Catalog]:
    """The catalog at ``catalog_path`` and its plan, kept in ``plan_file`` (by default
    ``<catalog>.plan.json``): the previous plan is re-planned
    (:func:`~fm_platform.fleet.planning.plan_catalog`) and the result written.

    The plan is for ``region`` (its prices, Deep Learning Container accounts and the types
    offered there); by default the previous plan's region, else us-east-1. A previous plan
    of another region is refused: its endpoints' types and images are that region's."""
    plan_file = Path(plan_file) if plan_file is not None else default_plan_file(catalog_path)
    previous = read_plan(plan_file)
    if region is None:
        region = previous.region if previous else DEFAULT_REGION
    elif previous is not None and previous.region != region:
        raise ValueError(
            f"plan file {plan_file} was made for {previous.region}, not {region}: its "
            "types, prices and images are that region's; plan this region in a plan file of "
            "its own (each environment has one by default), or move this one with fmp plan "
            f"{catalog_path} --region {region} --plan-file {plan_file}"
        )
    planned = plan_catalog(catalog_path, region, previous)
    planned.plan.write(plan_file)
    return planned.plan, planned.served
