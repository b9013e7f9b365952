"""Pictures of a plan, drawn with matplotlib (the ``charts`` extra; imported only here).

- One spider (radar) chart of the five fitness scores per endpoint, ``<endpoint>.png``: a
  shared endpoint shows its models' mean scores with their range shaded, a dedicated one
  its model's scores.
- ``overview.png``: every endpoint's monthly cost at minimum, expected and maximum scale,
  its expected bar split into its models' own cost, idle minimum and unfilled share, and
  labelled with its costliest models and their monthly cost (the figures of the model
  table, :func:`fm_platform.fleet.placing.cost.model_cost`), most expensive first: what
  the plan costs and where. :func:`overview_bars` computes what it draws.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from fm_platform.fleet.models.catalog import AXES
from fm_platform.fleet.outputs.plan import EndpointPlan, Plan
from fm_platform.fleet.placing.cost import (
    HOURS_PER_MONTH,
    ModelCost,
    model_cost,
    plan_cost,
    usd,
)

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


@dataclass(frozen=True)
class Bar:
    """One endpoint of the overview: its label, USD a month at minimum and maximum scale,
    and its models' costs (:func:`~fm_platform.fleet.placing.cost.model_cost`, costliest
    first), whose parts make its expected bar."""

    label: str
    minimum: float
    maximum: float
    models: tuple[tuple[str, ModelCost], ...]

    @property
    def parts(self) -> tuple[int, int, int]:
        """The expected bar's segments: own, idle minimum, unfilled share."""
        costs = [cost for _, cost in self.models]
        return (
            sum(c.own for c in costs),
            sum(c.idle_minimum for c in costs),
            sum(c.unfilled for c in costs),
        )


def _models_label(models: tuple[tuple[str, ModelCost], ...], limit: int = 2) -> str:
    shown = ", ".join(f"{name} {usd(cost.total)}" for name, cost in models[:limit])
    return shown + (f" +{len(models) - limit} more" if len(models) > limit else "")


def _bar(plan: Plan, e: EndpointPlan) -> Bar:
    costs = sorted(
        ((name, model_cost(plan.placements[name])) for name in e.models),
        key=lambda item: (-item[1].total, item[0]),
    )
    return Bar(
        label=f"{e.name} ({e.instance_type}, {len(e.models)} models)\n"
        f"{_models_label(tuple(costs))}",
        minimum=e.min_hourly * HOURS_PER_MONTH,
        maximum=e.max_hourly * HOURS_PER_MONTH,
        models=tuple(costs),
    )


def _plain(text: str) -> str:
    """``text`` for matplotlib, whose text reads a pair of ``$`` as mathematics."""
    return text.replace("$", r"\$")


def overview_bars(plan: Plan) -> list[Bar]:
    """What the overview draws, cheapest endpoint first (drawn at the bottom)."""
    endpoints = sorted(plan.endpoints.values(), key=lambda e: (e.expected_hourly, e.name))
    return [_bar(plan, e) for e in endpoints]


def draw_overview(plan: Plan, path: Path) -> Path:
    """The cost overview (module docstring) at ``path``."""
    plt = _pyplot()
    bars = overview_bars(plan)
    height = max(3.0, 0.5 * len(bars) + 1.5)
    fig, ax = plt.subplots(figsize=(12, height))
    ys = range(len(bars))
    ax.barh(ys, [b.maximum for b in bars], color="#d9e6f2", label="maximum scale")
    left = [0.0] * len(bars)
    segments = ("own", "#4a90c2"), ("idle minimum", "#e8a33d"), ("unfilled share", "#c9574b")
    for i, (name, color) in enumerate(segments):
        widths = [b.parts[i] for b in bars]
        ax.barh(ys, widths, left=left, color=color, height=0.5, label=f"expected: {name}")
        left = [x + w for x, w in zip(left, widths, strict=True)]
    low = [b.minimum for b in bars]
    ax.scatter(low, ys, color="#1b3a57", marker="|", s=200, zorder=3, label="minimum scale")
    ax.set_yticks(list(ys), [_plain(b.label) for b in bars], fontsize=7)
    ax.set_xlabel(f"USD a month ({plan.region} on-demand prices, {HOURS_PER_MONTH} h)")
    cost = plan_cost(plan)
    title = (
        f"{plan.catalog}: {len(plan.placements)} models, {usd(cost.expected_monthly)} a month "
        f"expected\n({usd(cost.min_hourly * HOURS_PER_MONTH)} at minimum, "
        f"{usd(cost.max_hourly * HOURS_PER_MONTH)} at maximum scale)"
    )
    ax.set_title(_plain(title), fontsize=9)
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
