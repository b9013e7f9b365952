"""Default startup timeouts of an inference component, from the size of its model.

A copy's host memory is a fair proxy for its model's size (the weights are read into host
memory before they reach the accelerators). SageMaker's own defaults are sized for small
models; a 13B model read from S3 can exceed them, and the copy then fails to start.
"""

from __future__ import annotations

import math

from aws_cdk import aws_sagemaker as sagemaker

from fm_platform.constructs.tokens import is_unresolved
from fm_platform.rules.sagemaker_model import member_shape_name, shape_rule

_STARTUP = "InferenceComponentStartupParameters"
_MIB_PER_GIB = 1024

#: Download: a fixed 60 s plus 15 s per GiB (about 70 MB/s, below what one instance reads
#: from S3, to leave room for extraction and a busy network).
DOWNLOAD_BASE_S = 60
DOWNLOAD_S_PER_GIB = 15
#: Health check: a fixed 300 s (container start, engine initialisation) plus 10 s per GiB
#: (loading the weights onto the accelerators, warm-up).
HEALTH_CHECK_BASE_S = 300
HEALTH_CHECK_S_PER_GIB = 10


def _clamped(seconds: float, member: str) -> int:
    rule = shape_rule(member_shape_name(_STARTUP, member))
    low, high = rule.min or 60, rule.max or 3600
    return max(low, min(high, math.ceil(seconds)))


def default_download_timeout_s(min_memory_mib: int) -> int:
    """``60 + 15 * GiB`` of ``min_memory_mib``, within 60-3600 s (botocore's limits)."""
    gib = min_memory_mib / _MIB_PER_GIB
    return _clamped(DOWNLOAD_BASE_S + DOWNLOAD_S_PER_GIB * gib, "ModelDataDownloadTimeoutInSeconds")


def default_health_check_timeout_s(min_memory_mib: int) -> int:
    """``300 + 10 * GiB`` of ``min_memory_mib``, within 60-3600 s (botocore's limits)."""
    gib = min_memory_mib / _MIB_PER_GIB
    return _clamped(
        HEALTH_CHECK_BASE_S + HEALTH_CHECK_S_PER_GIB * gib,
        "ContainerStartupHealthCheckTimeoutInSeconds",
    )


def startup_parameters(
    min_memory_mib: int,
    *,
    download_s: int | None = None,
    health_check_s: int | None = None,
) -> sagemaker.CfnInferenceComponent.InferenceComponentStartupParametersProperty | None:
    """The component's ``StartupParameters``: ``download_s`` and ``health_check_s`` when
    given, else the defaults above for ``min_memory_mib`` (None for an unresolved memory
    with neither given: SageMaker's defaults)."""
    if not is_unresolved(min_memory_mib):
        if download_s is None:
            download_s = default_download_timeout_s(min_memory_mib)
        if health_check_s is None:
            health_check_s = default_health_check_timeout_s(min_memory_mib)
    if download_s is None and health_check_s is None:
        return None
    return sagemaker.CfnInferenceComponent.InferenceComponentStartupParametersProperty(
        model_data_download_timeout_in_seconds=download_s,
        container_startup_health_check_timeout_in_seconds=health_check_s,
    )
