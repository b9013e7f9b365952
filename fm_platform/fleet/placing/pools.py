"""Fallback instance pools of planned endpoints: the types SageMaker provisions, after the
endpoint's own, when it finds no capacity ("Deploy to multiple instance types with
instance pools", SageMaker Developer Guide).

An endpoint gets pools when a model on it asks (catalog ``fallback_instance_types``:
``auto``, or a list of types) and its kind writes ``InstancePools``
(:attr:`fm_platform.fleet.deciding.kinds.Kind.instance_pools`: Inference Components and
single-model endpoints, whose constructs take fallback types). Candidates: every type
priced in the plan's region but the endpoint's own, within every list its models give. A
candidate qualifies when every model of the endpoint has an option of the endpoint's kind
there (its hardware rules, container images and latency objective hold there,
:mod:`fm_platform.fleet.deciding.options`)

- with the copy shape of that option there: its devices, host memory and CPU cores may
  differ from the endpoint's own type (an Inference Components model then gets a
  per-type ``Specifications`` entry, a single-model copy takes a whole instance of either
  type), and where its container differs there (another image for other hardware,
  another tensor-parallel degree or concurrency) the stacks give that type a model of its
  own (a component's per-type ``ModelName``, a single-model pool's ``ModelNameOverride``);
- serving at least the planned requests per minute per copy, so that the one scaling
  target (invocations per copy or per instance) holds on every pool.

There, each model's copies are that option's (at most enough for its peak at that
throughput), the instances at minimum and maximum scale are sized as on the endpoint's own
type (:mod:`fm_platform.fleet.placing.endpoints`), and the endpoint's expected cost is priced as
its own (:mod:`fm_platform.fleet.placing.cost`). The cheapest qualifying types by that expected
cost, at most four (botocore's ``InstancePoolList`` holds five pools with the endpoint's
own), become priorities 2-5. The plan's costs stay priced at the endpoint's own type: a
fallback costs what it costs while SageMaker runs it, shown per pool.

Stability: an endpoint keeps the previous plan's pool types, in their order, while every
one still qualifies (a change of an Inference Components endpoint's pools replaces it,
docs/day2-changes.md); otherwise they are chosen again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence

from fm_platform.fleet.deciding.kinds import KINDS
from fm_platform.fleet.deciding.options import Option
from fm_platform.fleet.models.catalog import ModelEntry
from fm_platform.fleet.outputs.plan import EndpointPlan, Placement, Plan, PoolPlan, PoolShape
from fm_platform.fleet.placing.cost import HOURS_PER_MONTH, price_endpoint
from fm_platform.fleet.placing.endpoints import SIZERS
from fm_platform.hardware.instances import instance_spec
from fm_platform.hardware.prices import hourly_prices
from fm_platform.rules.pools import AUTO_FALLBACK, most_pools


def candidate_types(models: Iterable[ModelEntry], priced: Iterable[str]) -> set[str] | None:
    """The types ``models`` let their endpoint fall back to, among ``priced``: None when
    none asks for pools; ``auto`` allows every type, a list only its types."""
    asked = [m.fallback_instance_types for m in models if m.fallback_instance_types is not None]
    if not asked:
        return None
    types = set(priced)
    for request in asked:
        if request != AUTO_FALLBACK:
            types &= set(request)
    return types


def _fits_on(
    e: EndpointPlan,
    placements: Sequence[Placement],
    options: Mapping[str, Sequence[Option]],
    instance_type: str,
    price: float,
) -> tuple[EndpointPlan, list[Placement]] | str:
    """The endpoint and its models sized and priced on ``instance_type``, or why a model
    does not qualify there."""
    trial = []
    for p in placements:
        there = [o for o in options.get(p.name, ()) if o.instance_type == instance_type]
        if not there:
            return f"{p.name} has no {e.kind} option there"
        # the plan keeps rpm to three decimals: the same copy there serves the same
        option = next((o for o in there if round(o.perf.rpm, 3) >= p.rpm_per_copy), None)
        if option is None:
            return (
                f"{p.name} serves {there[0].perf.rpm:,.1f} rpm per copy there, under its "
                f"planned {p.rpm_per_copy:,.1f}"
            )
        trial.append(
            dataclasses.replace(
                p,
                accelerators=option.shape.accelerators,
                memory_mib=option.shape.memory_mib,
                cpu_cores=option.shape.cpu_cores,
                rpm_per_copy=round(option.perf.rpm, 3),
                concurrency=option.perf.concurrency,
                max_copies=max(p.min_copies, option.max_copies),
            )
        )
    sized = dataclasses.replace(e, instance_type=instance_type, models=list(e.models), pools=[])
    SIZERS[e.kind](sized, trial, instance_spec(instance_type))
    price_endpoint(sized, trial, price)
    return sized, trial


def _pool(
    sized: EndpointPlan, trial: Sequence[Placement], price: float, priority: int, reason: str
) -> PoolPlan:
    return PoolPlan(
        instance_type=sized.instance_type,
        priority=priority,
        min_instances=sized.min_instances,
        max_instances=sized.max_instances,
        hourly=round(price, 4),
        expected_hourly=sized.expected_hourly,
        reason=reason,
        models={
            p.name: PoolShape(
                accelerators=p.accelerators,
                memory_mib=p.memory_mib,
                cpu_cores=p.cpu_cores,
                rpm_per_copy=p.rpm_per_copy,
                concurrency=p.concurrency,
                min_copies=p.min_copies,
                max_copies=p.max_copies,
            )
            for p in trial
        },
    )


def endpoint_pools(
    e: EndpointPlan,
    placements: Sequence[Placement],
    options: Mapping[str, Sequence[Option]],
    candidates: Iterable[str],
    prices: Mapping[str, float],
    kept: Sequence[str] = (),
) -> list[PoolPlan]:
    """The fallback pools of ``e`` among ``candidates`` (module docstring); ``kept``: the
    previous plan's pool types, kept in their order while every one qualifies."""
    qualified: dict[str, tuple[EndpointPlan, list[Placement]]] = {}
    for instance_type in sorted(set(candidates) - {e.instance_type}):
        found = _fits_on(e, placements, options, instance_type, prices[instance_type])
        if not isinstance(found, str):
            qualified[instance_type] = found
    ranked = sorted(qualified, key=lambda t: (qualified[t][0].expected_hourly, t))
    room = most_pools() - 1
    chosen = list(kept) if kept and all(t in qualified for t in kept) else ranked[:room]
    own = e.expected_hourly * HOURS_PER_MONTH
    if not KINDS[e.kind].packs_devices:
        fits = "the model fits a whole instance"
    elif len(placements) == 1:
        fits = "the model fits"
    else:
        fits = f"all {len(placements)} models fit"
    pools = []
    for priority, instance_type in enumerate(chosen, start=2):
        sized, trial = qualified[instance_type]
        rank = ranked.index(instance_type) + 1
        monthly = sized.expected_hourly * HOURS_PER_MONTH
        why = (
            f"{fits} at no less than the planned rpm per copy; ${monthly:,.0f} a month were "
            f"the endpoint to run there (on {e.instance_type}: ${own:,.0f}), the "
            f"{_ordinal(rank)} cheapest of {len(ranked)} such types"
        )
        if kept and chosen == list(kept):
            why += "; kept from the plan file"
        pools.append(_pool(sized, trial, prices[instance_type], priority, why))
    return pools


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def plan_pools(
    plan: Plan,
    models: Mapping[str, ModelEntry],
    options: Mapping[str, Mapping[str, Sequence[Option]]],
    previous: Plan | None = None,
) -> None:
    """Give every endpoint of ``plan`` whose models ask for them its fallback pools;
    ``options``: per model, its options by kind (cheapest first); ``previous``: the plan
    file, whose pool types are kept while they qualify."""
    prices = hourly_prices(plan.region)
    for e in plan.endpoints.values():
        e.pools = []
        if not KINDS[e.kind].instance_pools:
            continue
        candidates = candidate_types((models[m] for m in e.models), prices)
        if not candidates:
            continue
        old = previous.endpoints.get(e.name) if previous is not None else None
        kept = old.fallback_types if old is not None and old.kind == e.kind else []
        e.pools = endpoint_pools(
            e,
            [plan.placements[m] for m in e.models],
            {m: options[m].get(e.kind, ()) for m in e.models},
            candidates,
            prices,
            kept,
        )
