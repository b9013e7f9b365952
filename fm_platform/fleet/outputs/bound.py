"""An independent lower bound on the expected cost of any plan the catalog allows: a
linear-programming relaxation solved with HiGHS (``highspy``, the ``bound`` extra:
``pip install 'fm-platform[bound]'``).

Every model may take every kind its catalog entry allows (those its decision did not
exclude: isolation, group, request body, cold starts, latency class) on every feasible
instance type and tensor-parallel degree, spread fractionally (``x`` >= 0, one unit per
model), and instances are bought fractionally per type (``y`` >= 0). What the relaxation
keeps: each option's copies at peak, the model's scale-to-zero choice and its minimum
copies per kind, its active hours. What it relaxes (:data:`RELAXES`): whole instances,
whole copies, packing copies onto instances, and one kind and type per model. Per kind:

- a kind that packs devices (Inference Components): instances of a type >= the
  accelerators its models use on average over a day, (min copies + a x (max copies -
  min copies)) x devices per copy, over the type's devices (a = active hours / 24);
- a kind that pools memory (multi-model): instances of a type >= the models' memory over
  the memory that holds models, and >= their peak traffic over one instance's capacity,
  times a;
- a kind of one model per endpoint (single-model, asynchronous): the option's own
  expected cost, price x (min + a x (max copies - min)), with min at least 1 unless the
  kind queues requests;
- a serverless kind: the option's own expected cost, its busy invocations at peak x a
  (no instances, nothing while idle).

Minimising the hourly price of all instances gives a cost no plan can undercut: a plan's
expected instances per endpoint (:mod:`fm_platform.fleet.placing.cost`) are at least these
averages. The program solved (:mod:`fm_platform.fleet.outputs.relaxation`) has the same optimum
with fewer variables: models with the same columns are one class, a variable per option
weighted by their number; a device-packing type's instances, bound by nothing but its
devices, are priced per device into each option; per class only the cheapest of the
options without shared rows is kept (:func:`_add_class`), and a class without
multi-model options is a constant; a multi-model type that another serves for every
class on it at no higher cost is left out.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import cache
from typing import TYPE_CHECKING

from fm_platform.fleet.deciding.kinds import KINDS, min_copies
from fm_platform.fleet.placing.planner import Assessed, Planner, without_cycle_collection

if TYPE_CHECKING:
    from fm_platform.fleet.outputs.relaxation import Columns, Program

INSTALL_HINT = "pip install 'fm-platform[bound]'"
#: What the relaxation gives up, as the report prints it.
RELAXES = (
    "whole instances and copies, packing, one kind and type per model; "
    "over every kind and type each model's catalog entry allows"
)


def allowed_kinds(known: Assessed) -> tuple[str, ...]:
    """The kinds the model's catalog entry allows and that have options."""
    decision = known.decision
    assert decision is not None
    return tuple(
        c.kind
        for c in decision.candidates
        if c.option is not None and c.why_not in (None, "lower utility")
    )


def _alike(planner: Planner) -> list[tuple[int, Assessed, tuple[str, ...]]]:
    """The assessed models by priced options (shared by models alike at the same traffic
    and hours), allowed kinds and scale to zero: their number, one of them and the kinds.
    Models of the same entry share one :class:`~fm_platform.fleet.placing.planner.Assessed`."""
    entries = list(planner.assessed.values())
    numbers = Counter(map(id, entries))
    same = {id(known): known for known in entries}
    found: dict[tuple, list] = {}
    for ident, known in same.items():
        count = numbers[ident]
        assert known.decision is not None
        kinds = allowed_kinds(known)
        key = (id(known.assessment.options), kinds, known.decision.to_zero)
        group = found.get(key)
        if group is None:
            found[key] = [count, known, kinds]
        else:
            group[0] += count
    return [(count, known, kinds) for count, known, kinds in found.values()]


@cache
def _roles(kinds: tuple[str, ...], to_zero: bool) -> tuple[tuple[str, int, str], ...]:
    """Per kind its minimum copies and its part in the program: ``pooled`` (multi-model:
    a column per option), ``idle_free`` (nothing while idle: priced at peak copies,
    :meth:`~fm_platform.fleet.deciding.options.Option.hourly_at`) or ``priced`` (the planner's
    cheapest at that minimum,
    :meth:`~fm_platform.fleet.deciding.options.PricedOptions.lowest_hourly`)."""
    roles = []
    for kind in kinds:
        k, minimum = KINDS[kind], min_copies(kind, to_zero)
        whole = k.whole_instance and not k.queued  # keeps an instance while idle
        if k.pools_memory:
            roles.append((kind, minimum, "pooled"))
        elif minimum == 0 and not (k.serverless or whole):
            roles.append((kind, minimum, "idle_free"))
        else:
            roles.append((kind, minimum, "priced"))
    return tuple(roles)


def _add_class(columns: Columns, count: int, known: Assessed, kinds: tuple[str, ...]) -> None:
    """One class's columns. Of the kinds without shared rows only the cheapest option
    counts: an option of one model per endpoint costs its own expected cost
    (:meth:`~fm_platform.fleet.deciding.options.Option.expected_hourly`), and so does a
    device-packing one (its type's price per device times its average devices: the
    optimum buys such a type's instances for exactly the devices its columns use); a
    solution using another moves that share to the cheapest without raising the cost.
    Each multi-model option is a column of its own (its type's rows couple it to the
    other models there)."""
    assert known.decision is not None
    options = known.assessment.options
    alone, pooled, idle_free = math.inf, [], []
    for kind, minimum, role in _roles(kinds, known.decision.to_zero):
        if role == "pooled":
            pooled.append(options.unpriced(kind))
        elif role == "idle_free":
            idle_free.append(options.unpriced(kind))
        else:
            alone = min(alone, options.lowest_hourly(kind, minimum))
    hours, peak = known.needs.active_hours, known.needs.peak_rpm
    columns.add(count, alone, pooled, idle_free, hours / 24, peak)


def program(planner: Planner) -> Program:
    """The relaxation of a planner that has run, as a linear program before its
    reductions. Raises ``ImportError`` (naming the extra to install) when highspy is
    missing."""
    try:
        from fm_platform.fleet.outputs import relaxation  # numpy and highspy: the extra
    except ImportError as error:
        raise ImportError(f"the cost bound needs HiGHS: {INSTALL_HINT}") from error
    columns = relaxation.Columns()
    for count, known, kinds in _alike(planner):
        _add_class(columns, count, known, kinds)
    return columns.program()


def lower_bound(planner: Planner) -> float:
    """The relaxation's optimum in USD per hour for a planner that has assessed its models
    (:meth:`~fm_platform.fleet.placing.planner.Planner.assess_all`; placing them changes nothing).
    Raises ``ImportError`` (naming the extra to install) when highspy is missing."""
    with without_cycle_collection():
        return program(planner).reduced_optimum()
