"""Rules of autoscaling: an inference component's copies and a variant's instances."""

from __future__ import annotations

from collections.abc import Iterable

from fm_platform.rules.problems import Problems


def check_min_max(
    problems: Problems, field: str, low_name: str, low: int | None, high_name: str, high: int | None
) -> None:
    """``low`` at most ``high``."""
    if low is not None and high is not None and low > high:
        problems.add(f"{field}.{low_name}", low, f"must not exceed {high_name} ({high})")


def check_positive(problems: Problems, field: str, value: float | None) -> None:
    """Greater than 0."""
    if value is not None and value <= 0:
        problems.add(field, value, "must be greater than 0")


def check_component_scaling(
    problems: Problems,
    field: str,
    *,
    min_copies: int | None,
    max_copies: int | None,
    metric: str | None,
    metrics: Iterable[str],
    target_value: float | None,
    scale_in_cooldown_seconds: int | None,
    scale_out_cooldown_seconds: int | None,
) -> None:
    """Copy scaling of an inference component: 0 <= min <= max, max >= 1, a known
    per-copy ``metric``, a positive target and non-negative cooldowns."""
    problems.check_range(f"{field}.min_copies", min_copies, 0, None)
    problems.check_range(f"{field}.max_copies", max_copies, 1, None)
    check_min_max(problems, field, "min_copies", min_copies, "max_copies", max_copies)
    problems.check_choice(f"{field}.metric", metric, list(metrics))
    check_positive(problems, f"{field}.target_value", target_value)
    _check_cooldowns(problems, field, scale_in_cooldown_seconds, scale_out_cooldown_seconds)


def check_instance_scaling(
    problems: Problems,
    field: str,
    *,
    min_instances: int | None,
    max_instances: int | None,
    target_invocations_per_instance: float | None,
    scale_in_cooldown_seconds: int | None,
    scale_out_cooldown_seconds: int | None,
) -> None:
    """Instance scaling of a variant: 1 <= min <= max, a positive target and non-negative
    cooldowns."""
    problems.check_range(f"{field}.min_instances", min_instances, 1, None)
    problems.check_range(f"{field}.max_instances", max_instances, 1, None)
    check_min_max(problems, field, "min_instances", min_instances, "max_instances", max_instances)
    check_positive(
        problems, f"{field}.target_invocations_per_instance", target_invocations_per_instance
    )
    _check_cooldowns(problems, field, scale_in_cooldown_seconds, scale_out_cooldown_seconds)


def _check_cooldowns(
    problems: Problems, field: str, scale_in: int | None, scale_out: int | None
) -> None:
    problems.check_range(f"{field}.scale_in_cooldown_seconds", scale_in, 0, None)
    problems.check_range(f"{field}.scale_out_cooldown_seconds", scale_out, 0, None)
