"""The plan as a terminal table, one row per endpoint, and a cost summary."""

from __future__ import annotations

from collections.abc import Sequence

from fm_platform.fleet.catalog import Catalog
from fm_platform.fleet.cost import dedicated_cost, lower_bound, plan_cost
from fm_platform.fleet.plan import Plan
from fm_platform.hardware.prices import hourly_prices, price_region

HEADERS = ("stack", "endpoint", "kind", "instance type", "models", "inst min-max", "$/h min-max")


def _table(rows: Sequence[tuple[str, ...]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    )


def plan_table(plan: Plan, catalog: Catalog) -> str:
    """Endpoints by stack, then the cost at min and max scale against dedicated endpoints."""
    prices = hourly_prices()
    rows = [HEADERS]
    for e in sorted(plan.endpoints.values(), key=lambda e: e.stack):
        price = prices[e.instance_type]
        rows.append(
            (
                e.stack,
                e.name,
                e.kind,
                e.instance_type,
                str(len(e.models)),
                f"{e.min_instances}-{e.max_instances}",
                f"{e.min_instances * price:.2f}-{e.max_instances * price:.2f}",
            )
        )
    cost, dedicated = plan_cost(plan), dedicated_cost(catalog)
    ratio = cost.min_hourly / dedicated.min_hourly if dedicated.min_hourly else 0.0
    summary = [
        f"{len(catalog.models)} models on {len(plan.endpoints)} endpoints in "
        f"{len(plan.stacks)} stacks; instances at min scale {cost.min_instances} "
        f"(lower bound {lower_bound(plan)}), at max {cost.max_instances}",
        f"on-demand cost ({price_region()}): ${cost.min_hourly:,.2f}/h at min scale, "
        f"${cost.max_hourly:,.2f}/h at max; one dedicated endpoint per model: "
        f"${dedicated.min_hourly:,.2f}/h ({dedicated.min_instances} instances) to "
        f"${dedicated.max_hourly:,.2f}/h; ratio at min scale {ratio:.2f}",
    ]
    return _table(rows) + "\n\n" + "\n".join(summary)
