"""Shared setup for tests that place inference components on an endpoint.

Defaults (every one can be overridden by keyword):

- :func:`chat_endpoint`: an ``InferenceComponentEndpoint`` with construct ID ``"Endpoint"``
  and ``instance_type="ml.g5.12xlarge"`` (4 GPUs, 48 vCPUs, 192 GiB);
- :func:`chat_model_props`: ``model_name="chat"``, ``container=ModelContainer(image=IMAGE)``
  (no model data), ``accelerators=1``, ``min_memory_mib=16384``;
- :func:`chat_model`: an ``InferenceComponentModel`` with construct ID ``"Chat"`` and those
  props.

A test whose assertions depend on one of these values passes it explicitly.
"""

from __future__ import annotations

from typing import Any

from constructs import Construct

from fm_platform.constructs.inference.component_endpoint import (
    InferenceComponentEndpoint,
    InferenceComponentEndpointProps,
)
from fm_platform.constructs.inference.endpoint_interface import IInferenceComponentEndpoint
from fm_platform.constructs.inference.inference_component import (
    InferenceComponentModel,
    InferenceComponentModelProps,
)
from fm_platform.constructs.inference.model_container import ModelContainer

IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"


def chat_endpoint(
    scope: Construct, construct_id: str = "Endpoint", **props: Any
) -> InferenceComponentEndpoint:
    """An endpoint of ``ml.g5.12xlarge`` instances; ``props`` override or add props."""
    return InferenceComponentEndpoint(
        scope,
        construct_id,
        InferenceComponentEndpointProps(**{"instance_type": "ml.g5.12xlarge", **props}),
    )


def chat_model_props(
    endpoint: IInferenceComponentEndpoint, **props: Any
) -> InferenceComponentModelProps:
    """Props of a one-GPU, 16 GiB ``chat`` model on ``endpoint``; ``props`` override or add."""
    defaults: dict[str, Any] = {
        "model_name": "chat",
        "endpoint": endpoint,
        "container": ModelContainer(image=IMAGE),
        "accelerators": 1,
        "min_memory_mib": 16384,
    }
    return InferenceComponentModelProps(**{**defaults, **props})


def chat_model(
    scope: Construct,
    endpoint: IInferenceComponentEndpoint,
    *,
    construct_id: str = "Chat",
    **props: Any,
) -> InferenceComponentModel:
    """The :func:`chat_model_props` model on ``endpoint``, built in ``scope``."""
    return InferenceComponentModel(scope, construct_id, chat_model_props(endpoint, **props))
