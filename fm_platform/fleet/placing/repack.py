"""Repacking: moves that lower a kept plan's expected cost, each worth a threshold.

A fresh plan of the catalog shows where each model would go today. Candidate moves: every
model whose fresh home (kind and instance type) differs from its current one, alone and
together with the others going to the same home; and every Inference Components endpoint
whose models could join the other endpoints of their type (consolidation). Each candidate
is applied to the current plan (the moved models placed anew, everything else kept) and
priced; the candidate saving the most per month is taken if its saving reaches
``min_saving`` (ties: fewest moves), and the search repeats on the result until no
candidate does. The result moves only the models of the taken candidates.
"""

from __future__ import annotations

from dataclasses import dataclass

from fm_platform.fleet.deciding.kinds import KINDS
from fm_platform.fleet.deciding.options import Option
from fm_platform.fleet.models.catalog import Catalog
from fm_platform.fleet.outputs.plan import Plan, plan_from_json, record_moves
from fm_platform.fleet.placing.cost import HOURS_PER_MONTH, plan_cost
from fm_platform.fleet.placing.planner import Limits, Planner


@dataclass(frozen=True)
class Move:
    """One model's move and the saving per month of the step it belongs to."""

    model: str
    before: str
    after: str
    step_saving: float


def _monthly(plan: Plan) -> float:
    return plan_cost(plan).expected_hourly * HOURS_PER_MONTH


def _apply(catalog: Catalog, current: Plan, forced: dict[str, Option], limits: Limits) -> Plan:
    state = plan_from_json(current.to_json())
    for name in forced:
        p = state.placements.pop(name)
        state.endpoints[p.endpoint].models.remove(name)
    result = Planner(catalog, state, region=current.region, limits=limits, forced=forced).run()
    record_moves(current, result)  # the forced models left ``state``, not ``current``
    return result


def _home(plan: Plan, name: str) -> tuple[str, str]:
    e = plan.endpoints[plan.placements[name].endpoint]
    return e.kind, e.instance_type


def repack(
    catalog: Catalog, current: Plan, min_saving: float, limits: Limits | None = None
) -> tuple[Plan, list[Move]]:
    """The repacked plan and its moves (module docstring); ``min_saving``: USD a month."""
    limits = limits or Limits()
    fresh_planner = Planner(catalog, region=current.region, limits=limits)
    fresh = fresh_planner.run()
    moves: list[Move] = []
    for _ in range(50):
        base = _monthly(current)
        candidates = _fresh_moves(fresh_planner, fresh, current)
        candidates.extend(_consolidations(catalog, current, limits))
        best = _best(catalog, current, base, candidates, min_saving, limits)
        if best is None:
            break
        saving, result, forced = best
        moves.extend(
            Move(n, current.placements[n].endpoint, result.placements[n].endpoint, saving)
            for n in forced
            if current.placements[n].endpoint != result.placements[n].endpoint
        )
        current = result
    return current, moves


def _fresh_moves(fresh_planner: Planner, fresh: Plan, current: Plan) -> list[dict[str, Option]]:
    """Every model whose home in the ``fresh`` plan differs from its ``current`` one,
    alone, then together with the others going to the same home (when there are)."""
    candidates: list[dict[str, Option]] = []
    by_home: dict[tuple[str, str], dict[str, Option]] = {}
    for name in current.placements:
        if _home(current, name) == _home(fresh, name):
            continue
        decision = fresh_planner.assessed[name].decision
        assert decision is not None
        kind, instance_type = _home(fresh, name)
        option = next(
            o
            for o in fresh_planner.assessed[name].assessment.options[kind]
            if o.instance_type == instance_type
        )
        candidates.append({name: option})
        by_home.setdefault((kind, instance_type), {})[name] = option
    candidates.extend(group for group in by_home.values() if len(group) > 1)
    return candidates


def _consolidations(catalog: Catalog, current: Plan, limits: Limits) -> list[dict[str, Option]]:
    """Every Inference Components endpoint of ``current`` whose models could join the other
    endpoints of their group: its models, at its type."""
    planner = Planner(catalog, current, region=current.region, limits=limits)
    planner.run()
    candidates = []
    for e in current.endpoints.values():
        same = [o for o in current.endpoints.values() if o.group == e.group and o is not e]
        if not KINDS[e.kind].packs_devices or not same:
            continue
        candidates.append(
            {
                name: next(
                    o
                    for o in planner.assessed[name].assessment.options[e.kind]
                    if o.instance_type == e.instance_type
                )
                for name in e.models
            }
        )
    return candidates


def _best(
    catalog: Catalog,
    current: Plan,
    base: float,
    candidates: list[dict[str, Option]],
    min_saving: float,
    limits: Limits,
) -> tuple[float, Plan, dict[str, Option]] | None:
    """The candidate saving the most a month over ``current`` (which costs ``base``; ties:
    fewest moves) if it saves at least ``min_saving``: its saving, result and moved models;
    None otherwise."""
    best: tuple[float, int, Plan, dict[str, Option]] | None = None
    for forced in candidates:
        result = _apply(catalog, current, forced, limits)
        saving = base - _monthly(result)
        key = (-saving, len(forced))
        if saving >= max(min_saving, 0.01) and (best is None or key < best[:2]):
            best = (-saving, len(forced), result, forced)
    if best is None:
        return None
    return -best[0], best[2], best[3]
