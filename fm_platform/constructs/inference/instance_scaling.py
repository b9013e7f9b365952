"""Instance-level autoscaling of a SageMaker production variant (Application Auto Scaling).

Used by single-model and multi-model endpoints: the number of instances behind one variant
follows a target number of invocations per instance.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from aws_cdk import Duration, Stack
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from fm_platform.core.options import checked
from fm_platform.rules.problems import Problems
from fm_platform.rules.scaling import check_instance_scaling

# Application Auto Scaling's dimension for the instance count of an endpoint variant.
VARIANT_INSTANCE_COUNT_DIMENSION = "sagemaker:variant:DesiredInstanceCount"

# Application Auto Scaling acts on SageMaker endpoints through this service-linked role
# (created by the service on first use); a role of our own would need its permissions.
SERVICE_LINKED_ROLE_NAME = (
    "aws-service-role/sagemaker.application-autoscaling.amazonaws.com/"
    "AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint"
)


def autoscaling_service_linked_role(scope: Construct, construct_id: str) -> iam.IRole:
    """Application Auto Scaling's SageMaker service-linked role, imported (nothing is
    created) as ``construct_id`` under ``scope``."""
    return iam.Role.from_role_arn(
        scope, construct_id, autoscaling_service_linked_role_arn(scope), mutable=False
    )


def autoscaling_service_linked_role_arn(scope: Construct) -> str:
    """The ARN of Application Auto Scaling's SageMaker service-linked role in ``scope``'s
    stack (its partition and account), built once per stack."""
    stack = Stack.of(scope)
    arn = _SERVICE_LINKED_ROLE_ARNS.get(stack)
    if arn is None:
        arn = stack.format_arn(
            service="iam", region="", resource="role", resource_name=SERVICE_LINKED_ROLE_NAME
        )
        _SERVICE_LINKED_ROLE_ARNS[stack] = arn
    return arn


_SERVICE_LINKED_ROLE_ARNS: weakref.WeakKeyDictionary[Stack, str] = weakref.WeakKeyDictionary()


@dataclass(frozen=True, kw_only=True)
class InstanceScaling:
    """Target tracking of a variant's instance count on invocations per instance (the
    configuration's ``scaling`` keys of single-model and multi-model endpoints too).

    min_instances: the fewest instances; by default 1 (a variant without inference
        components cannot scale to zero).
    max_instances: the most instances.
    target_invocations_per_instance: the invocations per instance per minute that scaling
        keeps the variant near (metric ``SageMakerVariantInvocationsPerInstance``).
    scale_in_cooldown_seconds: the wait after a scale-in before the next; by default 300.
    scale_out_cooldown_seconds: the wait after a scale-out before the next; by default 60.
    """

    min_instances: int = 1
    max_instances: int
    target_invocations_per_instance: float
    scale_in_cooldown_seconds: int = 300
    scale_out_cooldown_seconds: int = 60

    def check(self, problems: Problems, field: str = "scaling") -> None:
        """Add every problem with these settings to ``problems``, fields under ``field``."""
        check_instance_scaling(
            problems,
            field,
            min_instances=self.min_instances,
            max_instances=self.max_instances,
            target_invocations_per_instance=self.target_invocations_per_instance,
            scale_in_cooldown_seconds=self.scale_in_cooldown_seconds,
            scale_out_cooldown_seconds=self.scale_out_cooldown_seconds,
        )


def variant_resource_id(endpoint_name: str, variant_name: str) -> str:
    """The Application Auto Scaling resource id of an endpoint variant."""
    return f"endpoint/{endpoint_name}/variant/{variant_name}"


def add_instance_scaling(
    scope: Construct,
    construct_id: str,
    *,
    endpoint: sagemaker.CfnEndpoint,
    variant_name: str,
    scaling: InstanceScaling,
) -> appscaling.ScalableTarget:
    """Scale ``variant_name`` of ``endpoint`` with ``scaling``.

    Creates a scalable target (construct ID ``construct_id``) acting through Application
    Auto Scaling's SageMaker service-linked role, with a target-tracking policy
    ``Invocations`` under it. Its resource id reads the endpoint's name attribute, so it is
    registered only once the endpoint (and its variant) exists.
    Raises ``ValueError`` listing every problem with ``scaling``.
    """
    problems = Problems("InstanceScaling")
    checked(problems, scaling).check(problems)
    problems.raise_if_any()
    target = appscaling.ScalableTarget(
        scope,
        construct_id,
        service_namespace=appscaling.ServiceNamespace.SAGEMAKER,
        resource_id=variant_resource_id(endpoint.attr_endpoint_name, variant_name),
        scalable_dimension=VARIANT_INSTANCE_COUNT_DIMENSION,
        min_capacity=scaling.min_instances,
        max_capacity=scaling.max_instances,
        role=autoscaling_service_linked_role(scope, f"{construct_id}-ServiceLinkedRole"),
    )
    target.scale_to_track_metric(
        "Invocations",
        predefined_metric=appscaling.PredefinedMetric.SAGEMAKER_VARIANT_INVOCATIONS_PER_INSTANCE,
        target_value=scaling.target_invocations_per_instance,
        scale_in_cooldown=Duration.seconds(scaling.scale_in_cooldown_seconds),
        scale_out_cooldown=Duration.seconds(scaling.scale_out_cooldown_seconds),
    )
    return target
