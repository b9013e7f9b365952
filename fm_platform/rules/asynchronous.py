"""Rules of an asynchronous endpoint: the instance types asynchronous inference runs on,
its instance counts and queue concurrency, the S3 prefix of its requests and results, the
model's memory and startup timeouts, and its scaling on the backlog.

Limits come from botocore's SageMaker model (``ProductionVariant``,
``AsyncInferenceClientConfig``, ``AsyncInferenceOutputConfig``); what botocore does not say
is cited beside its constant.
"""

from __future__ import annotations

from collections.abc import Sequence

from fm_platform.rules.hosting import check_hosting_instance_type
from fm_platform.rules.problems import Problems
from fm_platform.rules.sagemaker_model import member_shape_name, shape_rule
from fm_platform.rules.scaling import check_min_max, check_positive

_VARIANT = "ProductionVariant"
_CLIENT = "AsyncInferenceClientConfig"
_OUTPUT = "AsyncInferenceOutputConfig"

#: Instance families asynchronous inference does not run on. SageMaker Developer Guide,
#: "Supported features" (model-deploy-feature-matrix): asynchronous inference supports GPUs,
#: inf1 is supported for real-time inference only; archived copy:
#: awsdocs/amazon-sagemaker-developer-guide, doc_source/model-deploy-feature-matrix.md (June
#: 2023). Other hosting types (botocore ``ProductionVariantInstanceType``) are accepted as for
#: real-time endpoints.
UNSUPPORTED_FAMILIES = ("ml.inf1.",)

#: The folders under an endpoint's S3 prefix: request bodies, results, failures.
INPUTS, OUTPUTS, FAILURES = "inputs", "outputs", "failures"

#: The longest S3 bucket name (Amazon S3 User Guide, "General purpose bucket naming rules":
#: 3 to 63 characters): the prefix must leave room for it in the output paths.
MAX_BUCKET_NAME = 63


def check_async_instance_type(problems: Problems, field: str, instance_type: str | None) -> None:
    """Of a family asynchronous inference supports (not inf1), and a SageMaker hosting type
    this package has figures for."""
    if instance_type is not None and instance_type.startswith(UNSUPPORTED_FAMILIES):
        problems.add(
            field,
            instance_type,
            "asynchronous inference does not run on inf1 instances (SageMaker's supported "
            "features of each inference option); use inf2 or a GPU type, e.g. ml.g5.2xlarge",
        )
        return
    check_hosting_instance_type(problems, field, instance_type)


def check_initial_instance_count(problems: Problems, field: str, count: int | None) -> None:
    """At least botocore's minimum for ``ProductionVariant.InitialInstanceCount`` (1): an
    endpoint is created with instances, and its scaling takes it to zero afterwards."""
    low = shape_rule(member_shape_name(_VARIANT, "InitialInstanceCount")).min or 1
    if count is not None and count < low:
        problems.add(
            field,
            count,
            f"must be at least {low}: SageMaker creates an endpoint with instances; "
            "scale to zero with scaling.min_instances=0",
        )


def check_max_concurrency(problems: Problems, field: str, value: int | None) -> None:
    """Within botocore's ``AsyncInferenceClientConfig.MaxConcurrentInvocationsPerInstance``."""
    problems.check_shape(
        field, value, member_shape_name(_CLIENT, "MaxConcurrentInvocationsPerInstance")
    )


def longest_output_path(prefix: str) -> int:
    """Characters of the longest output path under ``prefix``:
    ``s3://<63-character bucket>/<prefix>/<outputs or failures>``."""
    folder = max(len(OUTPUTS), len(FAILURES))
    return len("s3://") + MAX_BUCKET_NAME + 1 + len(prefix) + 1 + folder


def check_s3_prefix(problems: Problems, field: str, prefix: str | None) -> None:
    """A key prefix without leading or trailing ``/`` whose output and failure paths fit
    botocore's ``AsyncInferenceOutputConfig.S3OutputPath`` whatever the bucket's name."""
    if prefix is None:
        return
    if not prefix or prefix.startswith("/") or prefix.endswith("/"):
        problems.add(field, prefix, "must be non-empty, without leading or trailing /")
        return
    limit = shape_rule(member_shape_name(_OUTPUT, "S3OutputPath")).max
    if limit is not None and longest_output_path(prefix) > limit:
        room = limit - longest_output_path("")
        problems.add(
            field,
            prefix,
            f"at most {room} characters: s3://<bucket, up to {MAX_BUCKET_NAME}>/<prefix>/"
            f"{OUTPUTS} must fit S3OutputPath's {limit}",
        )


def check_async_scaling(
    problems: Problems,
    field: str,
    *,
    min_instances: int | None,
    max_instances: int | None,
    target_backlog_per_instance: float | None,
    scale_in_cooldown_seconds: int | None,
    scale_out_cooldown_seconds: int | None,
    wake_cooldown_seconds: int | None,
) -> None:
    """Backlog scaling: 0 <= min <= max, max >= 1, a positive target and non-negative
    cooldowns."""
    problems.check_range(f"{field}.min_instances", min_instances, 0, None)
    problems.check_range(f"{field}.max_instances", max_instances, 1, None)
    check_min_max(problems, field, "min_instances", min_instances, "max_instances", max_instances)
    check_positive(problems, f"{field}.target_backlog_per_instance", target_backlog_per_instance)
    for name, value in (
        ("scale_in_cooldown_seconds", scale_in_cooldown_seconds),
        ("scale_out_cooldown_seconds", scale_out_cooldown_seconds),
        ("wake_cooldown_seconds", wake_cooldown_seconds),
    ):
        problems.check_range(f"{field}.{name}", value, 0, None)


def check_initial_within_scaling(
    problems: Problems, field: str, initial: int | None, max_instances: int | None
) -> None:
    """The instances at creation no more than the scaling maximum."""
    if initial is not None and max_instances is not None and initial > max_instances:
        problems.add(field, initial, f"must not exceed scaling.max_instances ({max_instances})")


def check_unique_prefixes(problems: Problems, key: str, prefixes: Sequence[str | None]) -> None:
    """Each endpoint's S3 prefix (by list position under ``key``) used by one endpoint
    only: the asynchronous endpoints of a stack share its bucket."""
    seen: set[str] = set()
    for index, prefix in enumerate(prefixes):
        if prefix is None:
            continue
        if prefix in seen:
            problems.add(
                f"{key}[{index}].s3_prefix",
                prefix,
                "must be unique among the stack's asynchronous endpoints: they share its "
                "bucket, so the readers of one endpoint's results would read the other's",
            )
        seen.add(prefix)
