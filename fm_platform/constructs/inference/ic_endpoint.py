"""Deprecated module path: see :mod:`fm_platform.constructs.inference.component_endpoint`."""

from __future__ import annotations

import warnings

from fm_platform.constructs.inference.component_endpoint import (
    EndpointReference,
    InferenceComponentEndpoint,
    InferenceComponentEndpointProps,
)

warnings.warn(
    "fm_platform.constructs.inference.ic_endpoint is deprecated: import from "
    "fm_platform.constructs.inference.component_endpoint",
    DeprecationWarning,
    stacklevel=2,
)

InferenceEndpoint = InferenceComponentEndpoint
InferenceEndpointProps = InferenceComponentEndpointProps

__all__ = ["EndpointReference", "InferenceEndpoint", "InferenceEndpointProps"]
