"""Rules of a whole inference stack: endpoint and model names, and CloudFormation's limit
on outputs."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from fm_platform.rules.problems import Problems, repeats

# S3 general purpose bucket names (Amazon S3 User Guide, "Bucket naming rules"): 3-63
# characters of lowercase letters, digits, dots and hyphens, beginning and ending with a
# letter or digit, not an IP address.
_BUCKET_NAME = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_IP_ADDRESS = re.compile(r"^\d+\.\d+\.\d+\.\d+$")
# arn:<partition>:kms:<region>:<account>:key/<key id> (AWS KMS Developer Guide, "Key ARN").
_KMS_KEY_ARN = re.compile(r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/[A-Za-z0-9-]+$")

#: CloudFormation's quotas per stack ("CloudFormation quotas" in the user guide).
MAX_RESOURCES_PER_STACK = 500
MAX_OUTPUTS_PER_STACK = 200


def check_endpoint_names(problems: Problems, names: Mapping[str, Sequence[str | None]]) -> None:
    """Each endpoint's logical name (by list key: ``{"ic_endpoints": [...]}``) has the
    shape of an endpoint name and is unique across every list."""
    seen: set[str] = set()
    for key, listed in names.items():
        for index, name in enumerate(listed):
            field = f"{key}[{index}].name"
            problems.check_shape(field, name, "EndpointName")
            if name is None:
                continue
            if name in seen:
                problems.add(field, name, "must be unique among the endpoint names")
            seen.add(name)


def check_output_count(problems: Problems, endpoints: int, outputs: int) -> None:
    """The stack's outputs within CloudFormation's limit."""
    if outputs > MAX_OUTPUTS_PER_STACK:
        problems.add(
            "endpoints",
            endpoints,
            f"need {outputs} stack outputs, more than CloudFormation's "
            f"{MAX_OUTPUTS_PER_STACK}; split them across several InferenceStacks",
        )


def check_model_names(problems: Problems, models: Sequence[tuple[str, str | None]]) -> None:
    """Model names (``(field, name)`` pairs) unique in the stack: each names its inference
    component."""
    for field, name, _ in repeats(models):
        problems.add(
            field,
            name,
            "must be unique: it names the inference component, and those are unique per "
            "account and region",
        )


def check_resource_count(problems: Problems, count: int, advice: str) -> None:
    """At most CloudFormation's resources per stack; ``advice`` says how to split."""
    if count > MAX_RESOURCES_PER_STACK:
        problems.add(
            "resources",
            count,
            f"CloudFormation allows at most {MAX_RESOURCES_PER_STACK} per stack; {advice}",
        )


def check_bucket_name(problems: Problems, field: str, name: str | None) -> None:
    """An S3 bucket name: 3-63 lowercase letters, digits, dots and hyphens."""
    if name is None:
        return
    if not _BUCKET_NAME.match(name) or ".." in name or _IP_ADDRESS.match(name):
        problems.add(
            field,
            name,
            "must be an S3 bucket name: 3-63 lowercase letters, digits, dots and hyphens, "
            "beginning and ending with a letter or digit (not an s3:// URI)",
        )


def check_kms_key_arn(problems: Problems, field: str, arn: str | None) -> None:
    """A KMS key ARN, ``arn:aws:kms:<region>:<account>:key/<key id>``."""
    if arn is not None and not _KMS_KEY_ARN.match(arn):
        problems.add(
            field, arn, "must be a KMS key ARN such as arn:aws:kms:us-east-1:111122223333:key/..."
        )
