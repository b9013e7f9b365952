"""Rules of an inference component's placement (``SchedulingConfig``): the strategy
(botocore ``InferenceComponentPlacementStrategy``) and the Availability Zone imbalance
(botocore ``AvailabilityZoneBalanceMaxImbalance``, 0-100)."""

from __future__ import annotations

from fm_platform.rules.problems import Problems
from fm_platform.rules.sagemaker_model import member_shape_name


def check_scheduling(
    problems: Problems,
    field: str,
    *,
    placement_strategy: str | None,
    max_az_imbalance: int | None,
) -> None:
    """A placement strategy SageMaker knows and an imbalance within its limits."""
    problems.check_shape(
        f"{field}.placement_strategy",
        placement_strategy,
        member_shape_name("InferenceComponentSchedulingConfig", "PlacementStrategy"),
    )
    problems.check_shape(
        f"{field}.max_az_imbalance",
        max_az_imbalance,
        member_shape_name("InferenceComponentAvailabilityZoneBalance", "MaxImbalance"),
    )
