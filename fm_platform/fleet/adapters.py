"""LoRA adapters of the catalog: planned with their base model, served on its component.

An adapter (``base_model`` + ``adapter``) has no compute of its own: SageMaker loads it
into the base model's inference component (``Specification.BaseInferenceComponentName``
and ``Container.ArtifactUrl``; SageMaker Developer Guide, "Fine-tuned models with adapter
inference components"). So the planner sees the base only, carrying the adapters'
traffic: its ``peak_rpm`` is its own plus every adapter's (each adapter by default 60
requests a minute, as any model), over the longest of their ``active_hours``; the base's
copies are sized and scaled for that combined traffic. LMI serves the adapters with
vLLM's LoRA support (``OPTION_ENABLE_LORA``, ``OPTION_MAX_LORAS``), whose per-adapter
weights are a few hundred MiB at most and are not counted beside the KV cache.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict

from fm_platform.fleet.catalog import Catalog, ModelEntry
from fm_platform.fleet.sizing import DEFAULT_PEAK_RPM


def is_adapter(entry: ModelEntry) -> bool:
    return entry.base_model is not None


def adapters_by_base(catalog: Catalog) -> dict[str, list[ModelEntry]]:
    """Each base model's adapters, in catalog order."""
    found: dict[str, list[ModelEntry]] = defaultdict(list)
    for entry in catalog.models:
        if entry.base_model is not None:
            found[entry.base_model].append(entry)
    return dict(found)


def _rpm(entry: ModelEntry) -> float:
    return DEFAULT_PEAK_RPM if entry.peak_rpm is None else float(entry.peak_rpm)


def planning_catalog(catalog: Catalog) -> Catalog:
    """``catalog`` as the planner sees it: adapters left out, each base carrying their
    traffic (module docstring)."""
    adapters = adapters_by_base(catalog)
    if not adapters:
        return catalog
    models = []
    for entry in catalog.models:
        if is_adapter(entry):
            continue
        own = adapters.get(entry.name)
        if own:
            entry = dataclasses.replace(
                entry,
                peak_rpm=_rpm(entry) + sum(_rpm(a) for a in own),
                active_hours=max([entry.active_hours] + [a.active_hours for a in own]),
            )
        models.append(entry)
    return dataclasses.replace(catalog, models=tuple(models))
