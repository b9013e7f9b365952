"""The planner's one way through: a catalog file in, its plan out.

:func:`plan_catalog` runs the pipeline in its order: the catalog and model facts
(:mod:`fm_platform.fleet.models`), each model sized and decided
(:mod:`fm_platform.fleet.sizing`, :mod:`fm_platform.fleet.deciding`), placed
(:mod:`fm_platform.fleet.placing`), and the plan annotated with how each model is served
(:mod:`fm_platform.fleet.outputs`). `fmp plan` and the catalog app
(:func:`fm_platform.stacks.fleet.fleet_stacks_from_file`) both call it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fm_platform.fleet.deciding.options import family_types
from fm_platform.fleet.models.adapters import planning_catalog
from fm_platform.fleet.models.catalog import Catalog, load_catalog
from fm_platform.fleet.outputs.plan import Plan
from fm_platform.fleet.outputs.serving import annotate
from fm_platform.fleet.placing.planner import Planner


@dataclass(frozen=True)
class PlannedCatalog:
    """A catalog planned: ``served`` (the catalog as written: adapters are models of their
    own, what the stacks serve), ``planner`` (it planned ``served``'s adapters on their
    bases; its ``catalog``, ``assessed`` and ``moves`` explain the plan), ``plan`` (annotated
    with how each model is served) and ``previous`` (the plan it kept, or None)."""

    served: Catalog
    planner: Planner
    plan: Plan
    previous: Plan | None


def plan_catalog(catalog_path: str | Path, region: str, previous: Plan | None) -> PlannedCatalog:
    """Plan the catalog at ``catalog_path`` for ``region`` (its prices, images and instance
    types), keeping ``previous``'s assignments (None: a fresh plan). Raises ``ValueError``
    listing every problem of the catalog, or of a model no type can host."""
    served = load_catalog(catalog_path, family_types(region), region)
    planner = Planner(planning_catalog(served), previous, region=region)
    return PlannedCatalog(served, planner, annotate(planner.run(), served), previous)
