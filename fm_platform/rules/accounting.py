"""Rules of the Slurm accounting database: Aurora MySQL Serverless v2 capacity."""

from __future__ import annotations

from fm_platform.rules.problems import Problems

# Amazon Aurora User Guide, "Aurora Serverless v2 capacity": capacity in Aurora capacity
# units (ACUs) from 0.5 (0 only with automatic pause, which a slurmdbd that keeps its
# connection open never reaches) to 256, in steps of 0.5.
ACU_RANGE = (0.5, 256.0)
ACU_STEP = 0.5


def check_capacity_range(
    problems: Problems, prefix: str, min_acu: float | None, max_acu: float | None
) -> None:
    """Both within :data:`ACU_RANGE`, multiples of :data:`ACU_STEP`, minimum at most the
    maximum; fields ``min_capacity_acu`` and ``max_capacity_acu`` after ``prefix``."""
    for name, value in (("min_capacity_acu", min_acu), ("max_capacity_acu", max_acu)):
        problems.check_range(f"{prefix}{name}", value, *ACU_RANGE)
        if value is not None and (value / ACU_STEP) % 1:
            problems.add(f"{prefix}{name}", value, f"must be a multiple of {ACU_STEP}")
    if min_acu is not None and max_acu is not None and min_acu > max_acu:
        problems.add(
            f"{prefix}min_capacity_acu", min_acu, f"must be at most max_capacity_acu ({max_acu})"
        )
