"""What a plan costs: per endpoint and per model, at minimum, expected and maximum scale.

Hourly cost = instances x the on-demand price of their type in the plan's region. At
minimum scale every endpoint runs its minimum instances (an Inference Components endpoint
whose models all scale to zero runs none); at maximum its maximum. Expected: each model is
at its peak copies during its active hours and at its minimum copies otherwise, so an
endpoint is expected to run

    E = min + w x (max - min),  w = sum(a_m x D_m) / sum(D_m)

instances, where a_m = active_hours / 24 and D_m is what model m adds between minimum and
maximum scale: (max - min copies) x accelerators per copy on Inference Components, the
instances its peak traffic keeps busy on a multi-model endpoint (one model: w = a; an
asynchronous endpoint runs no instance at minimum, so its expected cost is a x its
instances at peak). The
endpoint's expected cost is split among its models: the minimum by their minimum copies'
accelerators (multi-model: memory), the rest by a_m x D_m. A month is 730 hours (the AWS
pricing calculator's). The same E is what :mod:`fm_platform.fleet.outputs.bound` bounds.

A serverless endpoint has no instances and costs nothing while idle: its model's expected
cost is a x its peak requests per hour x its ``cost_per_request``, its minimum 0, its
maximum every concurrent invocation busy (``MaxConcurrency`` x one invocation's requests
per hour x the cost per request); the plan's instance counts leave it out.
"""

from __future__ import annotations

from dataclasses import dataclass

from fm_platform.fleet.deciding.kinds import KINDS
from fm_platform.fleet.outputs.plan import EndpointPlan, Placement, Plan
from fm_platform.fleet.placing.endpoints import load
from fm_platform.hardware.prices import hourly_prices

HOURS_PER_MONTH = 730


@dataclass(frozen=True)
class Cost:
    """Instance counts and USD per hour at minimum, expected and maximum scale."""

    min_instances: int
    max_instances: int
    expected_instances: float
    min_hourly: float
    expected_hourly: float
    max_hourly: float

    @property
    def expected_monthly(self) -> float:
        return self.expected_hourly * HOURS_PER_MONTH


def _increments(e: EndpointPlan, ps: list[Placement]) -> tuple[list[float], list[float]]:
    """Per model: what it adds between minimum and maximum scale, and its minimum share."""
    kind = KINDS[e.kind]
    if kind.packs_devices:
        return (
            [(p.max_copies - p.min_copies) * p.accelerators for p in ps],
            [float(p.min_copies * p.accelerators) for p in ps],
        )
    if kind.pools_memory:
        return [load(p) for p in ps], [float(p.memory_mib) for p in ps]
    # one copy per instance (single-model, asynchronous)
    return [float(p.max_copies - p.min_copies) for p in ps], [float(p.min_copies) for p in ps]


def price_endpoint(e: EndpointPlan, ps: list[Placement], price: float) -> None:
    """Set the endpoint's and its models' hourly costs (module docstring)."""
    adds, bases = _increments(e, ps)
    total_add = sum(adds)
    weighted = sum(p.active_hours / 24 * d for p, d in zip(ps, adds, strict=True))
    w = weighted / total_add if total_add else 0.0
    expected = e.min_instances + w * (e.max_instances - e.min_instances)
    e.min_hourly = round(e.min_instances * price, 4)
    e.max_hourly = round(e.max_instances * price, 4)
    e.expected_hourly = round(expected * price, 4)
    base_total = sum(bases)
    extra = (expected - e.min_instances) * price
    for p, d, b in zip(ps, adds, bases, strict=True):
        share = e.min_hourly * (b / base_total if base_total else 1 / len(ps))
        add = extra * (p.active_hours / 24 * d / weighted) if weighted else 0.0
        p.expected_hourly = round(share + add, 4)


def price_serverless(e: EndpointPlan, ps: list[Placement]) -> None:
    """Set a serverless endpoint's and its model's hourly costs (module docstring)."""
    (p,) = ps
    per_request = p.cost_per_request or 0.0
    p.expected_hourly = round(p.active_hours / 24 * p.peak_rpm * 60 * per_request, 4)
    e.min_hourly = 0.0
    e.expected_hourly = p.expected_hourly
    e.max_hourly = round(e.max_instances * p.rpm_per_copy * 60 * per_request, 4)


def price_plan(plan: Plan) -> None:
    """Price every endpoint and model of ``plan`` in its region."""
    prices = hourly_prices(plan.region)
    for e in plan.endpoints.values():
        ps = [plan.placements[m] for m in e.models]
        if KINDS[e.kind].serverless:
            price_serverless(e, ps)
        else:
            price_endpoint(e, ps, prices[e.instance_type])


def plan_cost(plan: Plan) -> Cost:
    """The plan's instances (serverless endpoints have none) and hourly cost (endpoints
    priced by :func:`price_plan`)."""
    prices = hourly_prices(plan.region)
    endpoints = plan.endpoints.values()
    hosted = [e for e in endpoints if not KINDS[e.kind].serverless]
    return Cost(
        sum(e.min_instances for e in hosted),
        sum(e.max_instances for e in hosted),
        sum(e.expected_hourly / prices[e.instance_type] for e in hosted),
        sum(e.min_hourly for e in endpoints),
        sum(e.expected_hourly for e in endpoints),
        sum(e.max_hourly for e in endpoints),
    )
