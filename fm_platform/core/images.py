"""Where an ECR image lives, and the synth warning for a model image from another region
than its stack's. The images themselves come from one table
(:mod:`fm_platform.containers.images`), which the constructs and the planner read."""

from __future__ import annotations

import re

from aws_cdk import Annotations, Stack
from constructs import Construct

from fm_platform.core.tokens import is_unresolved

# <account>.dkr.ecr[-fips].<region>.amazonaws.com[.cn]/<repository>[:tag|@digest]
_ECR_REGION = re.compile(r"^\d{12}\.dkr\.ecr(?:-fips)?\.(?P<region>[a-z0-9-]+)\.amazonaws\.com")


def image_region(image: str) -> str | None:
    """The region of an ECR image URI, or None when ``image`` is not one with a literal
    region (another registry, or a token)."""
    if is_unresolved(image):
        return None
    match = _ECR_REGION.match(image)
    return match.group("region") if match else None


def warn_if_image_from_another_region(scope: Construct, image: str) -> None:
    """Add a synth warning on ``scope`` when ``image`` is an ECR image in a region other
    than its stack's (known only when the stack has an explicit region): SageMaker pulls
    images from the endpoint's region, so the model would fail to create."""
    region = image_region(image)
    if region is None:
        return
    stack_region = Stack.of(scope).region
    if is_unresolved(stack_region) or region == stack_region:
        return
    Annotations.of(scope).add_warning_v2(
        "fm_platform:imageFromAnotherRegion",
        f"image {image} is in {region}, but the stack deploys to {stack_region}: SageMaker "
        "pulls model images from the endpoint's region; use the image's copy in "
        f"{stack_region} (a ModelContainer without an image runs the image table's copy "
        "in the stack's region)",
    )
