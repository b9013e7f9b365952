"""Place every model of a catalog on an endpoint.

Per model: its needs (:mod:`fm_platform.fleet.sizing.needs`), every option per kind, type and
tensor-parallel degree (:mod:`fm_platform.fleet.deciding.options`), and the hosting decision its
fitness scores and priorities drive (:mod:`fm_platform.fleet.deciding.fitness`). Then:

- single-model, asynchronous and serverless: one endpoint per model on its cheapest type
  (serverless: memory size);
- Inference Components: models share endpoints of their cheapest type (or of their
  ``group``), up to ``max_models_per_endpoint`` each;
- multi-model: models of one framework share endpoints of their cheapest type, sizes at
  most 4x apart;

and every endpoint gets its instance counts and scaling target
(:mod:`fm_platform.fleet.placing.endpoints`), its stack, its cost
(:mod:`fm_platform.fleet.placing.cost`) and, when its models ask, its fallback pools
(:mod:`fm_platform.fleet.placing.pools`).

Stability: given the previous plan, every model still in the catalog stays on its endpoint
and every endpoint in its stack, but the model's copies, shape, scale to zero and its
endpoint's instance counts are recomputed from the current catalog. A model that can no
longer stay (its endpoint's type cannot run it any more, its kind is now excluded, its
group changed) moves, and :attr:`Planner.moves` says why. Removed models leave their
endpoint (an emptied endpoint goes away); new models join an endpoint of their group with
room (a kept one while its stack is under :attr:`Limits.joined_resources`), else a kept
endpoint of their kind with room on another of their types, else open one, in the first
stack with room, else a new stack; a model that opens an endpoint although kept ones had
room says why each did not take it (its reason, :attr:`Planner.opened`). A moved model's
placement records the endpoint it left (``moved_from``, kept while it stays), which names
its component after the new endpoint (:attr:`Placement.component_suffix`).
"""

from __future__ import annotations

import copy
import gc
import itertools
import math
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from fm_platform.fleet.deciding.assessing import Result, Work, assess_entries
from fm_platform.fleet.deciding.fitness import QUEUED_ZERO_REASON, Decider, Decision
from fm_platform.fleet.deciding.kinds import (
    ADAPTER_BASE_OUTPUTS,
    ADAPTER_RESOURCES,
    KINDS,
    VOLUME_KEY_RESOURCES,
    min_copies,
)
from fm_platform.fleet.deciding.options import Assessment, Option, Shape
from fm_platform.fleet.models.catalog import AXES, Catalog, ModelEntry
from fm_platform.fleet.outputs.plan import EndpointPlan, Placement, Plan, record_moves
from fm_platform.fleet.placing.cost import (
    HOURS_PER_MONTH,
    monthly,
    placed_reason,
    price_endpoint,
    price_plan,
    usd,
)
from fm_platform.fleet.placing.endpoints import SIZERS
from fm_platform.fleet.placing.packing import instances_needed
from fm_platform.fleet.placing.pools import plan_pools
from fm_platform.fleet.sizing.coldstart import cold_start
from fm_platform.fleet.sizing.needs import Needs, Resolver, needs_key
from fm_platform.fleet.sizing.serverless import ZERO_REASON, request_seconds, spec_of, type_memory
from fm_platform.hardware.devices import family
from fm_platform.hardware.instances import instance_spec
from fm_platform.hardware.prices import DEFAULT_REGION, hourly_prices
from fm_platform.hardware.serverless_prices import serverless_prices
from fm_platform.rules.caching import cached_start_skips_download, caches_by_default
from fm_platform.rules.problems import Problems

#: Models of one multi-model endpoint are at most this many times apart in memory.
MME_BAND = 4.0


@dataclass(frozen=True)
class Limits:
    """Packing and sharding limits.

    max_models_per_endpoint: by default 40. stack_resources: the resource budget a stack
    is filled to, by default 400 of CloudFormation's 500 (room for the constructs to grow);
    stack_outputs: by default 180 of 200. joined_resources and joined_outputs: the budget
    a re-plan's new models may take a kept stack to when they join an endpoint in it, by
    default 450 and 190: a fresh plan fills its stacks to the first budget, so without a
    second one no new model could ever join a kept endpoint of a full stack and each
    would open an endpoint (and buy its instances) beside one with room; joining adds
    only the model's resources, a new endpoint its own as well, and 50 resources and 10
    outputs stay for the constructs to grow. Resources per endpoint and model (and per
    stack, for what a kind's endpoints share) are the kinds' estimates
    (:data:`fm_platform.fleet.deciding.kinds.KINDS`, each with its alarm, plus a volume key per
    endpoint on an EBS-backed type, and per LoRA adapter its component and per base with
    adapters one output); a stack's own base is 9 resources (artifacts bucket
    with its key and access logs, notification topic with its key and policy, dashboard)
    and 4 outputs.
    """

    max_models_per_endpoint: int = 40
    stack_resources: int = 400
    stack_outputs: int = 180
    joined_resources: int = 450
    joined_outputs: int = 190


STACK_BASE, STACK_BASE_OUTPUTS = 9, 4


@dataclass(frozen=True)
class Assessed:
    """One model's needs, options and decision (None when nothing can host it)."""

    needs: Needs
    assessment: Assessment
    decision: Decision | None


def _bands(sizes: list[float]) -> list[list[int]]:
    """Indices of ascending ``sizes`` split where a size exceeds :data:`MME_BAND` x the
    band's smallest."""
    bands: list[list[int]] = []
    for i, size in enumerate(sizes):
        if bands and size <= MME_BAND * sizes[bands[-1][0]]:
            bands[-1].append(i)
        else:
            bands.append([i])
    return bands


def _multi_model_cost(group: list[tuple[Option, float, float, int]]) -> float:
    """Expected USD per hour of one multi-model endpoint of ``group`` (option, its load at
    peak, active hours, number of such models), as :mod:`fm_platform.fleet.placing.endpoints`
    sizes it and :mod:`fm_platform.fleet.placing.cost` prices it."""
    first = group[0][0]
    memory = sum(o.copy_gib * n for o, _, _, n in group)
    low = max(1, math.ceil(memory / first.usable_gib - 1e-9))
    busy = sum(load * n for _, load, _, n in group)
    high = max(low, math.ceil(busy - 1e-9))
    active = sum(load * n * h / 24 for _, load, h, n in group)
    return (low + (active / busy if busy else 0.0) * (high - low)) * first.price


def _decided_hourly(decision: Decision, active_hours: float) -> float:
    """The own cost of ``decision``'s option, the figure its reason gives."""
    return decision.option.expected_hourly(decision.min_copies, active_hours)


def _model_key(model: ModelEntry, catalog: Catalog, needs: tuple) -> tuple:
    """Everything but the name that decides a model's options and kind: its ``needs``
    (:func:`~fm_platform.fleet.sizing.needs.needs_key`), traffic and weights, and its group
    (which the decision's reasons name)."""
    tenant = catalog.tenant_weights.get(model.tenant) if model.tenant is not None else None
    own = tuple(sorted(model.weights.items())) if model.weights else ()
    extra = tuple(sorted(tenant.items())) if tenant else ()
    traffic = (model.peak_rpm, model.active_hours)
    return (needs, traffic, model.tenant is not None, model.group, extra, own)


#: What follows the instance type in the group of an Inference Components endpoint whose
#: models download their weights from the hub (not network-isolated).
HUB_GROUP_SUFFIX = ":hub"


@contextmanager
def without_cycle_collection() -> Iterator[None]:
    """Pause the cyclic garbage collector, then move what survived to the oldest generation.

    Planning allocates hundreds of thousands of small objects that form no cycles
    (reference counting frees them), and the collector's passes over them took a third of
    the time of planning 1,000 realistic models with its bound (1.02-1.12 s against
    0.69-0.71 s paused; `make bench`, December 2026, docs/planner-numbers.md). The
    collector is left as it was found."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()  # the survivors join the oldest generation: the next pass skips them
        gc.unfreeze()
        if enabled:
            gc.enable()


class Planner:
    """Plans ``catalog`` in ``region`` (by default the previous plan's, else us-east-1),
    keeping ``previous``'s assignments; models to place get their option from ``forced``
    when it names them (a repacking's moves). After :meth:`run`: ``assessed``
    (per model), ``moves`` (model -> why it left its endpoint) and ``opened`` (endpoint
    opened by a re-plan's new model -> why the previous plan's endpoints with room for it
    did not take it)."""

    def __init__(
        self,
        catalog: Catalog,
        previous: Plan | None = None,
        *,
        region: str | None = None,
        limits: Limits = Limits(),
        forced: dict[str, Option] | None = None,
    ) -> None:
        self.forced = forced or {}
        self.catalog = catalog
        self.previous = previous
        self.region = region or (previous.region if previous else DEFAULT_REGION)
        self.limits = limits
        self.models = {m.name: m for m in catalog.models}
        self.index = {m.name: i for i, m in enumerate(catalog.models)}
        self.assessed: dict[str, Assessed] = {}
        self.moves: dict[str, str] = {}
        self.opened: dict[str, str] = {}
        self.plan = Plan(catalog=catalog.name, region=self.region)
        self.usage: dict[str, list[int]] = defaultdict(lambda: [STACK_BASE, STACK_BASE_OUTPUTS])
        self.stack_kinds: dict[str, set[str]] = defaultdict(set)
        self.counters: dict[str, int] = defaultdict(int)
        self.ranges: dict[str, tuple[int, int, int]] = {}
        self.templates: dict[tuple[int, int, str], Placement] = {}
        self.hostings: dict[tuple[int, int, int, str, float], dict[str, Any]] = {}

    def model_resources(self, p: Placement, kind: str) -> int:
        """Resources ``p`` adds to its stack: its kind's per model (more when it may scale
        to zero) and one component per LoRA adapter served on it."""
        k = KINDS[kind]
        own = k.model_resources_zero if p.min_copies == 0 else k.model_resources
        return own + ADAPTER_RESOURCES * len(self.catalog.adapter_ranks.get(p.name, ()))

    def model_outputs(self, name: str) -> int:
        """Outputs a model adds to its stack: one listing its adapters, if it has any."""
        return ADAPTER_BASE_OUTPUTS if self.catalog.adapter_ranks.get(name) else 0

    # -- per model --------------------------------------------------------------------------

    def assess_all(self) -> None:
        resolve = Resolver(self.catalog)
        problems = Problems("fleet plan")
        # each distinct entry gets a number (its key, a tuple of ~50 fields, is hashed once)
        numbers: dict[tuple, int] = {}
        entries: list[int] = []
        work: Work = {}
        unresolved: dict[int, str] = {}
        for model in self.catalog.models:
            alike = needs_key(model, self.catalog)
            key = _model_key(model, self.catalog, alike)
            number = numbers.get(key)
            if number is None:
                number = numbers[key] = len(numbers)
                try:
                    work[number] = (model, resolve(model, alike), resolve.alike(alike))
                except ValueError as error:
                    unresolved[number] = str(error)
            entries.append(number)
        results: dict[int, Result] = {
            **unresolved,
            **assess_entries(work, self.region, Decider(self.catalog)),
        }
        known: dict[int, Assessed] = {}
        for model, number in zip(self.catalog.models, entries, strict=True):
            result = results[number]
            if isinstance(result, str):
                problems.add(f"models[{self.index[model.name]}]", model.name, result)
                continue
            found = known.get(number)
            if found is None:
                found = known[number] = Assessed(*result)
            self.assessed[model.name] = found
            if found.decision is None:
                problems.add(f"models[{self.index[model.name]}]", model.name, self._why_none(found))
        if self.previous is not None and self.previous.catalog != self.catalog.name:
            problems.add(
                "plan.catalog",
                self.previous.catalog,
                f"the plan file is for catalog {self.previous.catalog!r}, "
                f"not {self.catalog.name!r}",
            )
        problems.raise_if_any()

    def _why_none(self, known: Assessed) -> str:
        if known.assessment.options:
            kinds = ", ".join(sorted(known.assessment.options))
            return (
                f"only {kinds} could host it, and the catalog rules that out (isolation: "
                "dedicated needs a single-model endpoint, a group an Inference Components one)"
            )
        reasons: dict[str, list[str]] = defaultdict(list)
        for name, why in known.assessment.rejected.items():
            reasons[why.split(";")[0] if "GiB" not in why else "memory"].append(name)
        rejected = known.assessment.rejected
        relevant = [t for t, why in rejected.items() if not why.startswith("not the preferred")]
        largest = max(
            relevant or rejected, key=lambda t: instance_spec(t).accelerator_memory_mib_total
        )
        return (
            f"no instance type in {self.region} can host it ({len(known.assessment.rejected)} "
            f"rejected); the largest, {largest}: {known.assessment.rejected[largest]}"
        )

    def placement(self, name: str, endpoint: str, option: Option, why: str = "") -> Placement:
        known = self.assessed[name]
        key = (id(known), id(option), why)
        template = self.templates.get(key)
        if template is None:
            template = self._template(known, option, why)
            self.templates[key] = template
        placement = object.__new__(Placement)  # a shallow copy: dataclasses.replace is slow
        placement.__dict__.update(template.__dict__, name=name, endpoint=endpoint)
        return placement

    def _template(self, known: Assessed, option: Option, why: str) -> Placement:
        """A placement of ``option`` for models assessed as ``known`` (name and endpoint
        are filled in per model; models alike share the lists and dicts, read only)."""
        decision = known.decision
        assert decision is not None
        kind = option.kind
        reason = decision.reason
        if why:
            reason = f"{reason}; {why}"
        elif kind != decision.option.kind or option.instance_type != decision.option.instance_type:
            reason = (
                f"kept on its endpoint ({kind}, {option.instance_type}); now the best is "
                f"{decision.option.kind} on {decision.option.instance_type} because {reason} "
                "(--repack to review)"
            )
        serverless = KINDS[kind].serverless
        copies, hours = min_copies(kind, decision.to_zero), known.needs.active_hours
        own = option.expected_hourly(copies, hours)
        placement = Placement(
            name="",
            endpoint="",
            min_copies=copies,
            max_copies=option.max_copies,
            peak_rpm=known.needs.peak_rpm,
            active_hours=hours,
            defaults=list(known.needs.defaults),
            reason=placed_reason(reason, own, _decided_hourly(decision, hours)),
            own_hourly=own,
            scale_to_zero=QUEUED_ZERO_REASON
            if KINDS[kind].queued
            else ZERO_REASON
            if serverless
            else decision.scale_to_zero_reason
            if KINDS[kind].scale_to_zero
            else "",
            scores=dict(zip(AXES, decision.scores.values(), strict=True)),
        )
        placement.__dict__.update(self._hosting(option))
        return placement

    def _hosting(self, option: Option) -> dict[str, Any]:
        """The fields of a placement that come from ``option``'s copy alone (its shape,
        performance, memory and price, the same at any traffic): kept per copy, as the
        models alike share them (read only)."""
        key = (id(option.shape), id(option.perf), id(option.parts), option.kind, option.price)
        fields = self.hostings.get(key)
        if fields is not None:
            return fields
        perf, parts = option.perf, option.parts
        fields = self.hostings[key] = {
            "accelerators": option.shape.accelerators,
            "memory_mib": option.shape.memory_mib,
            "cpu_cores": option.shape.cpu_cores,
            "rpm_per_copy": round(perf.rpm, 3),
            "throughput": perf.source,
            "throughput_detail": perf.detail,
            "concurrency": perf.concurrency,
            "latency_ms": round(perf.latency_ms, 1) if perf.latency_ms is not None else None,
            "device_memory_gib": round(parts.device_gib, 2),
            "memory_parts": {
                "weights_gib": round(parts.weights_gib, 2),
                "kv_pool_gib": round(parts.kv_pool_gib, 2),
                "headroom_gib": round(parts.headroom_gib, 2),
            }
            | ({"adapters_gib": round(parts.adapters_gib, 2)} if parts.adapters_gib else {}),
            # a serverless option's price is an invocation busy for an hour
            "cost_per_request": round(option.price * request_seconds(perf) / 3600, 9)
            if KINDS[option.kind].serverless
            else None,
        }
        return fields

    # -- stability --------------------------------------------------------------------------

    def _group_key(self, model: ModelEntry, option: Option) -> str:
        """The endpoints ``model`` may share on ``option``: its catalog ``group``'s, else
        those of its type, hub models apart (an endpoint's network isolation applies to
        every model on it, and a hub model downloads its weights)."""
        kind = KINDS[option.kind]
        if kind.packs_devices:
            if model.group:
                return f"group:{model.group}"
            return option.instance_type + (HUB_GROUP_SUFFIX if model.hub is not None else "")
        if kind.pools_memory:  # one container for all: models of one environment
            key = f"{kind.prefix}:{model.framework}:{option.instance_type}"
            if model.environment:
                key += ":env:" + ",".join(f"{k}={v}" for k, v in sorted(model.environment.items()))
            return key
        return "dedicated"  # an endpoint of its own (single-model, asynchronous)

    def stay_option(self, model: ModelEntry, endpoint: EndpointPlan) -> tuple[Option | None, str]:
        """The option that keeps ``model`` on ``endpoint``, or None and why it must move."""
        known = self.assessed[model.name]
        decision = known.decision
        assert decision is not None
        excluded = {
            c.kind: c.why_not
            for c in decision.candidates
            if c.why_not
            and c.why_not != "lower utility"
            and not c.why_not.startswith("no instance type fits")
        }
        if endpoint.kind in excluded:
            return None, f"{endpoint.kind} no longer allowed: {excluded[endpoint.kind]}"
        options = [
            o
            for o in known.assessment.options.get(endpoint.kind, [])
            if o.instance_type == endpoint.instance_type
        ]
        if not options:
            if not self._priced(endpoint.instance_type):
                return None, f"{endpoint.instance_type} has no price in {self.region}"
            why = known.assessment.rejected.get(endpoint.instance_type, "its needs changed")
            return None, f"{endpoint.instance_type} can no longer run it: {why}"
        option = options[0]
        group = self._group_key(model, option)
        if group == endpoint.group:
            return option, ""
        if group == endpoint.group + HUB_GROUP_SUFFIX:
            return None, (
                "it downloads its weights from the hub and its endpoint is network-isolated; "
                "hub models get endpoints of their own"
            )
        if group + HUB_GROUP_SUFFIX == endpoint.group:
            return (
                None,
                "its weights no longer come from the hub: it leaves the hub models' endpoint",
            )
        return None, f"its group changed (endpoint group {endpoint.group})"

    def _priced(self, instance_type: str) -> bool:
        """Whether ``instance_type`` (or a serverless memory size) has a price here."""
        if type_memory(instance_type) is not None:
            return serverless_prices(self.region) is not None
        return instance_type in hourly_prices(self.region)

    def keep_previous(self) -> list[str]:
        """Keep the previous plan's assignments that still hold; returns the models to place."""
        assert self.previous is not None
        for e in self.previous.endpoints.values():
            self.plan.endpoints[e.name] = EndpointPlan(
                name=e.name,
                kind=e.kind,
                instance_type=e.instance_type,
                stack=e.stack,
                group=e.group,
            )
            stem = e.name.rsplit("-", 1)[0]
            number = e.name.rsplit("-", 1)[-1]
            if number.isdigit():
                self.counters[stem] = max(self.counters[stem], int(number))
        for name, old in self.previous.placements.items():
            model = self.models.get(name)
            endpoint = self.plan.endpoints.get(old.endpoint)
            if model is None or endpoint is None:
                continue
            option, why = self.stay_option(model, endpoint)
            if option is None:
                self.moves[name] = why
                continue
            placement = self.placement(name, endpoint.name, option)
            decision = self.assessed[name].decision
            if decision is not None and old.reason.startswith(decision.reason):
                # the same decision, placed as explained then, at today's own cost
                decided = _decided_hourly(decision, placement.active_hours)
                placement.reason = placed_reason(old.reason, placement.own_hourly, decided)
            self.plan.placements[name] = placement
            endpoint.models.append(name)
        for name in [n for n, e in self.plan.endpoints.items() if not e.models]:
            del self.plan.endpoints[name]
        for e in self.plan.endpoints.values():
            self.charge(e.stack, e, self.endpoint_resources(e, e.stack))
        return [m.name for m in self.catalog.models if m.name not in self.plan.placements]

    # -- new models -------------------------------------------------------------------------

    def new_endpoint(self, kind: str, group: str, instance_type: str, stem: str) -> EndpointPlan:
        if not KINDS[kind].shared:
            name = stem
        else:
            self.counters[stem] += 1
            name = f"{stem}-{self.counters[stem]:03d}"
        endpoint = EndpointPlan(
            name=name, kind=kind, instance_type=instance_type, stack="", group=group
        )
        self.plan.endpoints[name] = endpoint
        return endpoint

    def own_resources(self, e: EndpointPlan) -> tuple[int, int]:
        """Resources and outputs ``e`` adds to any stack: its kind's per endpoint, its
        models' and the volume key of an EBS-backed type."""
        kind = KINDS[e.kind]
        models = sum(self.model_resources(self.plan.placements[m], e.kind) for m in e.models)
        resources = kind.endpoint_resources + models
        if not spec_of(e.instance_type).local_nvme:
            resources += VOLUME_KEY_RESOURCES
        outputs = kind.endpoint_outputs + sum(self.model_outputs(m) for m in e.models)
        return resources, outputs

    def in_stack(self, e: EndpointPlan, stack: str, own: tuple[int, int]) -> tuple[int, int]:
        """Resources and outputs ``e`` (``own``: :meth:`own_resources`) adds to ``stack``:
        its own, and its kind's shared resources when ``stack`` holds none of that kind
        yet."""
        resources, outputs = own
        if e.kind not in self.stack_kinds[stack]:
            resources += KINDS[e.kind].stack_resources
            outputs += KINDS[e.kind].stack_outputs
        return resources, outputs

    def endpoint_resources(self, e: EndpointPlan, stack: str) -> tuple[int, int]:
        """Resources and outputs ``e`` adds to ``stack`` (:meth:`in_stack`)."""
        return self.in_stack(e, stack, self.own_resources(e))

    def charge(self, stack: str, e: EndpointPlan, resources: tuple[int, int]) -> None:
        """Add ``e``, adding ``resources`` and outputs (:meth:`in_stack`), to ``stack``'s
        budget."""
        self.usage[stack][0] += resources[0]
        self.usage[stack][1] += resources[1]
        self.stack_kinds[stack].add(e.kind)

    def full(self, e: EndpointPlan) -> bool:
        """An endpoint of a kind that limits its models holds the most it may."""
        limited = KINDS[e.kind].limit_models
        return limited and len(e.models) >= self.limits.max_models_per_endpoint

    def room(self, e: EndpointPlan, p: Placement) -> bool:
        """Whether ``p`` may join ``e`` (:meth:`obstacle`)."""
        return self.obstacle(e, p) is None

    def obstacle(self, e: EndpointPlan, p: Placement) -> str | None:
        """Why ``p`` may not join ``e``, or None: ``e`` holds the most models it may, its
        kept stack is at the budget a joining model may take it to
        (:attr:`Limits.joined_resources`), it (new, with adapters) would not fit a stack of
        its own, or (multi-model) the sizes would be more than :data:`MME_BAND` apart."""
        if self.full(e):
            return f"holds {len(e.models)} models, the most an endpoint may"
        if not e.stack and self.catalog.adapter_ranks and not self.fits_alone(e, p):
            return "would not fit a stack of its own"
        if e.stack:
            (resources, outputs), limits = self.usage[e.stack], self.limits
            adds = self.model_resources(p, e.kind)
            if resources + adds > limits.joined_resources:
                return (
                    f"is in stack {e.stack}, full: {resources} of {limits.joined_resources} "
                    f"resources, and the model adds {adds}"
                )
            if outputs + self.model_outputs(p.name) > limits.joined_outputs:
                return f"is in stack {e.stack}, full: {outputs} of {limits.joined_outputs} outputs"
        if KINDS[e.kind].pools_memory:
            low, high = self.memory_range(e)
            if max(high, p.memory_mib) > MME_BAND * min(low, p.memory_mib):
                return (
                    f"serves models of {low:,}-{high:,} MiB, more than {MME_BAND:g}x apart "
                    f"from its {p.memory_mib:,} MiB"
                )
        return None

    def fits_alone(self, e: EndpointPlan, p: Placement) -> bool:
        """``e`` with ``p`` fits a stack of its own. Only adapters can overfill one: without
        them an endpoint's at most ``max_models_per_endpoint`` models stay far below the
        budget (40 x 7 resources + the endpoint's and the stack's own)."""
        resources, outputs = self.endpoint_resources(e, "")
        return (
            STACK_BASE + resources + self.model_resources(p, e.kind) <= self.limits.stack_resources
            and STACK_BASE_OUTPUTS + outputs + self.model_outputs(p.name)
            <= self.limits.stack_outputs
        )

    def memory_range(self, e: EndpointPlan) -> tuple[int, int]:
        """The smallest and largest model memory (MiB) on a multi-model endpoint."""
        known = self.ranges.get(e.name)
        if known is None or known[2] != len(e.models):
            sizes = [self.plan.placements[m].memory_mib for m in e.models]
            known = (min(sizes), max(sizes), len(e.models))
            self.ranges[e.name] = known
        return known[0], known[1]

    def multi_model_types(self, names: list[str]) -> dict[str, Option]:
        """One instance type per framework for new multi-model models: the type all of
        them can use whose endpoint (every model's memory at minimum, their traffic at
        maximum) costs least; their options on it, by model."""
        by_framework: dict[tuple[str, str], list[str]] = defaultdict(list)
        for name in names:
            decision = self.assessed[name].decision
            if decision is not None and KINDS[decision.option.kind].pools_memory:
                by_framework[(decision.option.kind, self.models[name].framework)].append(name)
        chosen: dict[str, Option] = {}
        for (kind, _), members in by_framework.items():
            # models with the same options and hours are one class, counted
            classes: dict[tuple[int, float], list[str]] = defaultdict(list)
            for n in members:
                known = self.assessed[n]
                classes[(id(known.assessment), known.needs.active_hours)].append(n)
            # each class's options as assessed, by type (a multi-model kind has one per
            # type: whole instances), priced at its traffic only once a type is chosen
            priced = {key: self.assessed[ns[0]].assessment.options for key, ns in classes.items()}
            options = {
                key: {o.instance_type: o for o in found.unpriced(kind)}
                for key, found in priced.items()
            }
            common = set.intersection(*(set(o) for o in options.values()))
            counted = [
                (options[key], self.assessed[ns[0]].needs.peak_rpm, key[1], len(ns))
                for key, ns in classes.items()
            ]
            best: tuple[float, str] | None = None
            for t in sorted(common):
                # by memory, ties in class order (the index)
                ranked = sorted(
                    (by_type[t].copy_gib, i, by_type[t], peak / by_type[t].perf.rpm, hours, n)
                    for i, (by_type, peak, hours, n) in enumerate(counted)
                )
                total = 0.0
                for band in _bands([r[0] for r in ranked]):
                    total += _multi_model_cost([ranked[i][2:] for i in band])
                cost = (total, t)
                best = cost if best is None or cost < best else best
            if best is not None:
                for key, ns in classes.items():
                    option = priced[key].at_traffic(options[key][best[1]])
                    chosen.update((n, option) for n in ns)
        return chosen

    def group_types(self, names: list[str]) -> dict[str, tuple[Option, str]]:
        """One instance type per catalog ``group`` of new models, since a group shares one
        Inference Components endpoint: the type an endpoint of the group already has, else
        the type every member can use whose packed cost (:meth:`packed_cost`) is least;
        each member's cheapest option on it, with why. A group with no common type keeps
        each model's own option (and so opens an endpoint per type)."""
        members: dict[str, list[str]] = defaultdict(list)
        for name in names:
            group, decision = self.models[name].group, self.assessed[name].decision
            if group and decision is not None and KINDS[decision.option.kind].packs_devices:
                members[group].append(name)
        chosen: dict[str, tuple[Option, str]] = {}
        for group, group_names in members.items():
            kind = self.assessed[group_names[0]].decision.option.kind  # type: ignore[union-attr]
            by_type = {n: self._cheapest_by_type(n, kind) for n in group_names}
            common = set.intersection(*(set(options) for options in by_type.values()))
            kept = [
                e.instance_type
                for e in self.plan.endpoints.values()
                if e.group == f"group:{group}" and e.instance_type in common
            ]
            types = kept[:1] or sorted(common)
            if not types:
                continue
            cost, best = min(
                (self.packed_cost(t, {n: by_type[n][t] for n in group_names}), t) for t in types
            )
            why = f"type {best} chosen for group {group}'s models together" + (
                " (the group's endpoint has it)" if kept else f" (${cost:,.2f}/h packed)"
            )
            chosen.update((n, (by_type[n][best], why)) for n in group_names)
        return chosen

    def _cheapest_by_type(self, name: str, kind: str) -> dict[str, Option]:
        """The model's cheapest option of ``kind`` on each instance type."""
        found: dict[str, Option] = {}
        for option in self.assessed[name].assessment.options.get(kind, []):
            found.setdefault(option.instance_type, option)
        return found

    def packed_cost(self, t: str, group: dict[str, Option]) -> float:
        """Expected USD per hour of ``group`` packed alone on instances of ``t`` (devices
        rounded up to instances at minimum and at peak, weighted by active hours)."""
        if not group:
            return 0.0
        low = high = weighted = 0.0
        for name, o in group.items():
            minimum = 0 if self.assessed[name].decision.to_zero else 1  # type: ignore[union-attr]
            low += minimum * o.shape.accelerators
            high += o.max_copies * o.shape.accelerators
            active = self.assessed[name].needs.active_hours / 24
            weighted += (o.max_copies - minimum) * o.shape.accelerators * active
        count = instance_spec(t).accelerator_count
        w = weighted / (high - low) if high > low else 0.0
        lo, hi = math.ceil(low / count - 1e-9), math.ceil(high / count - 1e-9)
        return next(iter(group.values())).price * (lo + w * (hi - lo))

    def _alternatives(self, name: str, kind: str, t: str) -> dict[str, Option]:
        """The model's eight cheapest other types of ``kind``, one option each."""
        found: dict[str, Option] = {}
        for alt in self.assessed[name].assessment.options[kind][:8]:
            if alt.instance_type != t:
                found.setdefault(alt.instance_type, alt)
        return found

    def _queue_options(self, members: dict[str, dict[str, Option]]) -> dict[str, tuple]:
        """Per batch model, its queued kind's option and expected cost, where its decision
        allowed that kind."""
        return {
            name: (c.option, c.expected_hourly)
            for group in members.values()
            for name in group
            for c in self.assessed[name].decision.candidates  # type: ignore[union-attr]
            if KINDS[c.kind].queued
            and c.option is not None
            and c.why_not in (None, "lower utility")
        }

    def _best_move(
        self, members: dict[str, dict[str, Option]], kind: str, queues: dict[str, tuple]
    ) -> tuple[float, str, str | None, dict[str, Option]] | None:
        """The move that lowers the expected cost most: one model (or every model that
        can) from an underfilled type to another type, or one batch model to its queue
        (target None); None when no move lowers it."""
        best: tuple[float, str, str | None, dict[str, Option]] | None = None

        def consider(delta: float, t: str, target: str | None, move: dict[str, Option]) -> None:
            nonlocal best
            if delta < -1e-6 and (best is None or (delta, len(move)) < (best[0], len(best[3]))):
                best = (delta, t, target, move)

        for t, group in members.items():
            demand = sum(o.max_copies * o.shape.accelerators for o in group.values())
            if not group or demand >= 2 * instance_spec(t).accelerator_count:
                continue
            before = self.packed_cost(t, group)
            for n in (n for n in group if n in queues):
                option, hourly = queues[n]
                rest = {m: o for m, o in group.items() if m != n}
                consider(self.packed_cost(t, rest) + hourly - before, t, None, {n: option})
            alts = {name: self._alternatives(name, kind, t) for name in group}
            for target_type in sorted({tt for a in alts.values() for tt in a}):
                target = members.get(target_type, {})
                movers = [{n: alts[n][target_type]} for n in group if target_type in alts[n]]
                everyone = {n: alts[n][target_type] for n in group if target_type in alts[n]}
                for move in [*movers, everyone]:
                    rest = {n: o for n, o in group.items() if n not in move}
                    delta = (
                        self.packed_cost(t, rest)
                        + self.packed_cost(target_type, {**target, **move})
                        - before
                        - self.packed_cost(target_type, target)
                    )
                    consider(delta, t, target_type, move)
        return best

    def consolidate(self, names: list[str]) -> dict[str, tuple[Option, str]]:
        """Types of a device-packing kind (Inference Components) that would not fill two
        instances at peak waste the unused part of their instances: move such models, one
        at a time, to another of their options where the fleet's expected cost (instances
        rounded up per type) drops most, while any move lowers it; a batch model's options
        include its queued endpoint (asynchronous: its instances alone, none while idle).
        Returns the moved models' options and why."""
        moved: dict[str, tuple[Option, str]] = {}
        # by kind and network access: hub models share no endpoint with isolated ones
        by_kind: dict[tuple[str, bool], dict[str, dict[str, Option]]] = defaultdict(
            lambda: defaultdict(dict)
        )
        for name in names:
            decision = self.assessed[name].decision
            if decision is None or self.models[name].group:
                continue
            if KINDS[decision.option.kind].packs_devices:
                key = (decision.option.kind, self.models[name].hub is not None)
                by_kind[key][decision.option.instance_type][name] = decision.option
        for (kind, _), members in by_kind.items():
            queues = self._queue_options(members)
            for _ in range(4 * len(names)):
                best = self._best_move(members, kind, queues)
                if best is None:
                    break
                delta, t, target_type, move = best
                saving = f"${-delta * 730:,.0f} a month of unfilled instances"
                for name, alt in move.items():
                    del members[t][name]
                    if target_type is None:
                        moved[name] = (
                            alt,
                            f"on an asynchronous endpoint ({alt.instance_type}) rather than "
                            f"{t}: its own instances, none while idle, save {saving}",
                        )
                        continue
                    members[target_type][name] = alt
                    moved[name] = (
                        alt,
                        f"on {target_type} rather than {t}: with the fleet's other models "
                        f"there it saves {saving}",
                    )
        return moved

    def spare_devices(self, e: EndpointPlan) -> int:
        """Devices free on ``e``'s instances at minimum scale (a device-packing kind)."""
        ps = [self.plan.placements[m] for m in e.models]
        spec = instance_spec(e.instance_type)
        used = sum(p.min_copies * p.accelerators for p in ps)
        shapes = ((Shape(p.accelerators, p.memory_mib, p.cpu_cores), p.min_copies) for p in ps)
        return instances_needed(shapes, spec) * spec.accelerator_count - used

    def packed_instances(self, e: EndpointPlan, extra: Placement | None = None) -> float:
        """Expected instances of a device-packing endpoint (with ``extra`` added): its
        instances at minimum and at peak, weighted by its models' active hours."""
        ps = [self.plan.placements[m] for m in e.models] + ([extra] if extra else [])
        spec = instance_spec(e.instance_type)

        def count(copies: str) -> int:
            shapes = (
                (Shape(p.accelerators, p.memory_mib, p.cpu_cores), getattr(p, copies)) for p in ps
            )
            return instances_needed(shapes, spec)

        low, high = count("min_copies"), count("max_copies")
        adds = [(p.max_copies - p.min_copies) * p.accelerators for p in ps]
        weighted = sum(p.active_hours / 24 * d for p, d in zip(ps, adds, strict=True))
        return low + (weighted / sum(adds) if sum(adds) else 0.0) * (high - low)

    def join_kept(
        self, name: str, option: Option
    ) -> tuple[tuple[EndpointPlan, Placement] | None, str]:
        """On a re-plan, a new model of a shared kind joins an endpoint of the previous plan
        with room for it (:meth:`kept_with_room`), where joining adds no more to the
        endpoint's expected cost than an endpoint of its own would cost, before a new
        endpoint opens (the cheapest such). Returns the endpoint and the model's placement
        there (None when none takes it) and why each endpoint with room did not take it
        (empty when none had room)."""
        if self.previous is None or not KINDS[option.kind].shared:
            return None, ""
        alone = self.alone_hourly(name, option)
        best: tuple[float, EndpointPlan, Option] | None = None
        passed: list[tuple[bool, str]] = []  # (on another type, why): its own type first
        for e, alt, free in self.kept_with_room(name, option):
            cost, obstacle = self.join_obstacle(e, name, alt, alone)
            if obstacle is not None:
                other = e.instance_type != option.instance_type
                passed.append((other, f"{e.name} ({e.instance_type}{free}) {obstacle}"))
            elif best is None or cost < best[0]:
                best = (cost, e, alt)
        if best is None:
            shown = [why for _, why in sorted(passed, key=lambda item: item[0])]
            return None, "; ".join(shown[:3]) + (
                f" (and {len(shown) - 3} more)" if shown[3:] else ""
            )
        added, e, alt = best
        room = (
            "whose instances have devices free at minimum scale"
            if KINDS[e.kind].packs_devices
            else "a multi-model endpoint of its framework"
        )
        # The model's own cost there counts the devices it occupies; what the fleet pays
        # more is the endpoint's added cost, the figure the choice compared (below zero
        # when a model active fewer hours lowers the endpoint's weighted active share: no
        # instance is added, so nothing is paid more).
        why = (
            f"joins {e.name} ({e.instance_type}), {room}: it adds "
            f"{usd(max(0, monthly(added)))} a month to that endpoint, against "
            f"{usd(monthly(alone))} for a new {option.instance_type} endpoint"
        )
        return (e, self.placement(name, "", alt, why)), ""

    def kept_with_room(
        self, name: str, option: Option
    ) -> Iterator[tuple[EndpointPlan, Option, str]]:
        """The previous plan's endpoints of ``option``'s kind outside catalog groups with
        room for the model: on a type where it has an option of that kind and (Inference
        Components) on the type of ``option``, where the endpoint adds instances, or with
        the devices a copy there needs free at minimum scale; each with the model's option
        there and the devices free (``, 6 devices free``, or empty)."""
        assert self.previous is not None
        model = self.models[name]
        by_type: dict[str, list[Option]] = defaultdict(list)
        for o in self.assessed[name].assessment.options[option.kind]:
            by_type[o.instance_type].append(o)
        packs = KINDS[option.kind].packs_devices
        for e in self.plan.endpoints.values():
            if e.kind != option.kind or e.name not in self.previous.endpoints:
                continue
            if e.instance_type not in by_type or e.group.startswith("group:"):
                continue
            options = by_type[e.instance_type]
            own = self._group_key(model, options[0])
            if e.group not in (own, own + HUB_GROUP_SUFFIX) and own != e.group + HUB_GROUP_SUFFIX:
                continue  # another framework or environment: never that endpoint's models
            if not packs:
                yield e, options[0], ""
                continue
            spare = self.spare_devices(e)
            alt = next((o for o in options if o.shape.accelerators <= spare), None)
            if alt is None and e.instance_type == option.instance_type:
                alt = options[0]
            if alt is not None:
                devices = f"{spare} device" + ("s" if spare > 1 else "")
                yield e, alt, f", {devices} free" if spare else ""

    def join_obstacle(
        self, e: EndpointPlan, name: str, alt: Option, alone: float
    ) -> tuple[float, str | None]:
        """What the model ``name`` on ``alt`` adds to kept ``e``'s expected USD per hour,
        and why it may not join ``e`` (None: it may): network isolation (hub models and
        isolated ones never share an endpoint), :meth:`obstacle`, or it would add more
        than ``alone``, an endpoint of its own."""
        own = self._group_key(self.models[name], alt)
        if own == e.group + HUB_GROUP_SUFFIX:
            return 0.0, "is network-isolated and the model downloads its weights from the hub"
        if e.group == own + HUB_GROUP_SUFFIX:
            return 0.0, "serves hub models (no network isolation) and the model is network-isolated"
        placement = self.placement(name, "", alt)
        obstacle = self.obstacle(e, placement)
        if obstacle is not None:
            return 0.0, obstacle
        cost = self.join_hourly(e, placement)
        if cost > alone + 1e-9:
            return cost, (
                f"would cost ${cost * HOURS_PER_MONTH:,.0f} a month more, an endpoint of its "
                f"own ${alone * HOURS_PER_MONTH:,.0f}"
            )
        return cost, None

    def alone_hourly(self, name: str, option: Option) -> float:
        """The expected USD per hour of an endpoint of the model's own on ``option``."""
        if KINDS[option.kind].packs_devices:
            decision = self.assessed[name].decision
            assert decision is not None
            copies = min_copies(option.kind, decision.to_zero)
            return option.expected_hourly(copies, self.assessed[name].needs.active_hours)
        return self.sized_hourly(
            option.kind, option.instance_type, [self.placement(name, "", option)]
        )

    def join_hourly(self, e: EndpointPlan, p: Placement) -> float:
        """What ``p`` joining ``e`` adds to its expected USD per hour."""
        if KINDS[e.kind].packs_devices:
            price = hourly_prices(self.region)[e.instance_type]
            return price * (self.packed_instances(e, p) - self.packed_instances(e))
        ps = [self.plan.placements[m] for m in e.models]
        return self.sized_hourly(e.kind, e.instance_type, [*ps, p]) - self.sized_hourly(
            e.kind, e.instance_type, ps
        )

    def sized_hourly(self, kind: str, instance_type: str, ps: list[Placement]) -> float:
        """The expected USD per hour of an endpoint of ``kind`` on ``instance_type`` with
        ``ps``, sized (:mod:`fm_platform.fleet.placing.endpoints`) and priced
        (:mod:`fm_platform.fleet.placing.cost`) as the plan's endpoints are."""
        trial = EndpointPlan(name="", kind=kind, instance_type=instance_type, stack="", group="")
        priced = [copy.copy(p) for p in ps]  # pricing sets each model's share
        SIZERS[kind](trial, priced, spec_of(instance_type))
        price_endpoint(trial, priced, hourly_prices(self.region)[instance_type])
        return trial.expected_hourly

    def place_new(self, names: list[str]) -> None:
        # open endpoints by group and instance type, in the order they opened; the first
        # of each list that is not full
        open_by_type: dict[tuple[str, str], list[EndpointPlan]] = defaultdict(list)
        for e in self.plan.endpoints.values():
            open_by_type[e.group, e.instance_type].append(e)
        first_open: dict[tuple[str, str], int] = defaultdict(int)
        chosen = {
            name: (
                option,
                f"type {option.instance_type} chosen for the framework's models together",
            )
            for name, option in self.multi_model_types(names).items()
        }
        chosen.update(self.consolidate(names))
        chosen.update(self.group_types(names))
        chosen.update((n, (o, "moved by --repack")) for n, o in self.forced.items() if n in names)

        def option_of(name: str) -> Option:
            if name in chosen:
                return chosen[name][0]
            decision = self.assessed[name].decision
            assert decision is not None
            return decision.option

        options = {name: option_of(name) for name in names}

        def order(name: str) -> tuple:
            o = options[name]
            return (o.kind, o.instance_type, -o.copy_gib, name)

        for name in sorted(names, key=order):
            model = self.models[name]
            option = options[name]
            group = self._group_key(model, option)
            p = self.placement(name, "", option, chosen.get(name, (None, ""))[1])
            endpoint = None
            if KINDS[option.kind].shared:
                key = (group, option.instance_type)
                endpoints = open_by_type[key]
                first = first_open[key]
                while first < len(endpoints) and self.full(endpoints[first]):
                    first += 1
                first_open[key] = first
                endpoint = next(
                    (e for e in itertools.islice(endpoints, first, None) if self.room(e, p)),
                    None,
                )
            passed = ""
            if endpoint is None and name not in self.forced and model.group is None:
                joined, passed = self.join_kept(name, option)
                if joined is not None:
                    endpoint, p = joined
            if endpoint is None:
                prefix = KINDS[option.kind].prefix
                if not KINDS[option.kind].shared:
                    stem = f"{prefix}-{name}"
                elif KINDS[option.kind].packs_devices:
                    stem = f"{prefix}-{model.group or family(option.instance_type)}"
                    if group.endswith(HUB_GROUP_SUFFIX):
                        stem += "-hub"
                else:
                    stem = f"{prefix}-{model.framework}"
                endpoint = self.new_endpoint(option.kind, group, option.instance_type, stem)
                open_by_type[group, option.instance_type].append(endpoint)
                if passed:
                    p.reason = f"{p.reason}; opened {endpoint.name}: {passed}"
                    self.opened[endpoint.name] = passed
            p.endpoint = endpoint.name
            self.plan.placements[name] = p
            endpoint.models.append(name)
            if KINDS[endpoint.kind].pools_memory:
                known = self.ranges.get(endpoint.name, (p.memory_mib, p.memory_mib, 0))
                if known[2] == len(endpoint.models) - 1:
                    low, high = min(known[0], p.memory_mib), max(known[1], p.memory_mib)
                    self.ranges[endpoint.name] = (low, high, len(endpoint.models))
            if endpoint.stack:
                self.usage[endpoint.stack][0] += self.model_resources(p, endpoint.kind)
                self.usage[endpoint.stack][1] += self.model_outputs(name)

    # -- endpoints and stacks ---------------------------------------------------------------

    def stack_fits(self, stack: str, resources: int, outputs: int) -> bool:
        used = self.usage[stack]
        return (
            used[0] + resources <= self.limits.stack_resources
            and used[1] + outputs <= self.limits.stack_outputs
        )

    def assign_stacks(self) -> None:
        stacks = [s for s in self.plan.stacks if s]
        number = len(stacks)
        for endpoint in self.plan.endpoints.values():
            if endpoint.stack:
                continue
            own = self.own_resources(endpoint)
            stack = next(
                (s for s in stacks[-3:] if self.stack_fits(s, *self.in_stack(endpoint, s, own))),
                None,
            )
            if stack is None:
                number += 1
                while f"{self.catalog.name}-{number:02d}" in stacks:
                    number += 1
                stack = f"{self.catalog.name}-{number:02d}"
                stacks.append(stack)
            endpoint.stack = stack
            self.charge(stack, endpoint, self.in_stack(endpoint, stack, own))

    def run(self) -> Plan:
        """:meth:`assess_all`, then :meth:`place_all`, without cyclic garbage collection
        (:func:`without_cycle_collection`)."""
        with without_cycle_collection():
            self.assess_all()
            return self.place_all()

    def place_all(self) -> Plan:
        """The plan of the models assessed (:meth:`assess_all`): each placed, every
        endpoint sized, in a stack and priced (module docstring)."""
        if self.previous is not None:
            new = self.keep_previous()
        else:
            new = [m.name for m in self.catalog.models]
        self.place_new(new)
        if self.previous is not None:
            record_moves(self.previous, self.plan)
        for e in self.plan.endpoints.values():
            SIZERS[e.kind](e, [self.plan.placements[m] for m in e.models], spec_of(e.instance_type))
        self.assign_stacks()
        self.time_cold_starts()
        price_plan(self.plan)
        options = {name: known.assessment.options for name, known in self.assessed.items()}
        plan_pools(self.plan, self.models, options, self.previous)
        return self.plan

    def time_cold_starts(self) -> None:
        """Every model that may scale to zero gets its expected cold start
        (:mod:`fm_platform.fleet.sizing.coldstart`): with an instance launch where its endpoint
        can reach zero instances (a serverless endpoint has none to launch), from the data
        cache where an Inference Components
        endpoint keeps an instance and caches by default
        (:func:`~fm_platform.rules.caching.caches_by_default`)."""
        placements = self.plan.placements
        for e in self.plan.endpoints.values():
            to_zero = [placements[m] for m in e.models if placements[m].min_copies == 0]
            if not to_zero:
                continue
            caching = caches_by_default(0, (e.instance_type,)) if KINDS[e.kind].data_cache else None
            cached = cached_start_skips_download(caching, keeps_instances=e.min_instances > 0)
            launches = e.min_instances == 0 and not KINDS[e.kind].serverless
            for p in to_zero:
                needs = self.assessed[p.name].needs
                seconds, p.cold_start = cold_start(needs, launches, cached=cached)
                p.cold_start_s = round(seconds, 1)


def plan_fleet(
    catalog: Catalog,
    previous: Plan | None = None,
    *,
    region: str | None = None,
    limits: Limits = Limits(),
) -> Plan:
    """Plan ``catalog`` keeping ``previous``'s assignments (module docstring).

    Raises one ``ValueError`` listing every model nothing can host, with why.
    """
    return Planner(catalog, previous, region=region, limits=limits).run()
