"""LoRA adapters of the catalog: planned with their base model, served on its component.

An adapter (``base_model`` + ``adapter``) has no compute of its own: SageMaker loads it
into the base model's inference component (``Specification.BaseInferenceComponentName``
and ``Container.ArtifactUrl``; SageMaker Developer Guide, "Fine-tuned models with adapter
inference components"). So the planner sees the base only, carrying the adapters'
traffic: its ``peak_rpm`` is its own plus every adapter's (each adapter by default 60
requests a minute, as any model: the peaks are taken to coincide), and its
``active_hours`` those that keep the day's requests (the sum of each peak x its hours,
over the combined peak); the base's copies are sized and scaled for that combined
traffic. LMI serves the adapters with vLLM's LoRA support (``OPTION_ENABLE_LORA``,
``OPTION_MAX_LORAS``, ``OPTION_MAX_LORA_RANK``); the room vLLM reserves for them on each
copy is counted beside the weights (:func:`fm_platform.fleet.sizing.needs.lora_adapter_bytes`,
from the catalog's ``adapter_ranks``, which the planning catalog keeps).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict

from fm_platform.fleet.models.catalog import Catalog, ModelEntry, lora_ranks
from fm_platform.fleet.sizing.needs import DEFAULT_PEAK_RPM


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
    ranks = dict(catalog.adapter_ranks) or lora_ranks(catalog.models)
    models = []
    for entry in catalog.models:
        if is_adapter(entry):
            continue
        own = adapters.get(entry.name)
        if own:
            members = [entry, *own]
            peak = sum(_rpm(m) for m in members)
            daily = sum(_rpm(m) * m.active_hours for m in members)
            entry = dataclasses.replace(
                entry, peak_rpm=peak, active_hours=round(daily / peak, 2) if peak else 24.0
            )
        models.append(entry)
    return dataclasses.replace(catalog, models=tuple(models), adapter_ranks=ranks)
