"""Rules of the shared file system (FSx for Lustre PERSISTENT_2) and its S3 link."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import botocore.session

from fm_platform.rules.problems import Problems

# PERSISTENT_2 (SSD) limits. Not in botocore's FSx model; source: Amazon FSx for Lustre
# User Guide, "Deployment options" / "Storage capacity" and "Throughput capacity".
PERSISTENT_2_SMALL_CAPACITIES_GIB = (1200, 2400)
PERSISTENT_2_CAPACITY_STEP_GIB = 2400
PERSISTENT_2_THROUGHPUT_MBPS_PER_TIB = (125, 250, 500, 1000)


@cache
def data_repository_event_types() -> tuple[str, ...]:
    """The auto import/export event types FSx accepts (botocore's ``EventType`` enum)."""
    model = botocore.session.get_session().get_service_model("fsx")
    return tuple(model.shape_for("EventType").enum)


def check_storage_capacity(problems: Problems, field: str, capacity_gib: int | None) -> None:
    """1200, 2400 or a positive multiple of 2400 GiB."""
    if capacity_gib is None or capacity_gib in PERSISTENT_2_SMALL_CAPACITIES_GIB:
        return
    if capacity_gib <= 0 or capacity_gib % PERSISTENT_2_CAPACITY_STEP_GIB != 0:
        problems.add(
            field,
            capacity_gib,
            "PERSISTENT_2 SSD storage must be 1200, 2400, or a multiple of 2400 GiB",
        )


def check_throughput(problems: Problems, field: str, mbps_per_tib: int | None) -> None:
    """125, 250, 500 or 1000 MB/s per TiB."""
    problems.check_choice(field, mbps_per_tib, PERSISTENT_2_THROUGHPUT_MBPS_PER_TIB)


def check_absolute_path(problems: Problems, field: str, path: str | None, example: str) -> None:
    """An absolute path such as ``example``."""
    if path is not None and not path.startswith("/"):
        problems.add(field, path, f"must be an absolute path like {example}")


def check_data_repository(
    problems: Problems,
    field: str,
    *,
    file_system_path: str | None,
    bucket_prefix: str | None,
    auto_import_events: Sequence[str] | None,
    auto_export_events: Sequence[str] | None,
) -> None:
    """A data repository association's path, prefix and event types."""
    check_absolute_path(problems, f"{field}.file_system_path", file_system_path, "/s3")
    if bucket_prefix is not None and bucket_prefix.startswith("/"):
        problems.add(
            f"{field}.bucket_prefix",
            bucket_prefix,
            "must not start with '/' (write it as in an S3 key, e.g. datasets/)",
        )
    events = data_repository_event_types()
    for name, chosen in (
        ("auto_import_events", auto_import_events),
        ("auto_export_events", auto_export_events),
    ):
        for event in chosen or ():
            problems.check_choice(f"{field}.{name}", event, events)
