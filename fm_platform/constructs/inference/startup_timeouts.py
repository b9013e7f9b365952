"""How long a hosted model may take to start, and the disk it needs, from the size of its
weights.

AWS's guidance for large models ("SageMaker AI endpoint parameters for large model
inference", https://docs.aws.amazon.com/sagemaker/latest/dg/large-model-inference-hosting.html):
raise ``ModelDataDownloadTimeoutInSeconds`` for models over 40 GB, raise
``ContainerStartupHealthCheckTimeoutInSeconds`` when the container needs longer to load,
and on instance types without a local disk raise ``VolumeSizeInGB`` to slightly more than
the model when it is over 30 GB. SageMaker's own defaults are sized for small models; a
13B model read from S3 can exceed them, and the copy or instance then fails to start.
"""

from __future__ import annotations

import math

from aws_cdk import aws_sagemaker as sagemaker

from fm_platform.core.tokens import is_unresolved
from fm_platform.hardware.instances import UnknownInstanceTypeError, instance_spec
from fm_platform.rules.sagemaker_model import member_shape_name, shape_rule

_STARTUP = "InferenceComponentStartupParameters"
_MIB_PER_GIB = 1024
_GB_PER_GIB = 1.073741824

#: Download: a fixed 60 s plus 15 s per GiB of weights (about 70 MB/s, below what one
#: instance reads from S3, to leave room for extraction and a busy network).
DOWNLOAD_BASE_S = 60
DOWNLOAD_S_PER_GIB = 15
#: Health check: a fixed 300 s (container start, engine initialisation) plus 10 s per GiB
#: of weights (loading them onto the accelerators, warm-up).
HEALTH_CHECK_BASE_S = 300
HEALTH_CHECK_S_PER_GIB = 10
#: The storage volume SageMaker attaches to types without a local disk (the guidance above
#: asks for a larger one only for models over 30 GB), and the room kept beside the
#: weights: 10 GB (container layers, logs), plus the archive while it is extracted.
DEFAULT_VOLUME_GB = 30
VOLUME_MARGIN_GB = 10


def _clamped(seconds: float, member: str) -> int:
    rule = shape_rule(member_shape_name(_STARTUP, member))
    low, high = rule.min or 60, rule.max or 3600
    return max(low, min(high, math.ceil(seconds)))


def default_download_timeout_s(weights_gib: float) -> int:
    """``60 + 15 * GiB`` of weights, within 60-3600 s (botocore's limits)."""
    return _clamped(
        DOWNLOAD_BASE_S + DOWNLOAD_S_PER_GIB * weights_gib, "ModelDataDownloadTimeoutInSeconds"
    )


def default_health_check_timeout_s(weights_gib: float) -> int:
    """``300 + 10 * GiB`` of weights, within 60-3600 s (botocore's limits)."""
    return _clamped(
        HEALTH_CHECK_BASE_S + HEALTH_CHECK_S_PER_GIB * weights_gib,
        "ContainerStartupHealthCheckTimeoutInSeconds",
    )


def timeouts(
    weights_gib: float | None, *, download_s: int | None = None, health_check_s: int | None = None
) -> tuple[int | None, int | None]:
    """The download and health-check timeouts: ``download_s`` / ``health_check_s`` when
    given, else the defaults for ``weights_gib`` (None when it is unknown or a token)."""
    if weights_gib is not None and not is_unresolved(weights_gib):
        if download_s is None:
            download_s = default_download_timeout_s(weights_gib)
        if health_check_s is None:
            health_check_s = default_health_check_timeout_s(weights_gib)
    return download_s, health_check_s


def startup_parameters(
    weights_gib: float | None,
    *,
    download_s: int | None = None,
    health_check_s: int | None = None,
) -> sagemaker.CfnInferenceComponent.InferenceComponentStartupParametersProperty | None:
    """An inference component's ``StartupParameters`` (see :func:`timeouts`); None when
    neither timeout is known (SageMaker's defaults)."""
    download_s, health_check_s = timeouts(
        weights_gib, download_s=download_s, health_check_s=health_check_s
    )
    if download_s is None and health_check_s is None:
        return None
    return sagemaker.CfnInferenceComponent.InferenceComponentStartupParametersProperty(
        model_data_download_timeout_in_seconds=download_s,
        container_startup_health_check_timeout_in_seconds=health_check_s,
    )


def instance_weights_gib(instance_type: str) -> float | None:
    """The most weights one instance of ``instance_type`` can serve: its accelerators'
    memory, else (CPU types) its host memory; None for a type without figures."""
    if is_unresolved(instance_type):
        return None
    try:
        spec = instance_spec(instance_type)
    except UnknownInstanceTypeError:
        return None
    mib = spec.accelerator_memory_mib_total if spec.is_accelerated else spec.memory_mib
    return mib / _MIB_PER_GIB


def volume_size_gb(
    instance_type: str, weights_gib: float | None, *, compressed: bool, given: int | None = None
) -> int | None:
    """The ``VolumeSizeInGB`` of a variant on ``instance_type``: ``given`` when set; else,
    on a type without a local disk whose model is larger than SageMaker's default volume,
    the weights (twice for a ``model.tar.gz``, extracted beside its archive) plus 10 GB,
    within botocore's limit; None otherwise (SageMaker's default)."""
    if given is not None or weights_gib is None or is_unresolved(instance_type):
        return given
    try:
        if instance_spec(instance_type).local_nvme:
            return None
    except UnknownInstanceTypeError:
        return None
    needed = weights_gib * _GB_PER_GIB * (2 if compressed else 1) + VOLUME_MARGIN_GB
    if needed <= DEFAULT_VOLUME_GB:
        return None
    high = shape_rule(member_shape_name("ProductionVariant", "VolumeSizeInGB")).max or 512
    return min(high, math.ceil(needed))
