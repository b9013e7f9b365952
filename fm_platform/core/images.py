"""AWS Deep Learning Container images: the default model images, in the stack's region.

The images live in account 763104351884 in most commercial regions (AWS Deep Learning
Containers, "Available images"); other regions publish them from other accounts: pass your
own image URI there.
"""

from __future__ import annotations

import re

from aws_cdk import Annotations
from constructs import Construct

from fm_platform.core.scopes import region_of, stack_of
from fm_platform.core.tokens import is_unresolved

#: The AWS account publishing Deep Learning Containers in most commercial regions.
DLC_ACCOUNT = "763104351884"
#: Large Model Inference (DJL Serving with vLLM), LMI v15.
LMI_IMAGE = "djl-inference:0.33.0-lmi15.0.0-cu128"
#: PyTorch inference with TorchServe, which supports multi-model endpoints.
PYTORCH_CPU_IMAGE = "pytorch-inference:2.6.0-cpu-py312-ubuntu22.04-sagemaker"
PYTORCH_GPU_IMAGE = "pytorch-inference:2.6.0-gpu-py312-cu124-ubuntu22.04-sagemaker"

# <account>.dkr.ecr[-fips].<region>.amazonaws.com[.cn]/<repository>[:tag|@digest]
_ECR_REGION = re.compile(r"^\d{12}\.dkr\.ecr(?:-fips)?\.(?P<region>[a-z0-9-]+)\.amazonaws\.com")


def deep_learning_container_image(scope: Construct, repository_and_tag: str = LMI_IMAGE) -> str:
    """The URI of a Deep Learning Container image (by default the LMI image for LLMs) in
    ``scope``'s stack's region; a token when the stack is environment-agnostic."""
    region = region_of(stack_of(scope))
    return f"{DLC_ACCOUNT}.dkr.ecr.{region}.amazonaws.com/{repository_and_tag}"


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
    stack_region = region_of(stack_of(scope))
    if is_unresolved(stack_region) or region == stack_region:
        return
    Annotations.of(scope).add_warning_v2(
        "fm_platform:imageFromAnotherRegion",
        f"image {image} is in {region}, but the stack deploys to {stack_region}: SageMaker "
        "pulls model images from the endpoint's region; use the image's copy in "
        f"{stack_region} (e.g. deep_learning_container_image(scope))",
    )
