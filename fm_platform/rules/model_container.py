"""Rules of a model's container definition (botocore ``ContainerDefinition``): where its
artifacts are, and its environment.

Artifacts: a single model's ``ModelDataUrl`` "must point to a single gzip compressed tar
archive (.tar.gz suffix)"; uncompressed artifacts are read through ``ModelDataSource``,
whose ``S3Prefix`` "always ends with a forward slash (/)". So a URL is a ``.tar.gz`` or a
prefix ending in ``/``. And "you cannot use ModelDataSource in conjunction with ...
SageMaker serverless endpoints": a serverless model reads a ``.tar.gz`` only.

Environment (``Environment``, botocore ``EnvironmentMap``): at most 100 variables, each name
matching ``EnvironmentKey`` (``[a-zA-Z_][a-zA-Z0-9_]*``); "The maximum length of each key
and value in the Environment map is 1024 bytes. The maximum length of all keys and values
in the map, combined, is 32 KB."
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from fm_platform.rules.problems import Problems
from fm_platform.rules.sagemaker_model import shape_rule

#: The suffix of a compressed model archive (``model.tar.gz``).
ARCHIVE_SUFFIX = ".tar.gz"
#: The bytes each key and each value may take, and all of them together (32 KB).
ENVIRONMENT_ENTRY_BYTES = 1024
ENVIRONMENT_TOTAL_BYTES = 32 * 1024
#: How much of a long name a message shows.
_SHOWN_NAME = 40


def is_prefix(url: str) -> bool:
    """True when ``url`` is a prefix of uncompressed artifacts (it ends in ``/``)."""
    return url.endswith("/")


def check_model_data_url(problems: Problems, field: str, url: str | None) -> None:
    """A model's artifacts: a ``.tar.gz`` archive or a prefix ending in ``/``."""
    if url is None or is_prefix(url) or url.endswith(ARCHIVE_SUFFIX):
        return
    problems.add(
        field,
        url,
        "must name a model.tar.gz (ending in .tar.gz; botocore ModelDataUrl) or a prefix of "
        "uncompressed files ending in / (ModelDataSource S3Prefix): pack the files with "
        "tar czf model.tar.gz -C <dir> . or end the URL with /",
    )


def serverless_artifacts_problem(url: str | None) -> str | None:
    """Why a serverless endpoint cannot read the artifacts at ``url``, or None."""
    if url is None or not is_prefix(url):
        return None
    return (
        "is a prefix of uncompressed files, which a serverless endpoint cannot read (botocore "
        "ContainerDefinition.ModelDataSource: not with SageMaker serverless endpoints): "
        "pack them into a model.tar.gz (tar czf model.tar.gz -C <dir> .), upload it and "
        "name it instead"
    )


def check_serverless_artifacts(problems: Problems, field: str, url: str | None) -> None:
    """A serverless model's artifacts: a ``.tar.gz`` (``ModelDataUrl``), never a prefix."""
    problem = serverless_artifacts_problem(url)
    if problem is not None:
        problems.add(field, url, problem)


def check_environment(
    problems: Problems, field: str, environment: Mapping[str, object | None] | None
) -> None:
    """A container's environment within botocore's limits, each problem named by its key:
    at most 100 variables, names matching ``EnvironmentKey``, each name and value at most
    1024 bytes and all of them at most 32 KB together. A value of None (known only at
    deploy time) counts as a variable, its length unknown."""
    if not environment:
        return
    most = shape_rule("EnvironmentMap").max
    if most is not None and len(environment) > most:
        problems.add(
            field,
            f"{len(environment)} variables",
            f"at most {most} (botocore EnvironmentMap): drop some, or move settings into a "
            "file of the model's artifacts",
        )
    pattern = shape_rule("EnvironmentKey").pattern or ""
    total = 0
    for key, value in environment.items():
        where = f"{field}.{key if len(key) <= _SHOWN_NAME else key[:_SHOWN_NAME] + '...'}"
        if not re.fullmatch(pattern, key):
            problems.add(
                where,
                key[:_SHOWN_NAME],
                f"a variable name must match {pattern} (botocore EnvironmentKey): letters, "
                "digits and _, not starting with a digit",
            )
        total += _checked_bytes(problems, where, "name", key)
        if value is not None:
            total += _checked_bytes(problems, where, "value", str(value))
    if total > ENVIRONMENT_TOTAL_BYTES:
        problems.add(
            field,
            f"{total} bytes of names and values",
            f"at most {ENVIRONMENT_TOTAL_BYTES} bytes (32 KB) together (botocore "
            "ContainerDefinition.Environment): shorten or drop variables",
        )


def _checked_bytes(problems: Problems, field: str, what: str, text: str) -> int:
    """The UTF-8 length of ``text``, a problem under ``field`` when it exceeds 1024 bytes."""
    size = len(text.encode("utf-8"))
    if size > ENVIRONMENT_ENTRY_BYTES:
        problems.add(
            field,
            f"{what} of {size} bytes",
            f"at most {ENVIRONMENT_ENTRY_BYTES} bytes per name and per value (botocore "
            "ContainerDefinition.Environment): shorten it, or move it into a file of the "
            "model's artifacts",
        )
    return size
