"""Container families and their images per region and hardware kind.

``images.json`` (this package) maps each family to an ECR repository and tag per hardware
kind (``gpu``: NVIDIA CUDA, ``neuron``: Inferentia/Trainium, ``cpu``) and the account that
publishes it in each region. It is built from the SageMaker Python SDK's image table
(aws/sagemaker-python-sdk ``image_uri_config/*.json``, Apache-2.0) by
``scripts/regenerate_container_images.py``; the file records the source commit and date.
Hugging Face images (TGI, TEI, the transformers toolkit) are published from other accounts
than 763104351884 in many regions, so each region keeps its own account.

A family without an image for a hardware kind, or without one in the plan's region, makes
every type of that kind no candidate for its models (:func:`container_problem`, which the
planner asks), with the reason, rather than failing when the stacks are synthesized.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

DATA_FILE = "images.json"
#: Hardware kinds by the accelerator an instance type carries (``InstanceSpec.accelerator``).
HARDWARE_KINDS = {"nvidia-gpu": "gpu", "inferentia": "neuron", "trainium": "neuron", "none": "cpu"}
#: Every task a catalog model may have, with its default container family.
TASK_CONTAINERS = {
    "text-generation": "lmi",
    "embedding": "tei",
    "reranking": "tei",
    "classification": "huggingface",
    "image-generation": "stabilityai",
    "speech-to-text": "huggingface",
}
#: The tasks each family serves (``custom``: an explicit image serves what it says).
FAMILY_TASKS = {
    "lmi": ("text-generation",),
    "tgi": ("text-generation",),
    "tei": ("embedding", "reranking", "classification"),
    "huggingface": ("classification", "embedding", "speech-to-text", "image-generation"),
    "pytorch": tuple(TASK_CONTAINERS),
    "stabilityai": ("image-generation",),
}
#: The family a catalog model with an explicit ``image`` is said to run (any hardware).
CUSTOM = "custom"
#: The families whose container serves a multi-model endpoint, loading and unloading the
#: models under its prefix: of this table, PyTorch's (TorchServe) only. SageMaker Developer
#: Guide, "Supported algorithms, frameworks, and instances for multi-model endpoints": on
#: CPU instances the XGBoost, k-NN, Linear Learner, RCF, TensorFlow, scikit-learn, MXNet
#: and PyTorch containers; on GPU instances Triton only. TEI, TGI, LMI and the Hugging
#: Face toolkit serve one model each.
MULTI_MODEL_FAMILIES = ("pytorch",)


@dataclass(frozen=True)
class Image:
    """One family's image for one hardware kind: ``repository``, ``tag``, the framework
    ``version`` it packages and the publishing ``accounts`` by region."""

    family: str
    hardware: str
    repository: str
    tag: str
    version: str
    accounts: dict[str, str]

    def uri(self, region: str) -> str | None:
        """The image's URI in ``region``, or None when it is not published there."""
        account = self.accounts.get(region)
        if account is None:
            return None
        suffix = ".cn" if region.startswith("cn-") else ""
        return f"{account}.dkr.ecr.{region}.amazonaws.com{suffix}/{self.repository}:{self.tag}"


@cache
def _data() -> dict[str, Any]:
    return json.loads(resources.files(__package__).joinpath(DATA_FILE).read_text())


def source() -> str:
    """Where the image table comes from, and when it was read."""
    data = _data()
    return f"{data['source']}, retrieved {data['retrieved']}"


def families() -> tuple[str, ...]:
    """Every container family a catalog may name."""
    return tuple(sorted(_data()["families"]))


def hardware_kind(accelerator: str) -> str:
    """``gpu``, ``neuron`` or ``cpu`` for an instance type's accelerator."""
    return HARDWARE_KINDS.get(accelerator, "gpu")


@cache
def image(family: str, hardware: str) -> Image | None:
    """``family``'s image for ``hardware``, or None when it has none (or is unknown)."""
    record = _data()["families"].get(family, {}).get("images", {}).get(hardware)
    if record is None:
        return None
    return Image(
        family=family,
        hardware=hardware,
        repository=record["repository"],
        tag=record["tag"],
        version=record["version"],
        accounts=record["accounts"],
    )


def hardware_of(family: str) -> tuple[str, ...]:
    """The hardware kinds ``family`` has an image for."""
    return tuple(_data()["families"].get(family, {}).get("images", {}))


def container_problem(family: str, accelerator: str, region: str | None = None) -> str | None:
    """Why a model running ``family`` cannot use a type with ``accelerator`` (in
    ``region``, when given: SageMaker pulls the image from the endpoint's region), or None.
    The planner's candidate filter: an explicit image (:data:`CUSTOM`) runs anywhere."""
    if family == CUSTOM:
        return None
    kind = hardware_kind(accelerator)
    found = image(family, kind)
    if found is None:
        return (
            f"container {family} has no {kind} image (it has "
            f"{', '.join(hardware_of(family))}); name another container or an image"
        )
    if region is not None and region not in found.accounts:
        return (
            f"container {family} has no {kind} image in {region} (published in "
            f"{len(found.accounts)} other regions); name another container or an image"
        )
    return None


def default_family(task: str, framework: str = "lmi") -> str:
    """The container a model of ``task`` runs when the catalog names none: the task's
    default, except that ``framework: pytorch`` models (multi-model endpoints) keep
    TorchServe."""
    if framework == "pytorch":
        return "pytorch"
    return TASK_CONTAINERS.get(task, "lmi")
