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
averages. The program solved has the same optimum with fewer variables: models with
identical options are one variable per option, weighted by their number; a device-packing
type's instances, bound by nothing but its devices, are priced per device into each
option; and per model only the cheapest of the options without shared rows is kept
(:func:`_class_columns`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from fm_platform.fleet.kinds import KINDS, min_copies
from fm_platform.fleet.planner import Assessed, Planner, without_cycle_collection

INSTALL_HINT = "pip install 'fm-platform[bound]'"
#: What the relaxation gives up, as the report prints it.
RELAXES = (
    "whole instances and copies, packing, one kind and type per model; "
    "over every kind and type each model's catalog entry allows"
)


@dataclass
class _Program:
    """The linear program under construction: column costs and rows (lower, upper,
    ``{column: coefficient}``)."""

    costs: list[float] = field(default_factory=list)
    rows: list[tuple[float, float, dict[int, float]]] = field(default_factory=list)
    memory: dict[str, dict[int, float]] = field(default_factory=lambda: defaultdict(dict))
    traffic: dict[str, dict[int, float]] = field(default_factory=lambda: defaultdict(dict))
    prices: dict[str, float] = field(default_factory=dict)

    def column(self, cost: float) -> int:
        self.costs.append(cost)
        return len(self.costs) - 1


def allowed_kinds(known: Assessed) -> tuple[str, ...]:
    """The kinds the model's catalog entry allows and that have options."""
    decision = known.decision
    assert decision is not None
    return tuple(
        c.kind
        for c in decision.candidates
        if c.option is not None and c.why_not in (None, "lower utility")
    )


def _class_columns(program: _Program, known: Assessed, to_zero: bool, a: float) -> dict[int, float]:
    """The columns of one class of alike models (module docstring), each option's
    contribution at the class's traffic. A device-packing type's instances hold nothing
    else, so the optimum buys them for exactly the devices its columns use: each such
    option costs the type's price per device times its average devices, its expected
    cost (:meth:`~fm_platform.fleet.options.Option.expected_hourly`), as an option of one
    model per endpoint costs its own. Of all those, the class keeps only the cheapest
    column (it has a cost and no row beside the class's own: a solution using another
    moves that share to it without raising the cost); every multi-model option keeps its
    column (its type's rows couple it to the other models there)."""
    columns: dict[int, float] = {}
    alone: list[float] = []
    options = known.assessment.options
    for kind_name in allowed_kinds(known):
        minimum = min_copies(kind_name, to_zero)
        if not KINDS[kind_name].pools_memory:
            alone.append(options.lowest_hourly(kind_name, minimum))
            continue
        for o, _, load in options.at_traffic(kind_name):
            t = o.instance_type
            program.prices[t] = o.price
            column = program.column(0.0)
            columns[column] = 1.0
            program.memory[t][column] = o.copy_gib / o.usable_gib
            program.traffic[t][column] = a * load
    if alone:
        columns[program.column(min(alone))] = 1.0
    return columns


def _model_rows(program: _Program, planner: Planner) -> None:
    """One convexity row per class of alike models, over all their allowed options.
    Models with the same priced options (:class:`~fm_platform.fleet.options.PricedOptions`,
    shared by models alike at the same traffic and hours), the same allowed kinds and scale
    to zero are one class, its row the number of them: any solution of one row per model
    sums to one of the class, and the class's splits evenly back, at the same cost."""
    classes: dict[tuple, int] = defaultdict(int)
    members: dict[tuple, Assessed] = {}
    for name in planner.plan.placements:
        known = planner.assessed[name]
        assert known.decision is not None
        key = (id(known.assessment.options), allowed_kinds(known), known.decision.to_zero)
        classes[key] += 1
        members[key] = known
    for key, count in classes.items():
        known = members[key]
        a = known.needs.active_hours / 24
        program.rows.append((count, count, _class_columns(program, known, key[2], a)))


def _instance_rows(program: _Program, infinity: float) -> None:
    """Per multi-model type: instances at least the memory and traffic its columns use."""
    pooled: dict[str, int] = {}
    for table in (program.memory, program.traffic):
        for t, entries in table.items():
            if t not in pooled:
                pooled[t] = program.column(program.prices[t])
            program.rows.append(
                (0.0, infinity, {pooled[t]: 1.0, **{c: -v for c, v in entries.items()}})
            )


def _solve(program: _Program, highspy, np) -> float:
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    n = len(program.costs)
    empty = np.array([], dtype=np.int32)
    upper = np.full(n, highspy.kHighsInf)
    h.addCols(n, np.array(program.costs), np.zeros(n), upper, 0, empty, empty, np.array([]))
    starts: list[int] = []
    indices: list[int] = []
    values: list[float] = []
    for _, _, entries in program.rows:
        starts.append(len(indices))
        indices.extend(entries)
        values.extend(entries.values())
    h.addRows(
        len(program.rows),
        np.array([r[0] for r in program.rows], dtype=np.float64),
        np.array([r[1] for r in program.rows], dtype=np.float64),
        len(indices),
        np.array(starts, dtype=np.int32),
        np.array(indices, dtype=np.int32),
        np.array(values, dtype=np.float64),
    )
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(f"HiGHS: {h.modelStatusToString(h.getModelStatus())}")
    return float(h.getInfo().objective_function_value)


def lower_bound(planner: Planner) -> float:
    """The relaxation's optimum in USD per hour for a planner that has run. Raises
    ``ImportError`` (naming the extra to install) when highspy is missing."""
    try:
        import highspy
        import numpy as np
    except ImportError as error:
        raise ImportError(f"the cost bound needs HiGHS: {INSTALL_HINT}") from error

    program = _Program()
    with without_cycle_collection():
        _model_rows(program, planner)
        _instance_rows(program, highspy.kHighsInf)
        return _solve(program, highspy, np)
