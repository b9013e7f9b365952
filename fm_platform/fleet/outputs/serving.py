"""How each planned model is served: its container image, environment, weights and network
isolation, from its catalog entry and its placement (which the plan sized).

:func:`model_serving` is what the stacks write into each model's container; the planned
settings (tensor parallelism, concurrent sequences, context length, dtype, quantization)
reach the container's own variables (:mod:`fm_platform.containers.environment`), and so
do the traffic's limits: the requests a copy accepts at once (:func:`requests_accepted`),
the inputs one request carries and the seconds a request may take on its kind of endpoint.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from fm_platform.containers.environment import ServingSettings, serving_environment
from fm_platform.containers.images import CUSTOM, hardware_kind, image
from fm_platform.fleet.deciding.kinds import KINDS
from fm_platform.fleet.models.adapters import adapters_by_base
from fm_platform.fleet.models.catalog import Catalog, ModelEntry
from fm_platform.fleet.outputs.plan import EndpointPlan, Placement, Plan
from fm_platform.fleet.sizing.needs import Needs, resolve
from fm_platform.fleet.sizing.serverless import spec_of
from fm_platform.hardware.devices import BF16_MIN_CAPABILITY, device
from fm_platform.hardware.instances import InstanceSpec


@dataclass(frozen=True)
class ModelServing:
    """One model's container: ``family``, ``image`` (URI), ``environment``,
    ``weights_uri`` (None: the fleet's artifacts bucket) and its ``weights_kms_key_arn``,
    ``network_isolation`` (off for a hub model, which downloads its weights) and
    ``weights_from`` (what the plan shows)."""

    family: str
    image: str
    environment: dict[str, str] = field(default_factory=dict)
    weights_uri: str | None = None
    weights_kms_key_arn: str | None = None
    network_isolation: bool = True
    weights_from: str = "artifacts bucket"


def _half(entry: ModelEntry, spec: InstanceSpec) -> str:
    if not spec.is_accelerated:
        return "bf16"
    dev = device(spec)
    if dev is not None and dev.capability is not None and dev.capability < BF16_MIN_CAPABILITY:
        return "fp16"  # a bf16 model placed on a GPU without bf16 has allow_fp16
    return "bf16"


def weights_from(entry: ModelEntry) -> str:
    """Where ``entry``'s weights come from, as the plan says it."""
    if entry.hub is not None:
        pinned = f"@{entry.revision}" if entry.revision else " (no revision)"
        gated = ", token from Secrets Manager" if entry.hub_token_secret else ""
        return f"hub {entry.hub}{pinned}{gated}; network isolation off"
    return entry.weights_uri or "artifacts bucket"


#: InvokeEndpointAsync's ``InvocationTimeoutSeconds`` when a call gives none (botocore's
#: sagemaker-runtime model: "The default is 15 minutes, or 900 seconds"; at most 3600).
ASYNC_DEFAULT_INVOCATION_S = 900


def requests_accepted(placement: Placement, kind: str) -> int:
    """Requests one copy accepts at once, running and waiting, on an endpoint of ``kind``:
    what it completes within the kind's request limit at its planned rate (Little's law:
    in flight = rate x time; real-time, 60 s: ``rpm_per_copy`` requests), so that a burst
    above the planned rate queues in the container while scaling adds copies, and only
    requests that could not be answered in time are refused; on an asynchronous endpoint
    SageMaker sends each instance its planned concurrency and queues the rest itself.
    Never below the sequences the copy runs at once."""
    if KINDS[kind].batch_only:
        return max(1, placement.concurrency)
    in_time = placement.rpm_per_copy * KINDS[kind].max_request_s / 60
    return max(1, placement.concurrency, math.ceil(in_time))


def _timeout_s(entry: ModelEntry, placement: Placement, kind: str) -> int:
    """The seconds a request may take on ``kind``: its limit, which the planned seconds
    per request must fit (the planner keeps them so; a hand-edited plan may not)."""
    limit = KINDS[kind].max_request_s
    if placement.latency_ms is not None and placement.latency_ms > limit * 1000:
        raise ValueError(
            f"model {entry.name}: planned {placement.latency_ms / 1000:,.0f} s per request "
            f"exceeds the {limit:,.0f} s an endpoint of kind {kind} waits for a request; plan "
            "it again, or set latency_class: batch (an asynchronous endpoint processes a "
            "request for up to an hour)"
        )
    return math.ceil(limit)


def model_serving(
    entry: ModelEntry,
    needs: Needs,
    placement: Placement,
    instance_type: str,
    region: str,
    *,
    kind: str,
    adapters: int = 0,
) -> ModelServing:
    """The container of ``entry`` placed as ``placement`` on ``instance_type`` (or a
    serverless memory size) in ``region`` on an endpoint of ``kind``; ``adapters``: LoRA
    adapters served on its component."""
    spec = spec_of(instance_type)
    hardware = hardware_kind(spec.accelerator)
    family = needs.container
    settings = ServingSettings(
        family=family,
        hardware=hardware,
        task=needs.task,
        tensor_parallel=placement.accelerators,
        max_concurrency=max(1, placement.concurrency),
        max_model_len=needs.context_tokens,
        max_input_tokens=max(
            1, min(needs.context_tokens - 1, needs.context_tokens - needs.output_tokens)
        ),
        dtype=entry.dtype,
        half=_half(entry, spec),
        hub=entry.hub,
        revision=entry.revision,
        token_secret_arn=entry.hub_token_secret,
        adapters=adapters,
        max_lora_rank=needs.lora_rank,
        requests_accepted=requests_accepted(placement, kind),
        inputs_per_request=needs.inputs_per_request,
        batch_tokens=needs.prompt_tokens * needs.inputs_per_request * max(1, placement.concurrency),
        request_timeout_s=_timeout_s(entry, placement, kind),
    )
    uri: str | None = entry.image
    if family != CUSTOM:
        found = image(family, hardware)
        uri = found.uri(region) if found is not None else None
    if uri is None:
        raise ValueError(
            f"model {entry.name}: container {family} has no {hardware} image in {region}"
        )
    return ModelServing(
        family=family,
        image=uri,
        environment=serving_environment(settings, entry.environment),
        weights_uri=entry.weights_uri,
        weights_kms_key_arn=entry.weights_kms_key_arn,
        network_isolation=entry.hub is None,
        weights_from=weights_from(entry),
    )


def endpoint_isolated(endpoint: EndpointPlan, entries: Mapping[str, ModelEntry]) -> bool:
    """Whether ``endpoint``'s containers run network-isolated (``EnableNetworkIsolation``
    on its endpoint config and models): when none of its models (``entries``: the catalog's
    models by name) downloads its weights from the hub. botocore,
    ``CreateEndpointConfigInput.EnableNetworkIsolation``: "Sets whether all model containers
    deployed to the endpoint are isolated. If they are, no inbound or outbound network
    calls can be made", whatever a model's own flag says; so the planner keeps hub models
    on endpoints of their own (:meth:`fm_platform.fleet.placing.planner.Planner._group_key`).
    Serverless endpoints support no network isolation."""
    if KINDS[endpoint.kind].serverless:
        return False
    return all(entries[name].hub is None for name in endpoint.models)


def annotate(plan: Plan, catalog: Catalog) -> Plan:
    """Write into each placement of ``plan`` its container, where its weights come from and
    the adapters on it, and into each endpoint whether it is network-isolated
    (``catalog``: the catalog with its adapters); returns ``plan``."""
    entries = {m.name: m for m in catalog.models}
    adapters = adapters_by_base(catalog)
    for endpoint in plan.endpoints.values():
        endpoint.network_isolation = endpoint_isolated(endpoint, entries)
    for placement in plan.placements.values():
        entry = entries.get(placement.name)
        if entry is None:
            continue
        placement.container = resolve(entry, catalog).container
        placement.weights_from = weights_from(entry)
        placement.adapters = [a.name for a in adapters.get(entry.name, ())]
    return plan


def serving_line(plan: Plan, name: str) -> str:
    """What ``--explain`` says of a model's container, weights, adapters and limits."""
    p = plan.placements[name]
    endpoint = plan.endpoints[p.endpoint]
    isolation = "network-isolated" if endpoint.network_isolation else "not network-isolated"
    line = (
        f"serving: container {p.container}, weights from {p.weights_from}; "
        f"endpoint {endpoint.name} {isolation}"
    )
    if p.adapters:
        line += f"; {len(p.adapters)} LoRA adapters on its copies ({', '.join(p.adapters[:3])}"
        line += ", ...)" if len(p.adapters) > 3 else ")"
    return line + "\n" + limits_line(p, plan.endpoints[p.endpoint].kind)


def limits_line(p: Placement, kind: str) -> str:
    """The traffic's limits in ``p``'s container on an endpoint of ``kind``, and, on an
    asynchronous endpoint, the invocation timeout its planned seconds per request need."""
    limit = KINDS[kind].max_request_s
    line = (
        f"limits: a copy accepts {requests_accepted(p, kind)} requests at once (running "
        f"and waiting), each for up to {limit:,.0f} s"
    )
    if KINDS[kind].batch_only and p.latency_ms is not None:
        needed = math.ceil(p.latency_ms / 1000)
        line += (
            f"; invoke with InvocationTimeoutSeconds >= {needed} (planned seconds per "
            f"request; {ASYNC_DEFAULT_INVOCATION_S} when not given)"
        )
    return line
