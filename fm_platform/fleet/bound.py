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
expected instances per endpoint (:mod:`fm_platform.fleet.cost`) are at least these
averages. The program solved (:mod:`fm_platform.fleet.relaxation`) has the same optimum with fewer
variables: models with the same options, traffic and hours are one variable per option,
weighted by their number; a device-packing type's instances, bound by nothing but its
devices, are priced per device into each option; per model only the cheapest of the
options without shared rows is kept; and multi-model options that another type or option
serves at no higher cost are left out (:mod:`~fm_platform.fleet.relaxation`'s exact
reductions).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from fm_platform.fleet.kinds import KINDS, min_copies
from fm_platform.fleet.planner import Assessed, Planner, without_cycle_collection

if TYPE_CHECKING:
    from fm_platform.fleet.relaxation import Columns

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


def _alike(planner: Planner) -> list[list]:
    """The planned models by priced options (shared by models alike at the same traffic
    and hours), allowed kinds and scale to zero: ``[count, one of them]``."""
    found: dict[tuple, list] = {}
    for name in planner.plan.placements:
        known = planner.assessed[name]
        assert known.decision is not None
        key = (id(known.assessment.options), allowed_kinds(known), known.decision.to_zero)
        entry = found.get(key)
        if entry is None:
            found[key] = [1, known]
        else:
            entry[0] += 1
    return list(found.values())


def _idle_free(kind: str, minimum: int) -> bool:
    """Whether an option of ``kind`` at ``minimum`` copies costs only its peak copies while
    active, nothing while idle (:meth:`~fm_platform.fleet.options.Option.hourly_at`)."""
    k = KINDS[kind]
    whole = k.whole_instance and not k.queued  # keeps an instance while idle
    return minimum == 0 and not (k.serverless or k.pools_memory or whole)


def _add_class(columns: Columns, count: int, known: Assessed) -> None:
    """One class's columns. Of the kinds without shared rows only the cheapest option
    counts: an option of one model per endpoint costs its own expected cost
    (:meth:`~fm_platform.fleet.options.Option.expected_hourly`), and so does a
    device-packing one (its type's price per device times its average devices: the
    optimum buys such a type's instances for exactly the devices its columns use); a
    solution using another moves that share to the cheapest without raising the cost.
    Each multi-model option is a column of its own (its type's rows couple it to the
    other models there)."""
    decision = known.decision
    assert decision is not None
    options = known.assessment.options
    alone, pooled, idle_free = math.inf, [], []
    for kind in allowed_kinds(known):
        minimum = min_copies(kind, decision.to_zero)
        if KINDS[kind].pools_memory:
            pooled.append(options.unpriced(kind))
        elif _idle_free(kind, minimum):
            idle_free.append(options.unpriced(kind))
        else:  # the planner priced these already
            alone = min(alone, options.lowest_hourly(kind, minimum))
    hours, peak = known.needs.active_hours, known.needs.peak_rpm
    columns.add(count, alone, pooled, idle_free, hours / 24, peak)


def lower_bound(planner: Planner) -> float:
    """The relaxation's optimum in USD per hour for a planner that has run. Raises
    ``ImportError`` (naming the extra to install) when highspy is missing."""
    try:
        from fm_platform.fleet import relaxation  # numpy and highspy: the extra
    except ImportError as error:
        raise ImportError(f"the cost bound needs HiGHS: {INSTALL_HINT}") from error

    columns = relaxation.Columns()
    with without_cycle_collection():
        for count, known in _alike(planner):
            _add_class(columns, count, known)
        return relaxation.reduced_optimum(columns.program())
