"""Rules of the optional home file system: FSx for OpenZFS, Single-AZ 1, SSD."""

from __future__ import annotations

from fm_platform.rules.cluster import check_managed_mount_path
from fm_platform.rules.problems import Problems

# Amazon FSx for OpenZFS User Guide: "Managing storage capacity" (SSD storage of 64 GiB to
# 512 TiB) and "Amazon FSx for OpenZFS performance" (the throughput capacities a Single-AZ 1
# file system offers, MB/s). Not in botocore's FSx model.
OPENZFS_CAPACITY_GIB = (64, 524_288)
OPENZFS_SINGLE_AZ_1_THROUGHPUT_MBPS = (64, 128, 256, 512, 1024, 2048, 3072, 4096)


def check_home_file_system(
    problems: Problems,
    prefix: str,
    *,
    storage_capacity_gib: int | None,
    throughput_capacity_mbps: int | None,
    mount_path: str | None,
) -> None:
    """Storage within :data:`OPENZFS_CAPACITY_GIB`, a throughput of
    :data:`OPENZFS_SINGLE_AZ_1_THROUGHPUT_MBPS`, a mount path HyperPod accepts; each field
    named after ``prefix`` (e.g. ``home_file_system.``)."""
    problems.check_range(
        f"{prefix}storage_capacity_gib", storage_capacity_gib, *OPENZFS_CAPACITY_GIB
    )
    problems.check_choice(
        f"{prefix}throughput_capacity_mbps",
        throughput_capacity_mbps,
        OPENZFS_SINGLE_AZ_1_THROUGHPUT_MBPS,
    )
    check_managed_mount_path(problems, f"{prefix}mount_path", mount_path)
