"""A container family with no image in the plan's region rules its types out in the plan,
with the reason, instead of failing when the stacks are synthesized."""

from __future__ import annotations

import pytest

from fm_platform.containers.images import container_problem
from fm_platform.fleet.deciding.options import assess
from fm_platform.fleet.placing.planner import Planner
from fm_platform.fleet.sizing.needs import resolve
from tests.fleet_support import catalog


def _needs(**fields):
    cat = catalog([{"name": "m", **fields}])
    return resolve(cat.models[0], cat)


def test_a_family_without_an_image_in_the_region_names_the_region():
    assert container_problem("tei", "nvidia-gpu", "mx-central-1") == (
        "container tei has no gpu image in mx-central-1 (published in 35 other regions); "
        "name another container or an image"
    )
    assert container_problem("tei", "nvidia-gpu", "us-east-1") is None
    assert container_problem("custom", "none", "mx-central-1") is None


def test_the_plan_rules_out_every_type_whose_image_is_not_in_the_region():
    embedder = _needs(architecture="bge-large-en-v1.5")
    assert embedder.container == "tei"
    result = assess(embedder, "mx-central-1")
    assert not result.options
    assert all("container tei has no" in why for why in result.rejected.values())
    with pytest.raises(ValueError, match="container tei has no (gpu|cpu) image in mx-central-1"):
        Planner(
            catalog([{"name": "m", "architecture": "bge-large-en-v1.5"}]), region="mx-central-1"
        ).run()


def test_naming_a_family_that_is_published_in_the_region_plans_the_model():
    sdxl = {"architecture": "sdxl-base-1.0", "dtype": "fp16", "latency_class": "relaxed"}
    result = assess(_needs(**sdxl), "us-gov-west-1")
    assert not result.options
    assert result.rejected["ml.g4dn.xlarge"] == (
        "container stabilityai has no gpu image in us-gov-west-1 (published in 29 other "
        "regions); name another container or an image"
    )
    other = assess(_needs(**sdxl, container="pytorch"), "us-gov-west-1")
    types = {o.instance_type for options in other.options.values() for o in options}
    assert "ml.g4dn.xlarge" in types
