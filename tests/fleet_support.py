"""Helpers of the fleet tests: catalogs from model lists and generated catalogs."""

from __future__ import annotations

import sys

from fm_platform.fleet.deciding.options import family_types
from fm_platform.fleet.models.catalog import catalog_from_data
from tests.support import ROOT

sys.path.insert(0, str(ROOT / "examples"))
from catalog_generator import catalog_data, realistic_catalog_data  # noqa: E402

FAMILIES = family_types("us-east-1")


def catalog(models, name="fleet", **top):
    return catalog_from_data({"name": name, "models": models, **top}, FAMILIES)


def example(count):
    return catalog_from_data(catalog_data(count), FAMILIES)


__all__ = ["FAMILIES", "catalog", "catalog_data", "example", "realistic_catalog_data"]
