"""A fleet plan: which endpoint and stack each model is on, and what that costs.

The plan is state: committed as JSON, it pins every assignment (model -> endpoint ->
stack) for the next re-plan. Everything else in it (copies, shapes, instance counts,
scaling targets, reasons, costs) is derived from the catalog on every run and written so
that a reviewer sees it and the next run can say what changed.

JSON (version 2)::

    {"version": 2, "catalog": NAME, "region": REGION,
     "endpoints": [{"name", "kind", "instance_type", "stack", "group", "models",
                    "min_instances", "max_instances", "scaling_target",
                    "min_hourly", "expected_hourly", "max_hourly",
                    "pools": [{"instance_type", "priority", "min_instances",
                               "max_instances", "hourly", "expected_hourly", "reason",
                               "models": {NAME: {"accelerators", "memory_mib",
                                                 "cpu_cores", "rpm_per_copy",
                                                 "concurrency", "min_copies",
                                                 "max_copies"}}}]}],
     "placements": [{"name", "endpoint", "accelerators", "memory_mib", "cpu_cores",
                     "min_copies", "max_copies", "peak_rpm", "active_hours",
                     "rpm_per_copy", "throughput",
                     "throughput_detail", "concurrency", "latency_ms", "defaults",
                     "reason", "scale_to_zero", "scores", "expected_hourly",
                     "container", "weights_from", "adapters",
                     "device_memory_gib", "memory_parts", "cold_start_s", "cold_start"}]}

``kind`` names an entry of :data:`fm_platform.fleet.kinds.KINDS`; kind-specific values
live in the shared fields (``scaling_target`` counts what the kind's scaling policy
tracks), so a new kind adds no new field. ``pools`` (only when the catalog asks for
fallback instance types and the planner found some, :mod:`fm_platform.fleet.pools`) lists
the endpoint's fallback types after its ``instance_type``; the endpoint's costs stay
priced at its ``instance_type``. Version 1 plans (assignments only) are read too.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

PLAN_VERSION = 2


def default_plan_file(catalog: str | Path) -> Path:
    """``<catalog>.plan.json`` next to the catalog."""
    path = Path(catalog)
    return path.with_name(path.stem + ".plan.json")


@dataclass
class Placement:
    """One model on its endpoint.

    Per copy: ``accelerators``, host ``memory_mib``, ``cpu_cores``; copies between
    ``min_copies`` and ``max_copies`` for ``peak_rpm`` over ``active_hours`` a day;
    ``rpm_per_copy`` sustained at the latency objective
    (also the per-copy scaling target of an Inference Components model) with ``throughput``
    saying where it comes from (catalog, benchmark, measured, estimated, default);
    ``defaults`` the inputs that came from defaults; ``reason`` why the model has its kind;
    ``expected_hourly`` its share of its endpoint's expected cost (USD per hour);
    ``container`` its container family (or ``custom``: an explicit image), ``weights_from``
    where its weights come from, ``adapters`` the LoRA adapters served on it
    (:mod:`fm_platform.fleet.serving`).
    ``device_memory_gib`` one copy's accelerator memory (on CPU types, host memory) and
    ``memory_parts`` its parts (``weights_gib``, ``kv_pool_gib``, ``headroom_gib``, and
    ``adapters_gib`` on a base that reserves room for LoRA adapters),
    beside the host ``memory_mib`` it asks SageMaker for; ``cold_start_s`` the expected
    seconds to a first answer after scaling from zero (None: never at zero) and
    ``cold_start`` its parts.
    """

    name: str
    endpoint: str
    accelerators: int = 0
    memory_mib: int = 0
    cpu_cores: float = 0.0
    min_copies: int = 1
    max_copies: int = 1
    peak_rpm: float = 0.0
    active_hours: float = 24.0
    rpm_per_copy: float = 0.0
    throughput: str = ""
    throughput_detail: str = ""
    concurrency: int = 1
    latency_ms: float | None = None
    defaults: list[str] = field(default_factory=list)
    reason: str = ""
    scale_to_zero: str = ""
    scores: dict[str, float] = field(default_factory=dict)
    expected_hourly: float = 0.0
    container: str = ""
    weights_from: str = ""
    adapters: list[str] = field(default_factory=list)
    device_memory_gib: float = 0.0
    memory_parts: dict[str, float] = field(default_factory=dict)
    cold_start_s: float | None = None
    cold_start: str = ""


@dataclass
class PoolShape:
    """One model's copies on a fallback type: per copy ``accelerators``, host
    ``memory_mib`` and ``cpu_cores``, ``rpm_per_copy`` there at ``concurrency`` sequences,
    copies between ``min_copies`` and ``max_copies`` (peak traffic at that throughput)."""

    accelerators: int = 0
    memory_mib: int = 0
    cpu_cores: float = 0.0
    rpm_per_copy: float = 0.0
    concurrency: int = 1
    min_copies: int = 1
    max_copies: int = 1


@dataclass
class PoolPlan:
    """A fallback instance type of an endpoint (``priority`` 2-5; the endpoint's own type
    is 1): the instances its models need there at minimum and maximum scale, the type's
    ``hourly`` price, the endpoint's ``expected_hourly`` were it to run there (what orders
    the pools; not in the plan's cost), why the planner chose it, and each model's copies
    there (``models``)."""

    instance_type: str
    priority: int
    min_instances: int = 1
    max_instances: int = 1
    hourly: float = 0.0
    expected_hourly: float = 0.0
    reason: str = ""
    models: dict[str, PoolShape] = field(default_factory=dict)


@dataclass
class EndpointPlan:
    """One endpoint: its kind, type, stack, models (in placement order), the group its
    models came from, instance counts at minimum/maximum scale, the scaling target of an
    instance-scaled endpoint (None for Inference Components, which scale per copy), its
    cost in USD per hour at minimum, expected and maximum scale (on ``instance_type``) and
    its fallback ``pools`` in priority order (none by default)."""

    name: str
    kind: str
    instance_type: str
    stack: str
    group: str
    models: list[str] = field(default_factory=list)
    min_instances: int = 1
    max_instances: int = 1
    scaling_target: float | None = None
    min_hourly: float = 0.0
    expected_hourly: float = 0.0
    max_hourly: float = 0.0
    pools: list[PoolPlan] = field(default_factory=list)

    @property
    def fallback_types(self) -> list[str]:
        """The pools' instance types in priority order."""
        return [pool.instance_type for pool in self.pools]


def _pool(record: dict[str, Any]) -> PoolPlan:
    """A :class:`PoolPlan` from its JSON record."""
    values = _known(PoolPlan, record)
    shapes = values.pop("models", {})
    return PoolPlan(
        **values,
        models={name: PoolShape(**_known(PoolShape, shape)) for name, shape in shapes.items()},
    )


@dataclass
class Plan:
    """Endpoints and placements, both in creation order, for one catalog and region."""

    catalog: str
    region: str = "us-east-1"
    endpoints: dict[str, EndpointPlan] = field(default_factory=dict)
    placements: dict[str, Placement] = field(default_factory=dict)

    @property
    def stacks(self) -> list[str]:
        """Stack names in first-use order."""
        return list(dict.fromkeys(e.stack for e in self.endpoints.values()))

    def endpoints_in(self, stack: str) -> list[EndpointPlan]:
        return [e for e in self.endpoints.values() if e.stack == stack]

    def to_json(self) -> str:
        data = {
            "version": PLAN_VERSION,
            "catalog": self.catalog,
            "region": self.region,
            "endpoints": [_endpoint_record(e) for e in self.endpoints.values()],
            "placements": [asdict(p) for p in self.placements.values()],
        }
        return json.dumps(data, indent=1) + "\n"

    def write(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json())


def _endpoint_record(e: EndpointPlan) -> dict[str, Any]:
    """``e`` as JSON data; ``pools`` only when it has some (plans without pools read as
    before)."""
    record = asdict(e)
    if not record["pools"]:
        del record["pools"]
    return record


def _known(cls: type, record: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in record.items() if k in names}


def _version_1_group(e: EndpointPlan) -> str:
    """A version 1 endpoint's group in version 2 terms (version 1 grouped shared models
    by size class, version 2 by instance type; forced groups are the same)."""
    if e.group.startswith("group:"):
        return e.group
    if e.kind == "multi-model":
        return f"{e.group}:{e.instance_type}"
    if e.kind == "single-model":
        return "dedicated"
    return e.instance_type


def plan_from_json(text: str, source: str = "plan") -> Plan:
    """A plan from :meth:`Plan.to_json` output (or a version 1 plan's assignments); a clear
    ``ValueError`` when it is not one."""
    try:
        data = json.loads(text)
        if data.get("version") not in (1, PLAN_VERSION):
            raise ValueError(f"version must be 1 or {PLAN_VERSION}")
        endpoints = [
            EndpointPlan(
                **(_known(EndpointPlan, e) | {"pools": [_pool(r) for r in e.get("pools", [])]})
            )
            for e in data["endpoints"]
        ]
        if data["version"] == 1:
            for e in endpoints:
                e.group = _version_1_group(e)
        placements = [Placement(**_known(Placement, p)) for p in data["placements"]]
        return Plan(
            catalog=data["catalog"],
            region=data.get("region", "us-east-1"),
            endpoints={e.name: e for e in endpoints},
            placements={p.name: p for p in placements},
        )
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ValueError(
            f"{source} is not a fleet plan file ({type(error).__name__}: {error}); "
            "delete it to plan from scratch"
        ) from None


def read_plan(path: str | Path) -> Plan | None:
    """The plan at ``path``, or None when there is no file yet."""
    path = Path(path)
    if not path.exists():
        return None
    return plan_from_json(path.read_text(), str(path))
