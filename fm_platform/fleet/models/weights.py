"""Where a catalog model's weights and container come from, and the checks of those keys.

Keys of a model (all optional):

- ``weights_uri``: an ``s3://bucket/key`` URI of a ``model.tar.gz`` (ending in
  ``.tar.gz``), or a prefix ending in ``/`` of uncompressed weights (which rules out a
  serverless endpoint: it reads an archive only), in any bucket; the model's role gets
  read on it.
  ``weights_kms_key_arn``: the KMS key that encrypts it (the role gets decrypt). By default
  the fleet's artifacts bucket, at ``<model name>/`` as before.
- ``hub``: a Hugging Face hub id (``org/name``) the container downloads at start, with
  ``revision`` (a commit or tag; without one the latest is taken: a warning);
  ``hub_token_secret``: the ARN of a Secrets Manager secret holding the token of a gated
  model. A hub model needs the internet: its endpoint is not network-isolated, and the
  planner gives hub models endpoints of their own, so models with weights in S3 stay
  isolated (the plan's endpoint says ``network_isolation``). A ``dedicated`` model runs
  network-isolated: it takes its weights from S3 (``weights_uri``), never from the hub; a
  ``group`` shares one endpoint: hub models and models with weights in S3 do not mix.
- ``container``: a container family (:func:`fm_platform.containers.images.families`); by
  default the task's (:data:`fm_platform.containers.images.TASK_CONTAINERS`). ``image``: an
  explicit image URI instead (an ECR image must be in the plan's region).
- ``environment``: variables passed to the container as they are (they win over the
  planned settings of the same name), within SageMaker's limits (at most 100, each name
  and value at most 1024 bytes, 32 KB together).
- ``base_model`` + ``adapter``: a LoRA adapter (``adapter``: the ``s3://`` URI of one
  ``.tar.gz`` archive, :mod:`fm_platform.rules.adapters`) served on the inference
  component of the catalog model ``base_model``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from fm_platform.containers.images import CUSTOM, FAMILY_TASKS, default_family, families
from fm_platform.rules.adapters import adapter_artifact_problem
from fm_platform.rules.model_container import check_environment, check_model_data_url
from fm_platform.rules.problems import Problems

# s3://<bucket>/<key>: bucket names are 3-63 lowercase letters, digits, dots, hyphens
# (Amazon S3 User Guide, "Bucket naming rules").
_S3_URI = re.compile(r"^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/.*)?$")
# arn:<partition>:secretsmanager:<region>:<account>:secret:<name> (Secrets Manager ARNs).
_SECRET_ARN = re.compile(r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$")
_ARN_SERVICE = re.compile(r"^arn:aws[a-z-]*:(?P<service>[a-z0-9-]+):")
# Hugging Face repository ids: [org/]name of letters, digits, -, _, .
_HUB_ID = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9._-]*/)?[A-Za-z0-9][A-Za-z0-9._-]*$")
# <account>.dkr.ecr.<region>.amazonaws.com[.cn]/<repository>[:tag|@digest]
_ECR_REGION = re.compile(r"^\d{12}\.dkr\.ecr(?:-fips)?\.(?P<region>[a-z0-9-]+)\.amazonaws\.com")
_KMS_KEY_ARN = re.compile(r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/[A-Za-z0-9-]+$")


#: Why an isolated model cannot download from the hub, and what to do.
_HUB_ISOLATED = (
    "a dedicated model runs network-isolated and makes no outbound call, so it cannot "
    "download from the hub: put the weights in S3 and give weights_uri instead of hub "
    "(e.g. `huggingface-cli download <hub id> --revision <commit> --local-dir <dir>`, then "
    "`aws s3 cp --recursive <dir> s3://<bucket>/<path>/`)"
)


class _Recorder(Protocol):
    def add(self, field: str, value: object, allowed: str) -> None: ...

    def check_choice(self, field: str, value: object, choices: Sequence[object]) -> None: ...


def is_s3_uri(value: str) -> bool:
    return bool(_S3_URI.match(value))


def container_of(entry: Any, task: str) -> str:
    """The container family ``entry`` runs: its ``container``, :data:`CUSTOM` for an
    explicit ``image``, else the default of its ``task`` and ``framework``."""
    if entry.image is not None:
        return CUSTOM
    return entry.container or default_family(task, entry.framework)


def check_sources(problems: Problems, path: str, m: Any, task: str | None) -> list[str]:
    """Record every problem of ``m``'s weights, container and adapter keys under ``path``
    (``task``: the model's task, its own or its architecture's; None when unknown);
    return its warnings."""
    _check_weights_uri(problems, path, m)
    warnings = _check_hub(problems, path, m)
    _check_hub_token(problems, path, m)
    _check_container(problems, path, m, task)
    if m.environment is not None and not _is_environment(m.environment):
        problems.add(f"{path}.environment", m.environment, "must map names to strings")
    elif m.environment is not None:
        check_environment(problems, f"{path}.environment", m.environment)
    _check_adapter(problems, path, m)
    return warnings


def _check_weights_uri(problems: Problems, path: str, m: Any) -> None:
    """Weights in S3 (an archive or a prefix), and the KMS key that encrypts them (only
    with weights to decrypt)."""
    if m.weights_uri is not None and not is_s3_uri(m.weights_uri):
        problems.add(f"{path}.weights_uri", m.weights_uri, "must be an s3://bucket/key URI")
    elif m.weights_uri is not None:
        check_model_data_url(problems, f"{path}.weights_uri", m.weights_uri)
    if m.weights_kms_key_arn is None:
        return
    if not _KMS_KEY_ARN.match(m.weights_kms_key_arn):
        problems.add(
            f"{path}.weights_kms_key_arn",
            m.weights_kms_key_arn,
            "must be a KMS key ARN such as arn:aws:kms:us-east-1:111122223333:key/...",
        )
    if m.weights_uri is None and m.adapter is None:
        problems.add(f"{path}.weights_kms_key_arn", m.weights_kms_key_arn, "needs weights_uri")


def _check_hub(problems: _Recorder, path: str, m: Any) -> list[str]:
    """A valid hub id, neither beside ``weights_uri`` nor on a network-isolated (dedicated)
    model; returns the warning of a hub id without revision."""
    if m.hub is None:
        return []
    if not _HUB_ID.match(m.hub):
        problems.add(f"{path}.hub", m.hub, "must be a Hugging Face id such as org/name")
    if m.weights_uri is not None:
        problems.add(f"{path}.hub", m.hub, "conflicts with weights_uri: give one of them")
    if m.isolation == "dedicated":
        problems.add(f"{path}.hub", m.hub, f"conflicts with isolation: dedicated; {_HUB_ISOLATED}")
    if m.revision is not None:
        return []
    return [
        f"{path}.hub={m.hub!r}: no revision; the container downloads whatever the "
        "hub holds when it starts (set revision to a commit to pin it)"
    ]


def _check_hub_token(problems: _Recorder, path: str, m: Any) -> None:
    """``revision`` and ``hub_token_secret`` only with ``hub``; the token in a Secrets
    Manager secret."""
    for key in ("revision", "hub_token_secret"):
        if getattr(m, key) is not None and m.hub is None:
            problems.add(f"{path}.{key}", getattr(m, key), "needs hub")
    secret = m.hub_token_secret
    if secret is not None and not _SECRET_ARN.match(secret):
        match = _ARN_SERVICE.match(secret)
        service = f" (an ARN of {match['service']})" if match else ""
        problems.add(
            f"{path}.hub_token_secret",
            secret,
            f"must be a Secrets Manager secret ARN such as "
            f"arn:aws:secretsmanager:us-east-1:111122223333:secret:hf-token{service}",
        )


def _check_container(problems: _Recorder, path: str, m: Any, task: str | None) -> None:
    """A known container family (or an image instead) that serves the model's task and
    dtype."""
    if m.container is not None:
        problems.check_choice(f"{path}.container", m.container, families())
        if m.image is not None:
            problems.add(f"{path}.image", m.image, "conflicts with container: give one of them")
    if m.container in FAMILY_TASKS and task is not None:
        served = FAMILY_TASKS[m.container]
        if task not in served:
            source = "" if m.task is not None else f" (architecture {m.architecture}'s task)"
            problems.add(
                f"{path}.container",
                m.container,
                f"serves {', '.join(served)}, not task {task}{source}: name a container "
                f"for it ({', '.join(sorted(_families_for(task)))}) or leave container unset",
            )
    if m.container == "tgi" and m.dtype == "fp32":
        # text-generation-launcher's --dtype takes float16 or bfloat16 only
        problems.add(
            f"{path}.dtype", m.dtype, "container tgi runs float16 or bfloat16: use fp16 or bf16"
        )


def _check_adapter(problems: _Recorder, path: str, m: Any) -> None:
    """A LoRA adapter's archive, named together with its base model."""
    if m.adapter is not None and (problem := adapter_artifact_problem(m.adapter)) is not None:
        problems.add(f"{path}.adapter", m.adapter, problem)
    if (m.adapter is None) != (m.base_model is None):
        given, missing = ("adapter", "base_model") if m.adapter else ("base_model", "adapter")
        problems.add(
            f"{path}.{given}", getattr(m, given), f"needs {missing} (a LoRA adapter names both)"
        )


def _families_for(task: str) -> set[str]:
    """The container families that serve ``task``."""
    return {family for family, tasks in FAMILY_TASKS.items() if task in tasks}


def _is_environment(value: Any) -> bool:
    return isinstance(value, Mapping) and all(
        isinstance(k, str) and isinstance(v, str | int | float) and not isinstance(v, bool)
        for k, v in value.items()
    )


def check_image_region(problems: _Recorder, path: str, image: str, region: str) -> None:
    """An ECR ``image`` must be in ``region``: SageMaker pulls from the endpoint's region."""
    match = _ECR_REGION.match(image)
    if match and match["region"] != region:
        problems.add(
            f"{path}.image",
            image,
            f"is in {match['region']}; the fleet deploys to {region}: use the image's copy "
            f"in {region}",
        )


def check_group_sources(problems: _Recorder, models: Sequence[Any]) -> None:
    """A ``group`` shares one endpoint, network-isolated unless a model on it downloads
    from the hub: hub models and models with weights in S3 are not grouped together."""
    members: dict[str, list[tuple[int, Any]]] = {}
    for index, m in enumerate(models):
        if m.group is not None and m.base_model is None:
            members.setdefault(m.group, []).append((index, m))
    for group, found in members.items():
        hub = [(i, m) for i, m in found if m.hub is not None]
        stored = [m.name for _, m in found if m.hub is None]
        if hub and stored:
            problems.add(
                f"models[{hub[0][0]}].group",
                group,
                f"puts hub models ({', '.join(m.name for _, m in hub)}) with models whose "
                f"weights are in S3 ({', '.join(stored)}) on one endpoint, which would then "
                "not be network-isolated: give the hub models weights_uri, or another group",
            )


def check_adapters(problems: _Recorder, models: Sequence[Any]) -> None:
    """Each adapter's base is a catalog model that is no adapter itself and can be on an
    Inference Components endpoint (not dedicated, not batch, not multi-model)."""
    by_name = {m.name: m for m in models}
    for index, m in enumerate(models):
        if m.base_model is None or m.adapter is None:
            continue
        field = f"models[{index}].base_model"
        base = by_name.get(m.base_model)
        if base is None:
            problems.add(field, m.base_model, "is no model of the catalog")
            continue
        why = None
        if base.base_model is not None:
            why = "is an adapter itself"
        elif base.isolation == "dedicated":
            why = "is dedicated (a single-model endpoint)"
        elif base.latency_class == "batch":
            why = "is batch (an asynchronous endpoint)"
        elif base.framework == "pytorch":
            why = "runs on a multi-model endpoint (framework: pytorch)"
        elif base.image is not None or base.container not in (None, "lmi"):
            why = "does not run the lmi container, which serves LoRA adapters"
        if why is not None:
            problems.add(
                field,
                m.base_model,
                f"{why}; adapters are served only on an Inference Components base",
            )
