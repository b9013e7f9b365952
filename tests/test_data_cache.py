"""Data caching of inference components (``DataCacheConfig.EnableCaching``): on by
default for a component that may scale to zero copies on local-NVMe types, and what a
cached start means for the model's alarm budget and the planner's cold start."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from fm_platform.config import load_config
from fm_platform.constructs.inference.component_scaling import ComponentScaling
from fm_platform.constructs.inference.inference_component import InferenceComponentModel
from fm_platform.fleet.sizing.coldstart import cold_start
from fm_platform.fleet.sizing.needs import Needs
from fm_platform.rules.caching import caches_by_default
from tests.components import chat_endpoint, chat_model
from tests.support import new_app


def _model(
    *,
    instance_type: str = "ml.g5.12xlarge",
    min_instances: int = 1,
    min_copies: int = 0,
    **options: Any,
) -> tuple[InferenceComponentModel, dict[str, Any]]:
    stack = cdk.Stack(new_app(), "Cache")
    endpoint = chat_endpoint(stack, instance_type=instance_type, min_instance_count=min_instances)
    model = chat_model(
        stack,
        endpoint,
        min_memory_mib=8192,
        scaling=ComponentScaling(min_copies=min_copies, max_copies=2),
        **options,
    )
    components = Template.from_stack(stack).find_resources("AWS::SageMaker::InferenceComponent")
    (component,) = components.values()
    return model, component["Properties"]["Specification"]


def test_a_component_that_may_scale_to_zero_on_local_nvme_caches_by_default():
    model, specification = _model()
    assert model.caching is True
    assert specification["DataCacheConfig"] == {"EnableCaching": True}


@pytest.mark.parametrize(
    ("options", "why"),
    [
        ({"min_copies": 1}, "keeps a copy"),
        ({"instance_type": "ml.inf2.xlarge"}, "no local NVMe"),
    ],
)
def test_other_components_keep_sagemakers_choice(options, why):
    model, specification = _model(**options)
    assert model.caching is None, why
    assert "DataCacheConfig" not in specification


def test_an_explicit_choice_wins_over_the_default():
    model, specification = _model(enable_caching=False)
    assert specification["DataCacheConfig"] == {"EnableCaching": False}


def test_the_default_needs_every_pool_type_to_have_local_nvme():
    assert caches_by_default(0, ("ml.g5.12xlarge", "ml.g5.2xlarge")) is True
    assert caches_by_default(0, ("ml.g5.12xlarge", "ml.inf2.xlarge")) is None
    assert caches_by_default(0, ("ml.unknown.xlarge",)) is None


def test_a_cached_start_on_a_kept_instance_skips_the_download_in_the_startup_budget():
    cached, _ = _model()
    uncached, _ = _model(enable_caching=False)
    new_instance, _ = _model(min_instances=0)  # a new instance has no cache
    assert cached.startup_timeout_s is not None and uncached.startup_timeout_s is not None
    download = uncached.startup_timeout_s - cached.startup_timeout_s
    assert download >= 60  # the artifact download timeout (at least 60 s)
    assert new_instance.startup_timeout_s == uncached.startup_timeout_s


def test_the_planners_cold_start_skips_the_pull_and_download_when_cached():
    # only these fields enter a cold start
    needs = cast(
        Needs, SimpleNamespace(framework="vllm", memory_gib=15.0, weights_gib=15.0, generative=True)
    )
    plain, plain_parts = cold_start(needs, False)
    cached, parts = cold_start(needs, False, cached=True)
    assert "weights download" in plain_parts and "weights download" not in parts
    assert parts.startswith("cached image and weights 0 s")
    assert plain - cached == pytest.approx(120 + 15 * 1.073741824 / 0.25)


def test_a_bad_enable_caching_is_refused_by_its_key():
    raw = {
        "inference": {
            "ic_endpoints": [
                {
                    "name": "shared",
                    "instance_type": "ml.g5.12xlarge",
                    "models": [
                        {
                            "model_name": "chat",
                            "accelerators": 1,
                            "min_memory_mib": 8192,
                            "enable_caching": "yes",
                        }
                    ],
                }
            ]
        }
    }
    with pytest.raises(ValueError) as error:
        load_config(raw)
    assert "enable_caching" in str(error.value) and "'yes'" in str(error.value)
