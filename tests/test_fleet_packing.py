"""First Fit Decreasing by dominant share, on accelerators, host memory and CPU."""

from __future__ import annotations

from fm_platform.fleet.deciding.options import Shape as CopyShape
from fm_platform.fleet.placing.packing import instances_needed
from fm_platform.hardware.instances import instance_spec

G5_12XL = instance_spec("ml.g5.12xlarge")  # 4 GPUs, 192 GiB, 48 vCPUs


def test_accelerators_pack_largest_first():
    copies = [(CopyShape(3, 1024, 1), 1), (CopyShape(2, 1024, 1), 2), (CopyShape(1, 1024, 1), 1)]
    assert instances_needed(copies, G5_12XL) == 2  # [3, 1] and [2, 2]


def test_memory_can_be_the_binding_dimension():
    copies = [(CopyShape(1, 100 * 1024, 1), 4)]  # 100 GiB each: one per 192 GiB instance
    assert instances_needed(copies, G5_12XL) == 4


def test_zero_copies_need_no_instance():
    assert instances_needed([(CopyShape(1, 1024, 1), 0)], G5_12XL) == 0


def test_full_instances_leave_the_search_and_still_count():
    copies = [(CopyShape(4, 1024, 1), 3), (CopyShape(1, 1024, 1), 5)]
    assert instances_needed(copies, G5_12XL) == 5  # three full, then [1, 1, 1, 1] and [1]
