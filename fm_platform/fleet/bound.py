"""An independent lower bound on a plan's expected cost: a linear-programming relaxation
solved with HiGHS (``highspy``, the ``bound`` extra: ``pip install 'fm-platform[bound]'``).

For the same options (each model keeps the kind the plan gave it, and its minimum copies),
the relaxation may spread every model over all its feasible instance types and
tensor-parallel degrees (``x`` >= 0, one unit per model) and buy fractional instances
(``y`` >= 0) per type:

- Inference Components: instances of a type >= the accelerators its models use on
  average over a day, (min copies + a x (max copies - min copies)) x devices per copy,
  over the type's devices (a = active hours / 24);
- single-model: a model on a type costs its price x (1 + a x (max copies - 1));
- asynchronous: a model on a type costs its price x a x max copies (no instance at
  minimum);
- multi-model: instances of a type >= the models' memory over the memory that holds
  models, and >= their peak traffic over one instance's capacity, times a.

Minimising the hourly price of all instances gives a cost no plan with these options can
undercut: the plan's expected instances per endpoint (:mod:`fm_platform.fleet.cost`) are at
least these averages. Models with identical options are one variable per option,
weighted by their number.
"""

from __future__ import annotations

from collections import defaultdict

from fm_platform.fleet.kinds import ASYNC, IC, MULTI, SINGLE
from fm_platform.fleet.options import Assessment
from fm_platform.fleet.planner import Planner
from fm_platform.hardware.instances import instance_spec

INSTALL_HINT = "pip install 'fm-platform[bound]'"


def lower_bound(planner: Planner) -> float:
    """The relaxation's optimum in USD per hour for a planner that has run. Raises
    ``ImportError`` (naming the extra to install) when highspy is missing."""
    try:
        import highspy
        import numpy as np
    except ImportError as error:
        raise ImportError(f"the cost bound needs HiGHS: {INSTALL_HINT}") from error

    plan = planner.plan
    classes: dict[tuple, int] = defaultdict(int)
    assessments: dict[int, Assessment] = {}
    for name, p in plan.placements.items():
        kind = plan.endpoints[p.endpoint].kind
        known = planner.assessed[name]
        classes[(id(known.assessment), kind, p.min_copies, p.active_hours)] += 1
        assessments[id(known.assessment)] = known.assessment

    costs: list[float] = []
    rows: list[tuple[float, float, dict[int, float]]] = []
    y_ic: dict[str, int] = {}
    y_mme: dict[str, int] = {}
    usage: dict[str, dict[int, float]] = defaultdict(dict)
    memory: dict[str, dict[int, float]] = defaultdict(dict)
    traffic: dict[str, dict[int, float]] = defaultdict(dict)
    for (aid, kind, min_copies, hours), count in classes.items():
        a = hours / 24
        members: dict[int, float] = {}
        for o in assessments[aid].options.get(kind, []):
            column = len(costs)
            members[column] = 1.0
            if kind == SINGLE:
                costs.append(o.price * (1 + a * (o.max_copies - 1)))
            elif kind == ASYNC:
                costs.append(o.price * a * o.max_copies)
            elif kind == IC:
                costs.append(0.0)
                average = min_copies + a * (o.max_copies - min_copies)
                usage[o.instance_type][column] = o.shape.accelerators * average
            elif kind == MULTI:
                costs.append(0.0)
                memory[o.instance_type][column] = o.copy_gib / o.usable_gib
                traffic[o.instance_type][column] = a * o.load
        rows.append((count, count, members))

    def instances(table: dict[str, int], t: str, price: float) -> int:
        if t not in table:
            table[t] = len(costs)
            costs.append(price)
        return table[t]

    prices = {
        o.instance_type: o.price
        for assessment in assessments.values()
        for options in assessment.options.values()
        for o in options
    }
    for t, entries in usage.items():
        y = instances(y_ic, t, prices[t])
        devices = instance_spec(t).accelerator_count
        rows.append(
            (0.0, highspy.kHighsInf, {y: float(devices), **{c: -v for c, v in entries.items()}})
        )
    for table in (memory, traffic):
        for t, entries in table.items():
            y = instances(y_mme, t, prices[t])
            rows.append((0.0, highspy.kHighsInf, {y: 1.0, **{c: -v for c, v in entries.items()}}))

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    n = len(costs)
    h.addCols(
        n,
        np.array(costs),
        np.zeros(n),
        np.full(n, highspy.kHighsInf),
        0,
        np.array([], dtype=np.int32),
        np.array([], dtype=np.int32),
        np.array([]),
    )
    lower = np.array([r[0] for r in rows], dtype=np.float64)
    upper = np.array([r[1] for r in rows], dtype=np.float64)
    starts: list[int] = []
    indices: list[int] = []
    values: list[float] = []
    for _, _, entries in rows:
        starts.append(len(indices))
        indices.extend(entries)
        values.extend(entries.values())
    h.addRows(
        len(rows),
        lower,
        upper,
        len(indices),
        np.array(starts, dtype=np.int32),
        np.array(indices, dtype=np.int32),
        np.array(values, dtype=np.float64),
    )
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(f"HiGHS: {h.modelStatusToString(h.getModelStatus())}")
    return float(h.getInfo().objective_function_value)
