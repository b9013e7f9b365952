"""Where an inference component's copies go and how fast new ones start: its
``SchedulingConfig`` (placement strategy, balance across Availability Zones) and its
``DataCacheConfig`` (artifacts and image cached on each instance)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from aws_cdk import aws_sagemaker as sagemaker

from fm_platform.rules.placement import check_scheduling, written_az_imbalance
from fm_platform.rules.problems import Problems

_IC = sagemaker.CfnInferenceComponent


@dataclass(frozen=True, kw_only=True)
class ComponentScheduling:
    """How SageMaker places a component's copies on the endpoint's instances (the
    configuration's ``scheduling`` keys of a model too).

    placement_strategy: ``SPREAD`` (copies over as many instances as possible: one lost
        instance takes fewer copies) or ``BINPACK`` (fill instances first: fewer instances
        for scale-in to release); by default SPREAD.
    max_az_imbalance: the largest difference in copies between two Availability Zones
        (0-100); the balance is enforced ``PERMISSIVE``ly (the only mode: SageMaker places
        a copy in another zone when the balanced one has no room); by default 100, the
        largest botocore allows: no balance (CloudFormation requires the setting, and left
        out it would mean 0, copies held level across zones, which holds back BINPACK and
        consolidating scale-in; see
        :func:`~fm_platform.rules.placement.written_az_imbalance`). Zones come from the
        endpoint's subnets:
        an endpoint in a VPC spans the zones of its subnets (give subnets in two or more
        zones), one outside a VPC SageMaker's.
    """

    placement_strategy: Literal["SPREAD", "BINPACK"] = "SPREAD"
    max_az_imbalance: int | None = None

    def check(self, problems: Problems, field: str = "scheduling") -> None:
        """Record every problem of these settings in ``problems``."""
        check_scheduling(
            problems,
            field,
            placement_strategy=self.placement_strategy,
            max_az_imbalance=self.max_az_imbalance,
        )

    def to_property(self) -> _IC.InferenceComponentSchedulingConfigProperty:
        # CloudFormation's schema requires AvailabilityZoneBalance (botocore does not).
        return _IC.InferenceComponentSchedulingConfigProperty(
            placement_strategy=self.placement_strategy,
            availability_zone_balance=_IC.InferenceComponentAvailabilityZoneBalanceProperty(
                enforcement_mode="PERMISSIVE",
                max_imbalance=written_az_imbalance(self.max_az_imbalance),
            ),
        )


def data_cache_property(
    enable_caching: bool | None,
) -> _IC.InferenceComponentDataCacheConfigProperty | None:
    """The ``DataCacheConfig`` of ``enable_caching`` (None: SageMaker's choice)."""
    if enable_caching is None:
        return None
    return _IC.InferenceComponentDataCacheConfigProperty(enable_caching=enable_caching)
