"""Pictures of a plan, drawn with matplotlib (the ``charts`` extra; imported only here).

- One spider (radar) chart of the five fitness scores per endpoint, ``<endpoint>.png``: a
  shared endpoint shows its models' mean scores with their range shaded, a dedicated one
  its model's scores.
- ``overview.png``: every endpoint's monthly cost at minimum, expected and maximum scale,
  labelled with its models, most expensive first: what the plan costs and where.
"""

from __future__ import annotations

import math
from pathlib import Path

from fm_platform.fleet.models.catalog import AXES
from fm_platform.fleet.outputs.plan import Plan
from fm_platform.fleet.placing.cost import HOURS_PER_MONTH

LABELS = ("model size", "performance\n& latency", "workload\nisolation", "cost", "scalability")
INSTALL_HINT = "pip install 'fm-platform[charts]'"
OVERVIEW = "overview.png"


def charts_available() -> bool:
    """Whether matplotlib can be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _models_label(models: list[str], limit: int = 3) -> str:
    shown = ", ".join(models[:limit])
    return shown + (f" +{len(models) - limit} more" if len(models) > limit else "")


def draw_overview(plan: Plan, path: Path) -> Path:
    """The cost overview (module docstring) at ``path``."""
    plt = _pyplot()
    endpoints = sorted(plan.endpoints.values(), key=lambda e: e.expected_hourly)
    height = max(3.0, 0.5 * len(endpoints) + 1.5)
    fig, ax = plt.subplots(figsize=(12, height))
    ys = range(len(endpoints))
    low = [e.min_hourly * HOURS_PER_MONTH for e in endpoints]
    mid = [e.expected_hourly * HOURS_PER_MONTH for e in endpoints]
    high = [e.max_hourly * HOURS_PER_MONTH for e in endpoints]
    ax.barh(ys, high, color="#d9e6f2", label="maximum scale")
    ax.barh(ys, mid, color="#4a90c2", height=0.5, label="expected")
    ax.scatter(low, ys, color="#1b3a57", marker="|", s=200, zorder=3, label="minimum scale")
    labels = [
        f"{e.name} ({e.instance_type}, {len(e.models)} models)\n{_models_label(e.models, 2)}"
        for e in endpoints
    ]
    ax.set_yticks(list(ys), labels, fontsize=7)
    ax.set_xlabel(f"USD a month ({plan.region} on-demand prices, {HOURS_PER_MONTH} h)")
    total = sum(mid)
    ax.set_title(
        f"{plan.catalog}: {len(plan.placements)} models, USD {total:,.0f} a month expected\n"
        f"(USD {sum(low):,.0f} at minimum, USD {sum(high):,.0f} at maximum scale)",
        fontsize=9,
    )
    ax.legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def draw_charts(plan: Plan, directory: str | Path) -> list[Path]:
    """Write the overview and one spider chart per endpoint into ``directory``; returns
    the files."""
    plt = _pyplot()
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    angles = [2 * math.pi * i / len(AXES) for i in range(len(AXES))]
    closed = [*angles, angles[0]]
    written = [draw_overview(plan, directory / OVERVIEW)]
    for endpoint in plan.endpoints.values():
        scores = [
            [plan.placements[name].scores.get(axis, 0.0) for axis in AXES]
            for name in endpoint.models
        ]
        mean = [sum(s[i] for s in scores) / len(scores) for i in range(len(AXES))]
        fig, ax = plt.subplots(figsize=(4.2, 4.2), subplot_kw={"polar": True})
        if len(scores) > 1:
            low = [min(s[i] for s in scores) for i in range(len(AXES))]
            high = [max(s[i] for s in scores) for i in range(len(AXES))]
            ax.fill_between(closed, [*low, low[0]], [*high, high[0]], alpha=0.15, color="C0")
        ax.plot(closed, [*mean, mean[0]], color="C0", linewidth=2)
        ax.fill(closed, [*mean, mean[0]], alpha=0.25, color="C0")
        ax.set_xticks(angles, LABELS, fontsize=8)
        ax.set_ylim(0, 1)
        ax.set_yticks([0.25, 0.5, 0.75, 1.0], ["", "0.5", "", "1"], fontsize=7)
        title = endpoint.models[0] if len(scores) == 1 else f"{len(scores)} models"
        ax.set_title(f"{endpoint.name}\n{endpoint.kind}, {title}", fontsize=9, pad=18)
        path = directory / f"{endpoint.name}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
    return written
