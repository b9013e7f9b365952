"""Rules of an inference component's placement (``SchedulingConfig``): the strategy
(botocore ``InferenceComponentPlacementStrategy``) and the Availability Zone imbalance
(botocore ``AvailabilityZoneBalanceMaxImbalance``, 0-100), and the imbalance written when
none is asked for."""

from __future__ import annotations

from fm_platform.rules.problems import Problems
from fm_platform.rules.sagemaker_model import member_shape_name, shape_rule


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
    problems.check_shape(f"{field}.max_az_imbalance", max_az_imbalance, _max_imbalance_shape())


def written_az_imbalance(max_az_imbalance: int | None) -> int:
    """The ``MaxImbalance`` to write: the one asked for, else the largest botocore allows.

    CloudFormation's schema requires ``AvailabilityZoneBalance`` in a ``SchedulingConfig``
    (botocore does not), and an unset ``MaxImbalance`` means 0 (botocore: "Default value:
    0"): copies held level across zones, which keeps BINPACK and consolidating scale-in
    from moving copies where the zones would differ. A placement strategy alone asks for no
    balance, so no balance is written: "A copy placement is allowed if it reduces imbalance
    or the resulting imbalance is within this value", and the largest value allows any."""
    if max_az_imbalance is not None:
        return max_az_imbalance
    loosest = shape_rule(_max_imbalance_shape()).max
    assert loosest is not None  # botocore bounds it
    return loosest


def _max_imbalance_shape() -> str:
    return member_shape_name("InferenceComponentAvailabilityZoneBalance", "MaxImbalance")
