"""What a re-plan changed since the plan file: models added, removed, moved (and why; an
Inference Components model's component named after its new endpoint), resized (copy
range, accelerators per copy, throughput), endpoints' instance counts and fallback pools,
and the expected monthly cost."""

from __future__ import annotations

from collections.abc import Mapping

from fm_platform.fleet.deciding.kinds import KINDS
from fm_platform.fleet.outputs.plan import EndpointPlan, Placement, Plan
from fm_platform.fleet.placing.cost import HOURS_PER_MONTH


def _copies(p) -> str:
    devices = {0: "on CPU", 1: "x 1 accelerator"}.get(
        p.accelerators, f"x {p.accelerators} accelerators"
    )
    return f"{p.min_copies}-{p.max_copies} copies {devices}"


def plan_changes(
    previous: Plan, plan: Plan, moves: dict[str, str], opened: Mapping[str, str] | None = None
) -> list[str]:
    """One line per change of ``plan`` against ``previous``; ``moves`` says why models
    left their endpoint, ``opened`` why an endpoint opened although endpoints of the plan
    file had room (:attr:`~fm_platform.fleet.placing.planner.Planner.opened`). Empty when
    nothing changed."""
    lines = _membership_lines(previous, plan)
    for name, p in plan.placements.items():
        line = _placement_line(previous, plan, name, p, moves)
        if line is not None:
            lines.append(line)
    for name, e in plan.endpoints.items():
        old_e = previous.endpoints.get(name)
        if old_e is not None:
            lines.extend(_endpoint_lines(name, old_e, e))
    lines.extend(_opened_and_closed(previous, plan))
    for name, why in (opened or {}).items():
        first = plan.endpoints[name].models[0]
        lines.append(f"endpoint {name} opened for {first} although kept endpoints had room: {why}")
    lines.extend(_cost_lines(previous, plan, changed=bool(lines)))
    return lines


def _membership_lines(previous: Plan, plan: Plan) -> list[str]:
    """The models added to and removed from the plan."""
    lines = []
    added = [n for n in plan.placements if n not in previous.placements]
    removed = [n for n in previous.placements if n not in plan.placements]
    if added:
        lines.append(f"added {len(added)}: " + ", ".join(added))
    if removed:
        lines.append(f"removed {len(removed)}: " + ", ".join(removed))
    return lines


def _placement_line(
    previous: Plan, plan: Plan, name: str, p: Placement, moves: dict[str, str]
) -> str | None:
    """How model ``name`` (placed at ``p``) moved or was resized; None when it kept its
    endpoint and shape, or is new."""
    old = previous.placements.get(name)
    if old is None:
        return None
    old_type = previous.endpoints[old.endpoint].instance_type
    new_type = plan.endpoints[p.endpoint].instance_type
    if old.endpoint != p.endpoint or old_type != new_type or name in moves:
        why = moves.get(name, "")
        renamed = p.component_suffix and KINDS[plan.endpoints[p.endpoint].kind].packs_devices
        return (
            f"moved {name}: {old.endpoint} ({old_type}) -> {p.endpoint} ({new_type})"
            + (f" ({why})" if why else "")
            + (f"; its component's name ends in -{p.component_suffix}" if renamed else "")
        )
    if (old.min_copies, old.max_copies, old.accelerators) != (
        p.min_copies,
        p.max_copies,
        p.accelerators,
    ):
        return f"resized {name}: {_copies(old)} -> {_copies(p)}"
    return None


def _endpoint_lines(name: str, old_e: EndpointPlan, e: EndpointPlan) -> list[str]:
    """How endpoint ``name``'s stack, instance counts and fallback pools changed."""
    lines = []
    if old_e.stack != e.stack:
        lines.append(f"endpoint {name}: moved from stack {old_e.stack} to {e.stack}")
    if (old_e.min_instances, old_e.max_instances) != (e.min_instances, e.max_instances):
        lines.append(
            f"endpoint {name}: instances {old_e.min_instances}-{old_e.max_instances} -> "
            f"{e.min_instances}-{e.max_instances}"
        )
    if old_e.fallback_types != e.fallback_types:
        # Components or a scaled variant: the pools are part of the replacement key.
        replaced = KINDS[e.kind].packs_devices or e.max_instances > 1
        replaces = " (replaces the endpoint: docs/day2-changes.md)" if replaced else ""
        lines.append(
            f"endpoint {name}: fallback pools {', '.join(old_e.fallback_types) or 'none'} "
            f"-> {', '.join(e.fallback_types) or 'none'}{replaces}"
        )
    return lines


def _opened_and_closed(previous: Plan, plan: Plan) -> list[str]:
    """The endpoints the re-plan opens and those it removes, each with its kind, instances
    and stack."""
    added = [e for n, e in plan.endpoints.items() if n not in previous.endpoints]
    gone = [e for n, e in previous.endpoints.items() if n not in plan.endpoints]
    lines = []
    if added:
        lines.append("endpoints added: " + ", ".join(map(_endpoint_summary, added)))
    if gone:
        lines.append("endpoints removed: " + ", ".join(map(_endpoint_summary, gone)))
    return lines


def _endpoint_summary(e: EndpointPlan) -> str:
    """``ic-g5-001 (inference-components, 1-4 x ml.g5.12xlarge, stack fleet-01)``."""
    instances = f"{e.min_instances}-{e.max_instances} x {e.instance_type}"
    return f"{e.name} ({e.kind}, {instances}, stack {e.stack})"


def _cost_lines(previous: Plan, plan: Plan, changed: bool) -> list[str]:
    """The expected monthly cost before and after, when anything ``changed`` or the cost
    did."""
    before = sum(e.expected_hourly for e in previous.endpoints.values()) * HOURS_PER_MONTH
    after = sum(e.expected_hourly for e in plan.endpoints.values()) * HOURS_PER_MONTH
    if not changed and round(before) == round(after):
        return []
    if before:
        return [f"expected cost: ${before:,.0f} -> ${after:,.0f} a month ({after - before:+,.0f})"]
    return [f"expected cost: ${after:,.0f} a month (the plan file has no cost)"]
