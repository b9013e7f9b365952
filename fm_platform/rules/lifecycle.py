"""Rules of HyperPod lifecycle scripts: the assets folder, the S3 prefix, the provisioning
parameters of lifecycle Slurm mode, the node setup of managed Slurm mode and the shared
users.

The node setup and the shared users follow the contract of the scripts in
``fm_platform/lifecycle_assets`` (``provision.py``: ``fmp_node_setup.json``;
``node_users.py``: ``shared_users.txt``)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fm_platform.rules.problems import Problems

ON_CREATE_SCRIPT = "on_create.sh"
PARAMETERS_FILE = "provisioning_parameters.json"
NODE_SETUP_FILE = "fmp_node_setup.json"
USERS_FILE = "shared_users.txt"
NODE_SETUP_VERSION = 1
NODE_SETUP_REQUIRED = ("version", "mode", "fsx_mount_path")
NODE_SETUP_OPTIONAL = ("fsx_dns_name", "fsx_mountname", "home_mount_path")
#: useradd(8), CAVEATS: the portable user name form and its 32-character limit.
USER_NAME = re.compile(r"[a-z_][a-z0-9_-]{0,31}")
#: login.defs(5)'s UID_MIN and UID_MAX when the node's /etc/login.defs sets none; the node
#: checks against its own range again.
UID_RANGE = (1000, 60000)
REQUIRED_PARAMETERS = ("controller_group", "worker_groups")
# S3's "safe" key characters, in slash-separated segments without empty ones.
_PREFIX = re.compile(r"^[A-Za-z0-9!_.*'()-]+(/[A-Za-z0-9!_.*'()-]+)*$")
PREFIX_MAX_CHARS = 900


def check_assets_path(
    problems: Problems, field: str, path: str | None, *, shared_users: bool = False
) -> None:
    """An existing folder holding ``on_create.sh`` and neither ``provisioning_parameters.json``
    nor ``fmp_node_setup.json`` (written from the cluster's settings); with
    ``shared_users``, no ``shared_users.txt`` either (written from them)."""
    if path is None:
        return
    assets = Path(path)
    if not assets.is_dir():
        problems.add(field, str(assets), "must be an existing folder")
        return
    if not (assets / ON_CREATE_SCRIPT).is_file():
        problems.add(field, str(assets), f"must contain {ON_CREATE_SCRIPT}")
    written = {
        PARAMETERS_FILE: "provisioning_parameters",
        NODE_SETUP_FILE: "the node setup (managed Slurm mode)",
    }
    if shared_users:
        written[USERS_FILE] = "shared_users"
    for name, source in written.items():
        if (assets / name).exists():
            problems.add(
                field, str(assets), f"must not contain {name}: it is written from {source}"
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
    """The keys lifecycle Slurm mode needs; worker groups with a name and a partition."""
    if parameters is None:
        return
    for key in REQUIRED_PARAMETERS:
        if key not in parameters:
            problems.add(f"{field}.{key}", None, "is required in lifecycle Slurm mode")
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


def check_node_setup(problems: Problems, field: str, setup: Mapping[str, Any] | None) -> None:
    """``fmp_node_setup.json`` as ``provision.py`` reads it: exactly the keys ``version`` (1),
    ``mode`` ("managed"), ``fsx_mount_path`` and optionally ``home_mount_path`` (absolute,
    normalized paths) and ``fsx_dns_name`` with ``fsx_mountname`` (together). Values that
    are ``None`` (known only at deploy time) are not checked."""
    if setup is None:
        return
    for key in NODE_SETUP_REQUIRED:
        if key not in setup:
            problems.add(f"{field}.{key}", None, "is required in managed Slurm mode")
    for key in sorted(set(setup) - set(NODE_SETUP_REQUIRED) - set(NODE_SETUP_OPTIONAL)):
        problems.add(
            f"{field}.{key}",
            setup[key],
            "not a key of the node setup; allowed: "
            + ", ".join((*NODE_SETUP_REQUIRED, *NODE_SETUP_OPTIONAL)),
        )
    if setup.get("version") not in (None, NODE_SETUP_VERSION):
        problems.add(f"{field}.version", setup["version"], f"must be {NODE_SETUP_VERSION}")
    if setup.get("mode") not in (None, "managed"):
        problems.add(f"{field}.mode", setup["mode"], "must be 'managed'")
    for key in ("fsx_mount_path", "home_mount_path"):
        value = setup.get(key)
        if value is not None and not _normalized_absolute(value):
            problems.add(f"{field}.{key}", value, "must be an absolute, normalized path like /fsx")
    if ("fsx_dns_name" in setup) != ("fsx_mountname" in setup):
        problems.add(
            f"{field}.fsx_dns_name/fsx_mountname",
            sorted(set(setup) & {"fsx_dns_name", "fsx_mountname"}),
            "give both (the scripts then mount FSx themselves) or neither",
        )


def check_shared_users(
    problems: Problems,
    field: str,
    users: Sequence[tuple[str | None, int | None, str | None]] | None,
) -> None:
    """Users given as ``(name, uid, home)``: names of useradd's portable form (at most 32
    characters), uids within :data:`UID_RANGE`, both unique, homes absolute and
    normalized when given."""
    if users is None:
        return
    for index, (name, uid, home) in enumerate(users):
        where = f"{field}[{index}]"
        if name is not None and not USER_NAME.fullmatch(name):
            problems.add(
                f"{where}.name",
                name,
                "must be a user name of lowercase letters, digits, '_' and '-', starting with "
                "a letter or '_', at most 32 characters (useradd's portable form)",
            )
        problems.check_range(f"{where}.uid", uid, *UID_RANGE)
        if home is not None and not _normalized_absolute(home):
            problems.add(f"{where}.home", home, "must be an absolute, normalized path")
    problems.check_unique(f"{field}[*].name", (name for name, _, _ in users))
    problems.check_unique(
        f"{field}[*].uid", (str(uid) if uid is not None else None for _, uid, _ in users)
    )


def _normalized_absolute(value: object) -> bool:
    return (
        isinstance(value, str)
        and value.startswith("/")
        and value != "/"
        and posixpath.normpath(value) == value
    )
