"""A fleet plan: which endpoint and stack each model is on, and what that costs.

The plan is state: committed as JSON, it pins every assignment (model -> endpoint ->
stack) for the next re-plan. Everything else in it (copies, shapes, instance counts,
scaling targets, reasons, costs) is derived from the catalog on every run and written so
that a reviewer sees it and the next run can say what changed.

JSON (version 2)::

    {"version": 2, "catalog": NAME, "region": REGION,
     "endpoints": [{"name", "kind", "instance_type", "stack", "group", "models",
                    "min_instances", "max_instances", "scaling_target",
                    "min_hourly", "expected_hourly", "max_hourly", "network_isolation",
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
                     "own_hourly", "monthly": {"own", "idle_minimum", "unfilled", "total"},
                     "container", "weights_from", "adapters",
                     "device_memory_gib", "memory_parts", "cold_start_s", "cold_start",
                     "cost_per_request", "moved_from" (only for a moved model)}]}

``kind`` names an entry of :data:`fm_platform.fleet.deciding.kinds.KINDS`; kind-specific values
live in the shared fields (``scaling_target`` counts what the kind's scaling policy
tracks), so a new kind adds no new field. ``pools`` (only when the catalog asks for
fallback instance types and the planner found some, :mod:`fm_platform.fleet.placing.pools`) lists
the endpoint's fallback types after its ``instance_type``; the endpoint's costs stay
priced at its ``instance_type``. A serverless endpoint's ``instance_type`` names
its memory size (``serverless-2048MB``), its instances are its concurrent invocations
(``max_instances`` is its ``MaxConcurrency``) and its placement's ``memory_mib`` the memory
size; its placement alone has a ``cost_per_request`` (USD; None elsewhere). Version 1 plans
(assignments only) are read too.
"""

from __future__ import annotations

import json
import operator
from dataclasses import dataclass, field, fields
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
    ``expected_hourly`` its share of its endpoint's expected cost (USD per hour),
    ``own_hourly`` what its option alone costs (USD per hour: its copies' share of the
    instances at its planned copies and active hours) and ``monthly`` its expected cost in
    whole USD a month by part (``own``, ``idle_minimum``, ``unfilled``) and ``total``
    (:mod:`fm_platform.fleet.placing.cost`);
    ``container`` its container family (or ``custom``: an explicit image), ``weights_from``
    where its weights come from, ``adapters`` the LoRA adapters served on it
    (:mod:`fm_platform.fleet.outputs.serving`).
    ``device_memory_gib`` one copy's accelerator memory (on CPU types, host memory) and
    ``memory_parts`` its parts (``weights_gib``, ``kv_pool_gib``, ``headroom_gib``, and
    ``adapters_gib`` on a base that reserves room for LoRA adapters),
    beside the host ``memory_mib`` it asks SageMaker for; ``cold_start_s`` the expected
    seconds to a first answer after scaling from zero (None: never at zero) and
    ``cold_start`` its parts; ``cost_per_request`` what one request costs on a serverless
    endpoint (USD; None on instances).
    ``moved_from`` the endpoint a re-plan moved the model from to ``endpoint`` (kept while
    it stays there; empty for a model placed where it is now from its first plan): a moved
    model's component is named after its new endpoint (:attr:`component_suffix`).
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
    own_hourly: float = 0.0
    monthly: dict[str, int] = field(default_factory=dict)
    container: str = ""
    weights_from: str = ""
    adapters: list[str] = field(default_factory=list)
    device_memory_gib: float = 0.0
    memory_parts: dict[str, float] = field(default_factory=dict)
    cold_start_s: float | None = None
    cold_start: str = ""
    cost_per_request: float | None = None
    moved_from: str = ""

    @property
    def component_suffix(self) -> str | None:
        """What follows the default component name of a moved model: its endpoint's name,
        so that the component created on the new endpoint does not take the name of the
        one still running on the old endpoint until the deploy deletes it (names are
        unique per account and Region), and keeps that name while the model stays; None
        for a model never moved."""
        return self.endpoint if self.moved_from else None


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
    cost in USD per hour at minimum, expected and maximum scale (on ``instance_type``), its
    fallback ``pools`` in priority order (none by default) and ``network_isolation``:
    whether its containers run without network access, which every model on it has
    (:func:`fm_platform.fleet.outputs.serving.endpoint_isolated`; a hub model needs it off)."""

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
    network_isolation: bool = True
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
            "placements": [_placement_record(p) for p in self.placements.values()],
        }
        return json.dumps(data, indent=1) + "\n"

    def write(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json())


def record_moves(previous: Plan, plan: Plan) -> None:
    """Set ``moved_from`` on each placement of ``plan`` whose model ``previous`` had on
    another endpoint, and carry it over for a model on the same endpoint as before."""
    for name, placement in plan.placements.items():
        old = previous.placements.get(name)
        if old is None:
            continue
        stayed = old.endpoint == placement.endpoint
        placement.moved_from = old.moved_from if stayed else old.endpoint


class _Fields:
    """A dataclass's field names and a getter of their values: JSON records of its
    instances without :func:`dataclasses.asdict`'s deep copies (slow at 50,000
    placements), holding the instances' own lists and dicts."""

    def __init__(self, cls: type) -> None:
        self.names = tuple(f.name for f in fields(cls))
        self._values = operator.attrgetter(*self.names)

    def record(self, instance: object) -> dict[str, Any]:
        return dict(zip(self.names, self._values(instance), strict=True))


_ENDPOINT, _POOL, _POOL_SHAPE, _PLACEMENT = (
    _Fields(cls) for cls in (EndpointPlan, PoolPlan, PoolShape, Placement)
)


def _endpoint_record(e: EndpointPlan) -> dict[str, Any]:
    """``e`` as JSON data; ``pools`` only when it has some (plans without pools read as
    before)."""
    record = _ENDPOINT.record(e)
    if e.pools:
        record["pools"] = [_pool_record(pool) for pool in e.pools]
    else:
        del record["pools"]
    return record


def _pool_record(pool: PoolPlan) -> dict[str, Any]:
    """``pool`` as JSON data."""
    record = _POOL.record(pool)
    record["models"] = {name: _POOL_SHAPE.record(shape) for name, shape in pool.models.items()}
    return record


def _placement_record(p: Placement) -> dict[str, Any]:
    """``p`` as JSON data (``own_hourly`` rounded as the other hourly costs are);
    ``moved_from`` only for a moved model (plans without moves read as before)."""
    record = _PLACEMENT.record(p)
    record["own_hourly"] = round(p.own_hourly, 4)
    if not p.moved_from:
        del record["moved_from"]
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
