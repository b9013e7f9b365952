"""The rule of a LoRA adapter's weights, shared by the catalog's ``adapter`` key and
:class:`~fm_platform.constructs.inference.adapter_component.AdapterComponentProps`.

Source: botocore's SageMaker model, ``InferenceComponentContainerSpecification.ArtifactUrl``:
"This path must point to a single gzip compressed tar archive (.tar.gz suffix)." A prefix
of loose files is not one: the adapter component's creation fails, and with it its stack.
"""

from __future__ import annotations

import re

from fm_platform.rules.problems import Problems

# s3://<bucket>/<key>.tar.gz: bucket names are 3-63 lowercase letters, digits, dots,
# hyphens (Amazon S3 User Guide, "Bucket naming rules").
_ARCHIVE = re.compile(r"^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/.*[^/]\.tar\.gz$")

#: What to do with an adapter that is a directory of files.
PACKAGE_ADAPTER = (
    "package the adapter's directory (adapter_config.json and its weights) as one archive "
    "with `tar -czf adapter.tar.gz -C <adapter dir> .`, upload it with "
    "`aws s3 cp adapter.tar.gz s3://<bucket>/<path>/adapter.tar.gz` and give that URI"
)


def adapter_artifact_problem(url: str) -> str | None:
    """Why ``url`` cannot be an adapter's weights, or None: it must name one ``.tar.gz``
    object in S3 (module docstring)."""
    if _ARCHIVE.match(url):
        return None
    return (
        "must be the s3:// URI of one gzip-compressed tar archive ending in .tar.gz "
        f"(SageMaker loads an adapter from a single archive, not a prefix): {PACKAGE_ADAPTER}"
    )


def check_adapter_artifact(problems: Problems, field: str, url: str | None) -> None:
    """Record in ``problems`` why ``url`` cannot be an adapter's weights (None: unset or
    known only at deploy time)."""
    if url is None:
        return
    problem = adapter_artifact_problem(url)
    if problem is not None:
        problems.add(field, url, problem)
