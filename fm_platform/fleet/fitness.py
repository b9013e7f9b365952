"""The hosting guidance's five fitness functions, each a normalised axis in [0, 1].

A score says how strongly that concern weighs for the model (1 = dominates):

1. ``model_size``: log10(copy memory in GiB) / log10(640), clipped to [0, 1]: 0 for a model
   under 1 GiB, about 0.5 for one A10G-sized (24 GiB) copy, 1 at eight 80 GiB devices.
2. ``latency``: from ``latency_p50_ms``: 1 - log10(p50 / 100) / 2 (1 at 100 ms, 0 at 10 s);
   without one, the class: strict 1, standard 0.5, relaxed 0.2. A cold-start-tolerant model
   scores 0.25 lower.
3. ``isolation``: 1 for ``isolation: dedicated``, 0.5 for a tenant's own model, else 0.
4. ``cost``: 1 - utilisation, utilisation = active_hours / 24 x min(1, peak_rpm /
   rpm_per_copy): how much of a dedicated copy would sit idle, so how much sharing and
   scaling to zero save.
5. ``scalability``: log2(max copies) / 5 (1 at 32 copies at peak), plus 0.2 when the model
   scales to zero (it needs per-model scaling), clipped to [0, 1].
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fm_platform.fleet.catalog import ModelEntry
from fm_platform.fleet.sizing import copy_memory_gib

AXES = ("model_size", "latency", "isolation", "cost", "scalability")
_CLASS_LATENCY = {"strict": 1.0, "standard": 0.5, "relaxed": 0.2}


def _clip(value: float) -> float:
    return round(min(1.0, max(0.0, value)), 3)


def max_copies(model: ModelEntry) -> int:
    """Copies at peak: ceil(peak_rpm / rpm_per_copy), at least 1."""
    return max(1, math.ceil(model.peak_rpm / model.rpm_per_copy))


def min_copies(model: ModelEntry) -> int:
    """0 for a cold-start-tolerant model idle most of the day (scale to zero), else 1."""
    return 0 if model.idle_most_of_day and model.cold_start_tolerant else 1


@dataclass(frozen=True)
class Scores:
    """One model's (or a group's mean) five scores, in :data:`AXES` order."""

    model_size: float
    latency: float
    isolation: float
    cost: float
    scalability: float

    def values(self) -> tuple[float, ...]:
        return tuple(getattr(self, axis) for axis in AXES)


def score(model: ModelEntry) -> Scores:
    """The five fitness scores of ``model`` (rules in the module docstring)."""
    size = _clip(math.log10(max(1.0, copy_memory_gib(model))) / math.log10(640))
    if model.latency_p50_ms is not None:
        latency = 1 - math.log10(max(100, model.latency_p50_ms) / 100) / 2
    else:
        latency = _CLASS_LATENCY[model.latency_class]
    if model.cold_start_tolerant:
        latency -= 0.25
    isolation = 1.0 if model.isolation == "dedicated" else 0.5 if model.tenant else 0.0
    utilisation = model.active_hours / 24 * min(1.0, model.peak_rpm / model.rpm_per_copy)
    scale = math.log2(max_copies(model)) / 5 + (0.2 if min_copies(model) == 0 else 0.0)
    return Scores(size, _clip(latency), isolation, _clip(1 - utilisation), _clip(scale))


def mean_scores(scores: list[Scores]) -> Scores:
    """The mean of each axis (a group's chart)."""
    return Scores(*(round(sum(s.values()[i] for s in scores) / len(scores), 3) for i in range(5)))
