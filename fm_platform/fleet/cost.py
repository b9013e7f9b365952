"""What a plan costs per hour, against one dedicated endpoint per model.

Hourly cost = instances x on-demand price of their type (``fm_platform/hardware/
instance_prices.json``). At minimum scale every endpoint runs its minimum instances (an
Inference Components endpoint whose models all scale to zero runs none); at maximum scale
its maximum. The dedicated layout puts each model alone on the cheapest type one copy
fits, one instance at minimum and one per peak copy at maximum.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from fm_platform.fleet.catalog import Catalog
from fm_platform.fleet.fitness import max_copies
from fm_platform.fleet.plan import Plan
from fm_platform.fleet.planner import IC
from fm_platform.fleet.sizing import candidates, copy_memory_gib, copy_shape
from fm_platform.hardware.instances import instance_spec
from fm_platform.hardware.prices import hourly_prices


@dataclass(frozen=True)
class Cost:
    """Instance counts and USD per hour at minimum and maximum scale."""

    min_instances: int
    max_instances: int
    min_hourly: float
    max_hourly: float


def plan_cost(plan: Plan) -> Cost:
    """The plan's instances and hourly cost."""
    prices = hourly_prices()
    endpoints = plan.endpoints.values()
    return Cost(
        sum(e.min_instances for e in endpoints),
        sum(e.max_instances for e in endpoints),
        sum(e.min_instances * prices[e.instance_type] for e in endpoints),
        sum(e.max_instances * prices[e.instance_type] for e in endpoints),
    )


def dedicated_cost(catalog: Catalog) -> Cost:
    """One single-model endpoint per model on the cheapest type a copy fits."""
    prices = hourly_prices()
    low = high = 0.0
    peak = 0
    for model in catalog.models:
        gib = copy_memory_gib(model)
        spec = next(s for s in candidates(model) if copy_shape(gib, s) is not None)
        low += prices[spec.instance_type]
        high += prices[spec.instance_type] * max_copies(model)
        peak += max_copies(model)
    return Cost(len(catalog.models), peak, low, high)


def lower_bound(plan: Plan) -> int:
    """Fewest instances the minimum copies could need: per Inference Components instance
    type, accelerators demanded over accelerators per instance, rounded up; other
    endpoints count their minimum instances."""
    demand: dict[str, int] = defaultdict(int)
    other = 0
    for endpoint in plan.endpoints.values():
        if endpoint.kind != IC:
            other += endpoint.min_instances
            continue
        for name in endpoint.models:
            p = plan.placements[name]
            demand[endpoint.instance_type] += p.accelerators * p.min_copies
    return other + sum(
        math.ceil(acc / instance_spec(t).accelerator_count) for t, acc in demand.items()
    )
