"""What the catalog's ``group`` and ``isolation: dedicated`` choices cost.

A choice that forces a placement can cost more than the plan without it: a group of two
12-14B models on a whole p4de pays the instance, where each alone would take a share of a
shared endpoint. Per group and per dedicated model, the cost with the choice is its
models' monthly cost in the plan (:func:`fm_platform.fleet.placing.cost.model_cost`: own
cost, idle minimum and unfilled share); without it, each model's best option over every
kind and instance type its catalog entry allows once the choice is gone (its other
constraints stay: cold starts, request body, batch work, weights from the hub), at its own
cost (its copies' share of the instances, as if it packed with others; its planned option
is one of these). Each model's total is at least its own cost, which is at least that
best: a choice never costs less than nothing. The difference is shown per month under the
model table and in ``--explain``, and the run warns when it exceeds the catalog's
``choice_warning_monthly`` (USD a month; by default 500).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from dataclasses import dataclass

from fm_platform.fleet.deciding.fitness import allowed_without_choices
from fm_platform.fleet.deciding.kinds import min_copies
from fm_platform.fleet.placing.cost import model_cost, monthly, usd
from fm_platform.fleet.placing.planner import Planner

#: USD a month above which a choice's extra cost is warned about.
DEFAULT_WARNING_MONTHLY = 500.0


@dataclass(frozen=True)
class ChoiceCost:
    """A choice (``group <name>`` or ``isolation of <model>``), its models, their cost in
    whole USD a month with it, without it, and the best options without it
    (``kind on type`` per model)."""

    choice: str
    models: tuple[str, ...]
    monthly_with: int
    monthly_without: int
    without: tuple[str, ...]

    @property
    def extra_monthly(self) -> int:
        return self.monthly_with - self.monthly_without


def best_without(planner: Planner, name: str) -> tuple[float, str]:
    """USD per hour of ``name``'s best option were its catalog choice gone (module
    docstring), and that option as ``kind on type``."""
    known = planner.assessed[name]
    placement = planner.plan.placements[name]
    endpoint = planner.plan.endpoints[placement.endpoint]
    best = (placement.own_hourly, f"{endpoint.kind} on {endpoint.instance_type}")
    free = dataclasses.replace(
        planner.models[name], isolation="shared", isolation_reason=None, group=None
    )
    options = known.assessment.options
    kinds, to_zero = allowed_without_choices(free, planner.catalog, tuple(options))
    for kind in kinds:
        copies = min_copies(kind, to_zero)
        for option in options[kind]:
            hourly = option.expected_hourly(copies, known.needs.active_hours)
            if hourly < best[0]:
                best = (hourly, f"{kind} on {option.instance_type}")
    return best


def choice_costs(planner: Planner) -> list[ChoiceCost]:
    """Every group and every dedicated model of ``planner``'s catalog with its cost."""
    groups: dict[str, list[str]] = defaultdict(list)
    dedicated = []
    for entry in planner.catalog.models:
        if entry.name not in planner.plan.placements:
            continue
        if entry.group is not None:
            groups[entry.group].append(entry.name)
        elif entry.isolation == "dedicated":
            dedicated.append(entry.name)
    choices = [(f"group {g}", tuple(names)) for g, names in groups.items()]
    choices += [(f"isolation of {name}", (name,)) for name in dedicated]
    found = []
    for choice, names in choices:
        bests = [best_without(planner, n) for n in names]
        found.append(
            ChoiceCost(
                choice=choice,
                models=names,
                monthly_with=sum(model_cost(planner.plan.placements[n]).total for n in names),
                monthly_without=sum(monthly(hourly) for hourly, _ in bests),
                without=tuple(option for _, option in bests),
            )
        )
    return found


def choice_lines(costs: list[ChoiceCost]) -> list[str]:
    """One line per choice for the terminal."""
    return [
        f"  {c.choice}: {usd(c.monthly_with)} a month, {usd(c.monthly_without)} without it "
        f"({', '.join(dict.fromkeys(c.without))}): +{usd(c.extra_monthly)}"
        for c in costs
    ]


def choice_warnings(costs: list[ChoiceCost], threshold: float) -> list[str]:
    """The choices costing more than ``threshold`` USD a month over the plan without
    them."""
    return [
        f"{c.choice} costs {usd(c.extra_monthly)} a month more than the plan without it "
        f"({', '.join(c.models)}); above the catalog's choice_warning_monthly "
        f"({usd(threshold)})"
        for c in costs
        if c.extra_monthly > threshold
    ]
