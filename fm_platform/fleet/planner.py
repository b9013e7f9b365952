"""Place every model of a catalog on an endpoint, the way the hosting guidance groups them.

1. Models needing their own endpoint (``isolation: dedicated`` or a strict latency
   objective) get a single-model endpoint on the cheapest type one copy fits.
2. Small (copy under 4 GiB, about 1B parameters in bf16), cold-start-tolerant models
   without a preferred accelerator family go on multi-model endpoints on the cheapest CPU
   type, one endpoint per framework and size band (largest at most 4x the smallest). A band
   of one model is hosted like the rest instead.
3. The rest share Inference Components endpoints, grouped by forced ``group``, else by
   accelerator family preference and size class (copy up to 22 GiB: one 24 GiB device;
   up to 90 GiB; larger). A group's instance type is the one with the lowest estimated
   cost (instances = the larger of accelerators and host memory demanded over one
   instance's, times the hourly price); its models fill endpoints of up to
   ``max_models_per_endpoint`` each, and each endpoint's instance counts at minimum and
   maximum scale come from :mod:`fm_platform.fleet.packing`.

Stability: given the previous plan, every model still in the catalog keeps its endpoint
and every endpoint its stack. Removed models leave their endpoint (an emptied endpoint
goes away); new models join an existing endpoint of their group when it and its stack
have room, else open new endpoints, which go to the first stack with room, else a new
stack. ``repack=True`` ignores the previous plan (see :func:`repack_moves`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from fm_platform.fleet.catalog import Catalog, ModelEntry
from fm_platform.fleet.fitness import max_copies, min_copies
from fm_platform.fleet.packing import instances_needed
from fm_platform.fleet.plan import EndpointPlan, Placement, Plan
from fm_platform.fleet.sizing import (
    CopyShape,
    candidates,
    copy_memory_gib,
    copy_shape,
    family,
    largest_memory,
)
from fm_platform.hardware.instances import InstanceSpec, instance_spec
from fm_platform.hardware.prices import hourly_prices
from fm_platform.rules.problems import Problems

IC, SINGLE, MULTI = "inference-components", "single-model", "multi-model"
MME_MAX_GIB = 4.0
MME_BAND = 4.0
SIZE_CLASSES = ((22.0, "small"), (90.0, "medium"), (math.inf, "large"))


@dataclass(frozen=True)
class Limits:
    """Packing and sharding limits.

    max_models_per_endpoint: by default 40. stack_resources: the resource budget a stack
    is filled to, by default 400 of CloudFormation's 500 (room for the constructs to grow);
    stack_outputs: by default 180 of 200. The estimates per item (measured on the
    constructs, each with its alarm): stack base 9 (artifacts bucket with its key and
    access logs, notification topic with its key and policy, dashboard), Inference
    Components endpoint 5, model 5 (3 with fixed copies, 7 when it scales to zero),
    single-model endpoint 8, multi-model endpoint 9.
    """

    max_models_per_endpoint: int = 40
    stack_resources: int = 400
    stack_outputs: int = 180


STACK_BASE, STACK_BASE_OUTPUTS = 9, 4
_ENDPOINT_RESOURCES = {IC: 5, SINGLE: 8, MULTI: 9}


def _model_resources(placement: Placement) -> int:
    """Model and component, with scaling its target and policy, scaling to zero its step
    policy and alarm, and the model's own alarm (see ``stacks/fleet.py``: one copy at most
    and at least means no scaling)."""
    if placement.min_copies == 0:
        return 7
    if placement.min_copies == 1 and placement.max_copies == 1:
        return 3
    return 5


class _Planner:
    def __init__(self, catalog: Catalog, previous: Plan | None, limits: Limits) -> None:
        self.catalog = catalog
        self.limits = limits
        self.models = {m.name: m for m in catalog.models}
        self.index = {m.name: i for i, m in enumerate(catalog.models)}
        self.prices = hourly_prices()
        self.plan = Plan(catalog=catalog.name)
        if previous is not None:
            self.plan.endpoints = {
                n: EndpointPlan(**{**e.__dict__, "models": list(e.models)})
                for n, e in previous.endpoints.items()
            }
            self.plan.placements = dict(previous.placements)
        self.usage: dict[str, list[int]] = defaultdict(lambda: [STACK_BASE, STACK_BASE_OUTPUTS])

    # -- checks -----------------------------------------------------------------------------

    def check(self, previous: Plan | None) -> None:
        problems = Problems("fleet plan")
        for model in self.catalog.models:
            if not any(copy_shape(copy_memory_gib(model), s) for s in candidates(model)):
                biggest, gib = largest_memory()
                where = f"models[{self.index[model.name]}]"
                field = "memory_gib" if model.memory_gib is not None else "params_b"
                value = getattr(model, field)
                need = copy_memory_gib(model)
                scope = (
                    f"instance family {model.instance_family}"
                    if model.instance_family
                    else f"any priced type (largest: {biggest}, {gib:.0f} GiB)"
                )
                problems.add(
                    f"{where}.{field}",
                    value,
                    f"one copy needs {need:.1f} GiB of accelerator memory (weights + KV cache "
                    f"and runtime overhead), more than one instance of {scope} has",
                )
        if previous is not None:
            if previous.catalog != self.catalog.name:
                problems.add(
                    "plan.catalog",
                    previous.catalog,
                    f"the plan file is for catalog {previous.catalog!r}, not {self.catalog.name!r}",
                )
            for name, placement in previous.placements.items():
                kept = self.models.get(name)
                if kept is None:
                    continue
                now = kept.fingerprint()
                for key, was in placement.fingerprint.items():
                    if now.get(key) != was:
                        problems.add(
                            f"models[{self.index[name]}].{key}",
                            now.get(key),
                            f"changed since the plan file (was {was!r}), which placed "
                            f"{name} on {placement.endpoint}; rename the model to deploy it "
                            "anew, or re-plan with --repack",
                        )
        problems.raise_if_any()

    # -- placement --------------------------------------------------------------------------

    def placement(self, model: ModelEntry, endpoint: str, shape: CopyShape) -> Placement:
        return Placement(
            name=model.name,
            endpoint=endpoint,
            accelerators=shape.accelerators,
            memory_mib=shape.memory_mib,
            cpu_cores=shape.cpu_cores,
            min_copies=min_copies(model),
            max_copies=max_copies(model),
            fingerprint=model.fingerprint(),
        )

    def cheapest(self, models: list[ModelEntry], specs: list[InstanceSpec]) -> InstanceSpec:
        """The type of ``specs`` every model fits with the lowest estimated cost."""
        best: tuple[float, int, InstanceSpec] | None = None
        for rank, spec in enumerate(specs):
            shapes = [
                shape for m in models if (shape := copy_shape(copy_memory_gib(m), spec)) is not None
            ]
            if len(shapes) < len(models):
                continue
            copies = [max(1, min_copies(m)) for m in models]
            acc = sum(s.accelerators * c for s, c in zip(shapes, copies, strict=True))
            mem = sum(s.memory_mib * c for s, c in zip(shapes, copies, strict=True))
            count = max(
                math.ceil(acc / spec.accelerator_count) if spec.accelerator_count else 0,
                math.ceil(mem / spec.memory_mib),
                1,
            )
            cost = (count * self.prices[spec.instance_type], rank)
            if best is None or cost < best[:2]:
                best = (*cost, spec)
        assert best is not None, "check() reports models that fit no type"
        return best[2]

    def new_endpoint(self, kind: str, group: str, instance_type: str, stem: str) -> EndpointPlan:
        number = 1
        while f"{stem}-{number:03d}" in self.plan.endpoints:
            number += 1
        name = stem if kind == SINGLE else f"{stem}-{number:03d}"
        endpoint = EndpointPlan(
            name=name, kind=kind, instance_type=instance_type, stack="", group=group
        )
        self.plan.endpoints[name] = endpoint
        return endpoint

    def add(self, endpoint: EndpointPlan, model: ModelEntry, shape: CopyShape) -> None:
        placement = self.placement(model, endpoint.name, shape)
        self.plan.placements[model.name] = placement
        endpoint.models.append(model.name)
        if endpoint.stack:
            self.usage[endpoint.stack][0] += _model_resources(placement)

    def endpoint_cost(self, endpoint: EndpointPlan) -> tuple[int, int]:
        resources = _ENDPOINT_RESOURCES[endpoint.kind]
        if endpoint.kind == IC:
            resources += sum(_model_resources(self.plan.placements[m]) for m in endpoint.models)
        return resources, 2 if endpoint.kind == IC else 1

    def stack_fits(self, stack: str, resources: int, outputs: int) -> bool:
        used = self.usage[stack]
        return (
            used[0] + resources <= self.limits.stack_resources
            and used[1] + outputs <= self.limits.stack_outputs
        )

    def account_existing(self) -> None:
        for endpoint in self.plan.endpoints.values():
            cost = self.endpoint_cost(endpoint)
            self.usage[endpoint.stack][0] += cost[0]
            self.usage[endpoint.stack][1] += cost[1]

    def assign_stacks(self) -> None:
        stacks = [s for s in self.plan.stacks if s]
        for endpoint in self.plan.endpoints.values():
            if endpoint.stack:
                continue
            cost = self.endpoint_cost(endpoint)
            stack = next((s for s in stacks if self.stack_fits(s, *cost)), None)
            if stack is None:
                number = len(stacks) + 1
                while f"{self.catalog.name}-{number:02d}" in stacks:
                    number += 1
                stack = f"{self.catalog.name}-{number:02d}"
                stacks.append(stack)
            endpoint.stack = stack
            self.usage[stack][0] += cost[0]
            self.usage[stack][1] += cost[1]

    def run(self) -> Plan:
        plan = self.plan
        for name in [n for n in plan.placements if n not in self.models]:
            placement = plan.placements.pop(name)
            endpoint = plan.endpoints[placement.endpoint]
            endpoint.models.remove(name)
            if not endpoint.models:
                del plan.endpoints[endpoint.name]
        self.account_existing()
        new = [m for m in self.catalog.models if m.name not in plan.placements]
        dedicated = [m for m in new if m.dedicated]
        small = [
            m
            for m in new
            if not m.dedicated
            and m.cold_start_tolerant
            and m.group is None
            and m.instance_family is None
            and copy_memory_gib(m) <= MME_MAX_GIB
        ]
        small_names = {m.name for m in small}
        shared = [m for m in new if not m.dedicated and m.name not in small_names]
        for model in dedicated:
            spec = self.cheapest([model], candidates(model))
            endpoint = self.new_endpoint(
                SINGLE, "dedicated", spec.instance_type, f"sme-{model.name}"
            )
            self.add(endpoint, model, _fitting_shape(model, spec))
        shared.extend(self.place_multi_model(small))
        self.place_shared(shared)
        for endpoint in plan.endpoints.values():
            self.size(endpoint)
        self.assign_stacks()
        return plan

    def place_multi_model(self, models: list[ModelEntry]) -> list[ModelEntry]:
        """Place small models on multi-model endpoints; returns those left for sharing."""
        left: list[ModelEntry] = []
        by_framework: dict[str, list[ModelEntry]] = defaultdict(list)
        for model in models:
            by_framework[model.framework].append(model)
        for framework in sorted(by_framework):
            group = f"mme:{framework}"
            members = sorted(by_framework[framework], key=lambda m: (copy_memory_gib(m), m.name))
            runs: list[list[ModelEntry]] = []
            for model in members:
                gib = copy_memory_gib(model)
                joined = self.join_multi_model(group, model, gib)
                if joined:
                    continue
                if runs and gib <= MME_BAND * copy_memory_gib(runs[-1][0]):
                    runs[-1].append(model)
                else:
                    runs.append([model])
            for run in runs:
                if len(run) == 1:
                    left.extend(run)
                    continue
                spec = self.cheapest(run, candidates(run[0], accelerated=False))
                endpoint = self.new_endpoint(MULTI, group, spec.instance_type, f"mme-{framework}")
                for model in run:
                    self.add(endpoint, model, _fitting_shape(model, spec))
        return left

    def join_multi_model(self, group: str, model: ModelEntry, gib: float) -> bool:
        for endpoint in self.plan.endpoints.values():
            if endpoint.group != group:
                continue
            sizes = [self.plan.placements[m].memory_mib / 1024 for m in endpoint.models]
            low, high = min(sizes + [gib]), max(sizes + [gib])
            shape = copy_shape(gib, instance_spec(endpoint.instance_type))
            if shape is not None and high <= MME_BAND * low:
                self.add(endpoint, model, shape)
                return True
        return False

    def place_shared(self, models: list[ModelEntry]) -> None:
        groups: dict[str, list[ModelEntry]] = defaultdict(list)
        for model in models:
            groups[_group_key(model)].append(model)
        for key in sorted(groups):
            members = sorted(groups[key], key=lambda m: (-copy_memory_gib(m), m.name))
            existing = [e for e in self.plan.endpoints.values() if e.group == key]
            rest = [m for m in members if not self.join_shared(existing, m)]
            if not rest:
                continue
            spec = self.cheapest(rest, candidates(rest[0]))
            stem = f"ic-{rest[0].group}" if rest[0].group else f"ic-{family(spec.instance_type)}"
            endpoint = None
            for model in rest:
                if endpoint is None or len(endpoint.models) >= self.limits.max_models_per_endpoint:
                    endpoint = self.new_endpoint(IC, key, spec.instance_type, stem)
                self.add(endpoint, model, _fitting_shape(model, spec))

    def join_shared(self, existing: list[EndpointPlan], model: ModelEntry) -> bool:
        gib = copy_memory_gib(model)
        for endpoint in existing:
            if len(endpoint.models) >= self.limits.max_models_per_endpoint:
                continue
            shape = copy_shape(gib, instance_spec(endpoint.instance_type))
            extra = 6 if min_copies(model) == 0 else 4
            if shape is None or (endpoint.stack and not self.stack_fits(endpoint.stack, extra, 0)):
                continue
            self.add(endpoint, model, shape)
            return True
        return False

    def size(self, endpoint: EndpointPlan) -> None:
        """Instance counts at minimum and maximum scale."""
        spec = instance_spec(endpoint.instance_type)
        placements = [self.plan.placements[m] for m in endpoint.models]
        if endpoint.kind == SINGLE:
            endpoint.min_instances = 1
            endpoint.max_instances = max(1, placements[0].max_copies)
            return
        if endpoint.kind == MULTI:
            endpoint.min_instances = 1
            endpoint.max_instances = max(2, math.ceil(sum(p.max_copies for p in placements) / 10))
            return

        def need(attr: str) -> int:
            return instances_needed(
                (
                    (CopyShape(p.accelerators, p.memory_mib, p.cpu_cores), getattr(p, attr))
                    for p in placements
                ),
                spec,
            )

        endpoint.min_instances = need("min_copies")
        endpoint.max_instances = max(1, need("max_copies"))


def _group_key(model: ModelEntry) -> str:
    if model.group is not None:
        return f"group:{model.group}"
    gib = copy_memory_gib(model)
    size = next(label for limit, label in SIZE_CLASSES if gib <= limit)
    return f"{model.instance_family or 'gpu'}:{size}"


def plan_fleet(catalog: Catalog, previous: Plan | None = None, limits: Limits = Limits()) -> Plan:
    """Plan ``catalog``, keeping every assignment of ``previous`` (see the module docstring).

    Raises one ``ValueError`` listing every model that fits no instance type and every
    model whose placement-deciding fields changed since ``previous``.
    """
    planner = _Planner(catalog, previous, limits)
    planner.check(previous)
    return planner.run()


def repack_moves(current: Plan, repacked: Plan) -> list[tuple[str, str, str]]:
    """(model, endpoint now, endpoint after repacking) for every model that would move."""
    return [
        (name, placement.endpoint, repacked.placements[name].endpoint)
        for name, placement in current.placements.items()
        if name in repacked.placements
        and _signature(current, placement.endpoint)
        != _signature(repacked, repacked.placements[name].endpoint)
    ]


def _signature(plan: Plan, endpoint: str) -> tuple[str, str, str]:
    e = plan.endpoints[endpoint]
    return (e.name, e.instance_type, e.stack)


def _fitting_shape(model: ModelEntry, spec: InstanceSpec) -> CopyShape:
    """The copy shape of ``model`` on ``spec``, a type :meth:`_Planner.cheapest` chose
    because every model of the group fits it."""
    shape = copy_shape(copy_memory_gib(model), spec)
    if shape is None:
        raise AssertionError(f"{model.name} does not fit {spec.instance_type}")
    return shape
