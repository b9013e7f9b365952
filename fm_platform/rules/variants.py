"""Rules of the variants of a single-model endpoint and of its data capture."""

from __future__ import annotations

from fm_platform.rules.hosting import check_hosting_instance_type
from fm_platform.rules.problems import Problems


def check_variant(
    problems: Problems,
    field: str,
    *,
    variant_name: str | None,
    instance_type: str | None,
    initial_instance_count: int | None,
    initial_weight: float | None,
) -> None:
    """One production or shadow variant."""
    problems.check_shape(f"{field}.variant_name", variant_name, "VariantName")
    check_hosting_instance_type(problems, f"{field}.instance_type", instance_type)
    problems.check_range(f"{field}.initial_instance_count", initial_instance_count, 1, None)
    if initial_weight is not None and initial_weight < 0:
        problems.add(f"{field}.initial_weight", initial_weight, "must be at least 0")


def check_data_capture(
    problems: Problems,
    field: str,
    *,
    sampling_percentage: int | None,
    capture_requests: bool | None,
    capture_responses: bool | None,
    prefix: str | None,
) -> None:
    """A sampling percentage of 0-100, something captured, and a key prefix without
    leading or trailing slash."""
    problems.check_range(f"{field}.sampling_percentage", sampling_percentage, 0, 100)
    if capture_requests is False and capture_responses is False:
        problems.add(
            f"{field}.capture_requests",
            capture_requests,
            "capture_requests or capture_responses must be True",
        )
    if prefix is not None and (not prefix or prefix.startswith("/") or prefix.endswith("/")):
        problems.add(f"{field}.prefix", prefix, "must be non-empty, without leading/trailing /")
