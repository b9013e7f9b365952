"""Rules of a model on an Inference Components endpoint: its names, what each copy
reserves, its copy counts, startup timeouts and rolling updates; and the default names of
inference components."""

from __future__ import annotations

import hashlib
import math

from fm_platform.rules.capacity import check_fit
from fm_platform.rules.problems import Problems
from fm_platform.rules.sagemaker_model import member_shape_name, shape_rule

_STARTUP = "InferenceComponentStartupParameters"
_ROLLING = "InferenceComponentRollingUpdatePolicy"
_REQUIREMENTS = "InferenceComponentComputeResourceRequirements"
_HASH_LENGTH = 8
BATCH_UNITS = ("COPY_COUNT", "CAPACITY_PERCENT")
#: A rolling update's batch as a share of the component's copies, in percent (botocore
#: ``InferenceComponentRollingUpdatePolicy.MaximumBatchSize``: "between 5% to 50%").
ROLLING_BATCH_PERCENT = (5, 50)


def component_name_for(
    stack_name: str,
    model_name: str,
    replacement_key: str | None = None,
    suffix: str | None = None,
) -> str:
    """``<stack_name>-<model_name>`` (``<stack_name>-<model_name>-<replacement_key>`` on an
    endpoint with a replacement key, see :mod:`fm_platform.rules.replacement`: a
    replacement component needs a name of its own while the old one still runs; then
    ``-<suffix>`` when given: a model moved to another endpoint with the same key needs one
    too) when it fits the name limit (63 characters).

    A longer name keeps the whole model name (with key and suffix) and as much of the stack
    name as fits, with 8 hex digits of the SHA-256 of the untrimmed name between them
    (``<stack prefix>-<hash>-<model_name>``), so that trimmed names stay distinct; a model
    name too long for even that gives ``<first characters>-<hash>``.
    """
    if replacement_key:
        model_name = f"{model_name}-{replacement_key}"
    if suffix:
        model_name = f"{model_name}-{suffix}"
    full = f"{stack_name}-{model_name}"
    limit = shape_rule("InferenceComponentName").max or 63
    if len(full) <= limit:
        return full
    digest = hashlib.sha256(full.encode()).hexdigest()[:_HASH_LENGTH]
    room = limit - len(model_name) - len(digest) - 2
    if room >= 1:
        return f"{stack_name[:room].rstrip('-')}-{digest}-{model_name}"
    return f"{full[: limit - len(digest) - 1].rstrip('-')}-{digest}"


def check_name_suffix(
    problems: Problems, field: str, suffix: str | None, component_name: str | None
) -> None:
    """A suffix of the default component name: letters, digits and hyphens as in a
    component name (botocore ``InferenceComponentName``), and no explicit component name
    beside it (which is used as given)."""
    problems.check_shape(field, suffix, "InferenceComponentName")
    if suffix is not None and component_name is not None:
        problems.add(
            field,
            suffix,
            f"applies to the default component name only; component_name "
            f"{component_name!r} is used as given: put the suffix into it, or drop one",
        )


def check_component_name_free(
    problems: Problems, field: str, name: str | None, taken: bool
) -> None:
    """A component name no other component of the endpoint or stack uses."""
    if name is not None and taken:
        problems.add(
            field,
            name,
            "must be unique on the endpoint and in the stack (component names are "
            "unique per account and region); another component already uses it",
        )


def check_copy_resources(
    problems: Problems,
    *,
    instance_type: str | None,
    accelerators: int | None,
    cpu_cores: float | None,
    min_memory_mib: int | None,
    max_memory_mib: int | None,
) -> None:
    """What each copy reserves: limits of botocore's shapes, and one copy on one instance of
    the endpoint's ``instance_type`` (unknown types are the endpoint's to report)."""
    problems.check_range("accelerators", accelerators, 0, None)
    if cpu_cores is not None and cpu_cores < 0.25:
        problems.add("cpu_cores", cpu_cores, "must be at least 0.25")
    problems.check_shape(
        "min_memory_mib", min_memory_mib, member_shape_name(_REQUIREMENTS, "MinMemoryRequiredInMb")
    )
    if (
        max_memory_mib is not None
        and min_memory_mib is not None
        and max_memory_mib < min_memory_mib
    ):
        problems.add(
            "max_memory_mib", max_memory_mib, f"must be at least min_memory_mib ({min_memory_mib})"
        )
    check_fit(
        problems,
        "",
        instance_type,
        accelerators=accelerators,
        cpu_cores=cpu_cores,
        min_memory_mib=min_memory_mib,
    )


def check_initial_copies(
    problems: Problems,
    initial_copies: int | None,
    copies_at_creation: int | None,
    scaling_range: tuple[int | None, int | None] | None,
) -> None:
    """``initial_copies`` at least 1, and (with scaling ``(min, max)``) the copies at
    creation within ``max(min, 1)`` and ``max``."""
    problems.check_range("initial_copies", initial_copies, 1, None)
    if scaling_range is None or copies_at_creation is None:
        return
    low, high = scaling_range
    if low is None or high is None:
        return
    low = max(low, 1)
    if low <= high and not low <= copies_at_creation <= high:
        problems.add(
            "initial_copies",
            copies_at_creation,
            f"must lie between {low} and scaling.max_copies ({high})",
        )


def check_batch_share(
    problems: Problems,
    field: str,
    batch_size: int | None,
    batch_unit: str | None,
    copies: int | None,
) -> None:
    """A rolling update's batch within 5%-50% of the component's copies (botocore
    ``InferenceComponentRollingUpdatePolicy.MaximumBatchSize``: "The value must be between
    5% to 50% of the copy count of the inference component"): 5-50 in ``CAPACITY_PERCENT``;
    in ``COPY_COUNT``, whole copies within those shares of ``copies`` (the ``CopyCount`` the
    update sends; None: unknown, at least one copy), which a component of one copy has
    none of."""
    if batch_size is None:
        return
    low_percent, high_percent = ROLLING_BATCH_PERCENT
    if batch_unit == "CAPACITY_PERCENT":
        if not low_percent <= batch_size <= high_percent:
            problems.add(
                field,
                batch_size,
                f"{low_percent}-{high_percent} (percent of the copies, batch_unit "
                "CAPACITY_PERCENT): a batch is 5%-50% of the component's copies (botocore "
                "InferenceComponentRollingUpdatePolicy.MaximumBatchSize)",
            )
        return
    if batch_unit != "COPY_COUNT" or copies is None or copies < 1:
        problems.check_range(field, batch_size, 1, None)
        return
    low = math.ceil(copies * low_percent / 100)
    high = copies * high_percent // 100
    if high < 1:
        problems.add(
            field,
            batch_size,
            f"no batch of whole copies is 5%-50% of {copies} copy (botocore "
            "InferenceComponentRollingUpdatePolicy.MaximumBatchSize): set batch_unit "
            "CAPACITY_PERCENT (5-50), or give the component at least 2 copies "
            "(initial_copies)",
        )
    elif not low <= batch_size <= high:
        problems.add(
            field,
            batch_size,
            f"{low}-{high} copies: 5%-50% of the component's {copies} copies (botocore "
            "InferenceComponentRollingUpdatePolicy.MaximumBatchSize); or set batch_unit "
            "CAPACITY_PERCENT (5-50)",
        )


def check_startup_timeouts(
    problems: Problems, download_s: int | None, health_check_s: int | None
) -> None:
    """Download and health-check timeouts within botocore's limits."""
    problems.check_shape(
        "model_data_download_timeout_s",
        download_s,
        member_shape_name(_STARTUP, "ModelDataDownloadTimeoutInSeconds"),
    )
    problems.check_shape(
        "container_startup_health_check_timeout_s",
        health_check_s,
        member_shape_name(_STARTUP, "ContainerStartupHealthCheckTimeoutInSeconds"),
    )


def check_rolling_update(
    problems: Problems,
    field: str,
    *,
    batch_size: int | None,
    batch_unit: str | None,
    wait_interval_s: int | None,
    maximum_execution_timeout_s: int | None,
    rollback_batch_size: int | None = None,
    rollback_alarms: int = 0,
    copies: int | None = None,
) -> None:
    """A rolling update's batch (:func:`check_batch_share`, of the component's ``copies``),
    its rollback batch (1-100 percent, or at least one copy), its times within botocore's
    limits and at most 10 rollback alarms (botocore ``AlarmList``)."""
    problems.check_choice(f"{field}.batch_unit", batch_unit, BATCH_UNITS)
    high = 100 if batch_unit == "CAPACITY_PERCENT" else None
    check_batch_share(problems, f"{field}.batch_size", batch_size, batch_unit, copies)
    problems.check_range(f"{field}.rollback_batch_size", rollback_batch_size, 1, high)
    most_alarms = shape_rule("AlarmList").max
    if most_alarms is not None and rollback_alarms > most_alarms:
        problems.add(
            f"{field}.rollback_alarms",
            f"{rollback_alarms} alarms",
            f"at most {most_alarms} (botocore AlarmList)",
        )
    problems.check_shape(
        f"{field}.wait_interval_s",
        wait_interval_s,
        member_shape_name(_ROLLING, "WaitIntervalInSeconds"),
    )
    problems.check_shape(
        f"{field}.maximum_execution_timeout_s",
        maximum_execution_timeout_s,
        member_shape_name(_ROLLING, "MaximumExecutionTimeoutInSeconds"),
    )
