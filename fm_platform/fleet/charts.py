"""Spider (radar) charts of the five fitness scores, drawn with matplotlib.

One PNG per shared endpoint (its models' mean scores, their range shaded) and one per
dedicated endpoint, named ``<endpoint>.png``. matplotlib is imported only here.
"""

from __future__ import annotations

import math
from pathlib import Path

from fm_platform.fleet.catalog import Catalog
from fm_platform.fleet.fitness import AXES, mean_scores, score
from fm_platform.fleet.plan import Plan

LABELS = ("model size", "performance\n& latency", "workload\nisolation", "cost", "scalability")


def draw_charts(plan: Plan, catalog: Catalog, directory: str | Path) -> list[Path]:
    """Write one chart per endpoint into ``directory``; returns the files."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    entries = {m.name: m for m in catalog.models}
    angles = [2 * math.pi * i / len(AXES) for i in range(len(AXES))]
    closed = [*angles, angles[0]]
    written = []
    for endpoint in plan.endpoints.values():
        scores = [score(entries[name]) for name in endpoint.models]
        mean = mean_scores(scores).values()
        fig, ax = plt.subplots(figsize=(4.2, 4.2), subplot_kw={"polar": True})
        if len(scores) > 1:
            low = [min(s.values()[i] for s in scores) for i in range(len(AXES))]
            high = [max(s.values()[i] for s in scores) for i in range(len(AXES))]
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
