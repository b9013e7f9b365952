"""Rules of a serverless endpoint's ``ServerlessConfig`` (botocore
``ProductionVariantServerlessConfig``): memory 1024-6144 MB "in 1 GB increments", maximum
concurrency 1-200, provisioned concurrency 1-200 and "less than or equal to
MaxConcurrency"; and no network isolation, which Serverless Inference does not support
(SageMaker Developer Guide, "Serverless Inference", "Feature exclusions")."""

from __future__ import annotations

from fm_platform.rules.problems import Problems
from fm_platform.rules.sagemaker_model import member_shape_name, shape_rule

_SERVERLESS = "ProductionVariantServerlessConfig"
MEMORY_STEP_MIB = 1024


def memory_sizes_mib() -> tuple[int, ...]:
    """The memory sizes a serverless endpoint may have (botocore's range, in 1 GB steps):
    1024, 2048, ..., 6144."""
    rule = shape_rule(member_shape_name(_SERVERLESS, "MemorySizeInMB"))
    assert rule.min is not None and rule.max is not None
    return tuple(range(rule.min, rule.max + 1, MEMORY_STEP_MIB))


def max_concurrency_limit() -> int:
    """The largest ``MaxConcurrency`` of one serverless endpoint (botocore: 200)."""
    rule = shape_rule(member_shape_name(_SERVERLESS, "MaxConcurrency"))
    assert rule.max is not None
    return rule.max


def check_serverless(
    problems: Problems,
    *,
    memory_size_mib: int | None,
    max_concurrency: int | None,
    provisioned_concurrency: int | None,
) -> None:
    """Memory, maximum and provisioned concurrency within botocore's limits."""
    problems.check_shape(
        "memory_size_mib", memory_size_mib, member_shape_name(_SERVERLESS, "MemorySizeInMB")
    )
    if isinstance(memory_size_mib, int) and memory_size_mib % MEMORY_STEP_MIB:
        problems.add(
            "memory_size_mib",
            memory_size_mib,
            "a multiple of 1024 (botocore: 1024, 2048, 3072, 4096, 5120 or 6144 MB)",
        )
    problems.check_shape(
        "max_concurrency", max_concurrency, member_shape_name(_SERVERLESS, "MaxConcurrency")
    )
    problems.check_shape(
        "provisioned_concurrency",
        provisioned_concurrency,
        member_shape_name(_SERVERLESS, "ProvisionedConcurrency"),
    )
    if (
        isinstance(provisioned_concurrency, int)
        and isinstance(max_concurrency, int)
        and provisioned_concurrency > max_concurrency
    ):
        problems.add(
            "provisioned_concurrency",
            provisioned_concurrency,
            f"at most max_concurrency ({max_concurrency})",
        )


def check_serverless_isolation(problems: Problems, network_isolation: bool) -> None:
    """Network isolation off: Serverless Inference does not support it."""
    if network_isolation:
        problems.add(
            "network_isolation",
            network_isolation,
            "false: Serverless Inference does not support network isolation (SageMaker "
            "Developer Guide, Serverless Inference, Feature exclusions)",
        )
