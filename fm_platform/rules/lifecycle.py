"""Rules of HyperPod lifecycle scripts: the assets folder, the S3 prefix and the
provisioning parameters of classic Slurm mode."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fm_platform.rules.problems import Problems

ON_CREATE_SCRIPT = "on_create.sh"
PARAMETERS_FILE = "provisioning_parameters.json"
REQUIRED_PARAMETERS = ("controller_group", "worker_groups")
# S3's "safe" key characters, in slash-separated segments without empty ones.
_PREFIX = re.compile(r"^[A-Za-z0-9!_.*'()-]+(/[A-Za-z0-9!_.*'()-]+)*$")
PREFIX_MAX_CHARS = 900


def check_assets_path(problems: Problems, field: str, path: str | None) -> None:
    """An existing folder holding ``on_create.sh`` and no ``provisioning_parameters.json``
    (which is written from the instance groups)."""
    if path is None:
        return
    assets = Path(path)
    if not assets.is_dir():
        problems.add(field, str(assets), "must be an existing folder")
        return
    if not (assets / ON_CREATE_SCRIPT).is_file():
        problems.add(field, str(assets), f"must contain {ON_CREATE_SCRIPT}")
    if (assets / PARAMETERS_FILE).exists():
        problems.add(
            field,
            str(assets),
            f"must not contain {PARAMETERS_FILE}: it is written from provisioning_parameters",
        )


def check_prefix(problems: Problems, field: str, prefix: str | None) -> None:
    """An S3 key prefix of safe characters, without leading, trailing or double slash."""
    if prefix is not None and (not _PREFIX.match(prefix) or len(prefix) > PREFIX_MAX_CHARS):
        problems.add(
            field,
            prefix,
            "must be an S3 key prefix of letters, digits and !_.*'()- in '/'-separated "
            f"parts, without leading, trailing or double slash, at most "
            f"{PREFIX_MAX_CHARS} characters",
        )


def check_provisioning_parameters(
    problems: Problems, field: str, parameters: Mapping[str, Any] | None
) -> None:
    """The keys classic Slurm mode needs; worker groups with a name and a partition."""
    if parameters is None:
        return
    for key in REQUIRED_PARAMETERS:
        if key not in parameters:
            problems.add(f"{field}.{key}", None, "is required for classic Slurm mode")
    workers = parameters.get("worker_groups")
    if not isinstance(workers, list | tuple):
        return
    for index, worker in enumerate(workers):
        if not isinstance(worker, Mapping) or not {"instance_group_name", "partition_name"} <= set(
            worker
        ):
            problems.add(
                f"{field}.worker_groups[{index}]",
                worker,
                "must be a mapping with instance_group_name and partition_name",
            )
