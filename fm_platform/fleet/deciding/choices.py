"""What the catalog's ``group`` and ``isolation: dedicated`` choices cost.

A choice that forces a placement can cost more than the plan without it: a group of two
12-14B models on a whole p4de pays the instance, where each alone would take a share of a
shared endpoint. Per group and per dedicated model, the cost with the choice is its
endpoints' expected cost (the models' shares of them); without it, each model's cheapest
Inference Components option at its share of an instance (its copies at expected scale),
the cost it would have packed with others. The difference is shown per month under the
model table and in ``--explain``, and the run warns when it exceeds the catalog's
``choice_warning_monthly`` (USD a month; by default 500).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from fm_platform.fleet.deciding.kinds import KINDS
from fm_platform.fleet.placing.cost import HOURS_PER_MONTH
from fm_platform.fleet.placing.planner import Planner

#: USD a month above which a choice's extra cost is warned about.
DEFAULT_WARNING_MONTHLY = 500.0


@dataclass(frozen=True)
class ChoiceCost:
    """A choice (``group <name>`` or ``isolation of <model>``), its models, and their
    expected cost per month with and without it (None: no shared option exists)."""

    choice: str
    models: tuple[str, ...]
    monthly_with: float
    monthly_without: float | None

    @property
    def extra_monthly(self) -> float | None:
        if self.monthly_without is None:
            return None
        return self.monthly_with - self.monthly_without


def _shared_hourly(planner: Planner, name: str) -> float | None:
    known = planner.assessed.get(name)
    # the cost of sharing: the cheapest option on a kind that packs copies onto devices
    options = [
        option
        for kind, kind_options in (known.assessment.options.items() if known else ())
        if KINDS[kind].packs_devices
        for option in kind_options
    ]
    if not options:
        return None
    entry = planner.models[name]
    placement = planner.plan.placements[name]
    low = min(1, placement.min_copies)
    return min(o.expected_hourly(low, entry.active_hours) for o in options)


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
        paid = sum(planner.plan.placements[n].expected_hourly for n in names)
        shares = [_shared_hourly(planner, n) for n in names]
        without = None if None in shares else sum(s for s in shares if s is not None)
        found.append(
            ChoiceCost(
                choice=choice,
                models=names,
                monthly_with=paid * HOURS_PER_MONTH,
                monthly_without=None if without is None else without * HOURS_PER_MONTH,
            )
        )
    return found


def choice_lines(costs: list[ChoiceCost]) -> list[str]:
    """One line per choice for the terminal."""
    lines = []
    for c in costs:
        if c.extra_monthly is None:
            lines.append(f"  {c.choice}: ${c.monthly_with:,.0f} a month (no shared option)")
            continue
        lines.append(
            f"  {c.choice}: ${c.monthly_with:,.0f} a month, ${c.monthly_without:,.0f} "
            f"without it: {'+' if c.extra_monthly >= 0 else '-'}${abs(c.extra_monthly):,.0f}"
        )
    return lines


def choice_warnings(costs: list[ChoiceCost], threshold: float) -> list[str]:
    """The choices costing more than ``threshold`` USD a month over the plan without
    them."""
    return [
        f"{c.choice} costs ${c.extra_monthly:,.0f} a month more than the plan without it "
        f"({', '.join(c.models)}); above the catalog's choice_warning_monthly "
        f"(${threshold:,.0f})"
        for c in costs
        if c.extra_monthly is not None and c.extra_monthly > threshold
    ]
