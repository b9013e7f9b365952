"""First Fit Decreasing by dominant share, on accelerators, host memory and CPU."""

from __future__ import annotations

from fm_platform.fleet.packing import instances_needed
from fm_platform.fleet.sizing import CopyShape, copy_shape
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


def test_a_copy_too_big_for_the_type_does_not_fit():
    assert copy_shape(200.0, G5_12XL) is None  # 200 GiB > 4 x 22.4 GiB
    assert copy_shape(30.0, G5_12XL).accelerators == 2  # two A10Gs, tensor parallel
