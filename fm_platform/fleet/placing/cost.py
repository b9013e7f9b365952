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
instances at peak). A month is 730 hours (the AWS pricing calculator's). The same E is
what :mod:`fm_platform.fleet.outputs.bound` bounds.

A model's monthly cost (:class:`ModelCost`, the one figure the model table, the reasons,
``--explain``, the plan file and the charts print) is its endpoint's expected cost split
into three named parts:

- ``own``: what its option costs at its planned copies and active hours
  (:meth:`fm_platform.fleet.deciding.options.Option.expected_hourly`: its copies' share of
  the instances while they run), the figure its decision compared;
- ``idle_minimum``: its share of the instances the endpoint keeps at minimum scale that
  no minimum copy uses, for the share of the time the endpoint sits at its minimum
  (1 - w); none on an endpoint whose minimum is its maximum (it never scales in);
- ``unfilled``: its share of the rest of the endpoint's expected cost that no copy uses
  (instances rounded up at peak, a multi-model endpoint's memory beyond its models').

Both shares go by ``own``, so the models' totals add up to the endpoint's expected cost,
and no part is negative: on Inference Components, single-model and asynchronous
endpoints E x price >= the models' own costs (the instances at minimum and at peak hold
the copies then). A multi-model option's own cost counts the larger of its memory and its
traffic share while active, where the endpoint's instances hold both at once; when its
models' own costs come to more than the endpoint's expected cost (rarely, by a few
dollars), each model's total is its own cost. Each part is rounded to whole dollars a
month by the running sum, so the parts add up to the total.

A serverless endpoint has no instances and costs nothing while idle: its model's expected
cost is a x its peak requests per hour x its ``cost_per_request``, its minimum 0, its
maximum every concurrent invocation busy (``MaxConcurrency`` x one invocation's requests
per hour x the cost per request); the plan's instance counts leave it out. Its model's
cost is all ``own``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from fm_platform.fleet.deciding.kinds import KINDS
from fm_platform.fleet.deciding.options import MME_MEMORY_SHARE
from fm_platform.fleet.outputs.plan import EndpointPlan, Placement, Plan
from fm_platform.fleet.placing.endpoints import load
from fm_platform.hardware.instances import instance_spec
from fm_platform.hardware.prices import hourly_prices

HOURS_PER_MONTH = 730


def usd(monthly: float) -> str:
    """A figure in USD a month as every output prints it: ``$11,521``."""
    return f"${monthly:,.0f}"


def monthly(hourly: float) -> int:
    """USD per hour as whole dollars a month."""
    return round(hourly * HOURS_PER_MONTH)


class ModelCost(NamedTuple):
    """A model's expected cost in whole USD a month by part (module docstring)."""

    own: int
    idle_minimum: int
    unfilled: int

    @property
    def total(self) -> int:
        return self.own + self.idle_minimum + self.unfilled

    def record(self) -> dict[str, int]:
        """The plan file's ``monthly`` of a placement."""
        return {**self._asdict(), "total": self.total}

    def breakdown(self) -> str:
        """``own $11,521 + idle minimum $0 + unfilled share $6,912 = $18,433 a month``."""
        return (
            f"own {usd(self.own)} + idle minimum {usd(self.idle_minimum)} + unfilled share "
            f"{usd(self.unfilled)} = {usd(self.total)} a month"
        )


#: What a reason adds when the model's option is not the one its decision compared.
PLACED = "; as placed: own cost "


def placed_reason(reason: str, own_hourly: float, decided_hourly: float) -> str:
    """``reason`` (without what an earlier plan added by this function), and the model's own
    cost when its option's differs from the decided option's, which the reason gives."""
    base = reason.split(PLACED)[0]
    if monthly(own_hourly) == monthly(decided_hourly):
        return base
    return f"{base}{PLACED}{usd(monthly(own_hourly))} a month"


def model_cost(p: Placement) -> ModelCost:
    """The placement's monthly cost as :func:`price_plan` set it."""
    m = p.monthly
    return ModelCost(m.get("own", 0), m.get("idle_minimum", 0), m.get("unfilled", 0))


def _set_parts(p: Placement, own: float, idle: float, unfilled: float) -> None:
    """Set the placement's hourly total and its whole-dollar parts: each part rounded by
    the running sum, so the parts add up to the rounded total and none is negative."""
    p.expected_hourly = round(own + idle + unfilled, 4)
    first, second, third = (
        monthly(own),
        monthly(own + idle),
        monthly(own + idle + unfilled),
    )
    p.monthly = ModelCost(first, second - first, third - second).record()


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


def _idle_minimum(e: EndpointPlan, ps: list[Placement], w: float, price: float) -> float:
    """USD per hour of the instances ``e`` keeps at minimum scale that no minimum copy
    uses, for the share of the time it sits there (1 - ``w``); 0 when it never scales
    in."""
    if e.max_instances <= e.min_instances:
        return 0.0
    kind, spec = KINDS[e.kind], instance_spec(e.instance_type)
    if kind.pools_memory:
        used = sum(p.memory_mib for p in ps) / (spec.memory_mib * MME_MEMORY_SHARE)
    elif kind.packs_devices and spec.accelerator_count:
        used = sum(p.min_copies * p.accelerators for p in ps) / spec.accelerator_count
    else:  # a copy per instance (on CPU, a copy's option costs the whole instance)
        used = sum(p.min_copies for p in ps)
    return max(0.0, (1 - w) * (e.min_instances - used) * price)


def _split(e: EndpointPlan, ps: Sequence[Placement], idle: float) -> None:
    """Set each model's cost: its own, and shares by own cost of ``idle`` (USD per hour of
    idle minimum) and of the rest of the endpoint's expected cost that no copy uses."""
    owns = [p.own_hourly for p in ps]
    total_own = sum(owns)
    unused = max(0.0, e.expected_hourly - total_own)
    idle = min(idle, unused)
    for p, own in zip(ps, owns, strict=True):
        share = own / total_own if total_own else 1 / len(ps)
        _set_parts(p, own, idle * share, (unused - idle) * share)


def price_endpoint(e: EndpointPlan, ps: list[Placement], price: float) -> None:
    """Set the endpoint's and its models' hourly costs (module docstring)."""
    adds, _ = _increments(e, ps)
    total_add = sum(adds)
    weighted = sum(p.active_hours / 24 * d for p, d in zip(ps, adds, strict=True))
    w = weighted / total_add if total_add else 0.0
    expected = e.min_instances + w * (e.max_instances - e.min_instances)
    e.min_hourly = round(e.min_instances * price, 4)
    e.max_hourly = round(e.max_instances * price, 4)
    e.expected_hourly = round(expected * price, 4)
    _split(e, ps, _idle_minimum(e, ps, w, price))


def price_serverless(e: EndpointPlan, ps: list[Placement]) -> None:
    """Set a serverless endpoint's and its model's hourly costs (module docstring)."""
    (p,) = ps
    per_request = p.cost_per_request or 0.0
    _set_parts(p, p.own_hourly, 0.0, 0.0)
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
