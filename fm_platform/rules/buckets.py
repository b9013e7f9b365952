"""Rules of the platform's S3 bucket options.

Source: a lifecycle rule's ``NoncurrentVersionExpiration.NoncurrentDays`` is a positive
whole number of days (CloudFormation resource schema ``AWS::S3::Bucket``,
``NoncurrentVersionExpiration``; Amazon S3 User Guide, "Lifecycle configuration elements").
"""

from __future__ import annotations

from fm_platform.rules.problems import Problems


def check_noncurrent_version_days(problems: Problems, field: str, days: int | None) -> None:
    """At least one day: S3 counts a version's days from when it stops being current."""
    if days is not None and days < 1:
        problems.add(
            field,
            days,
            "must be a whole number of days, at least 1 (counted from when a newer version "
            "replaces the object); leave it unset to keep old versions",
        )
