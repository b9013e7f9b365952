"""Instance counts and scaling targets of an endpoint, per kind.

- Inference Components: instances at minimum and maximum scale hold every model's minimum
  and maximum copies (first-fit-decreasing, :mod:`fm_platform.fleet.placing.packing`); each model
  scales its copies on invocations per copy, target = its ``rpm_per_copy``.
- Single-model: one copy per instance; 1 instance at minimum, the model's peak copies at
  maximum; target = invocations per instance per minute = ``rpm_per_copy``.
- Multi-model: the models' memory (the working set, every model loaded) over the share of
  an instance's memory that holds models at minimum; the peak traffic over one instance's
  capacity at maximum; target = invocations per instance per minute at capacity = sum of
  peak rpm / sum of (peak rpm / rpm one instance serves of that model) (without traffic:
  the mean of the models' rpm per instance). The stack's
  scaling policy uses this same target, so the planned maximum is what scaling reaches at
  peak.
- Asynchronous: one copy per instance; 0 instances at minimum (the queue holds requests
  while none runs), the model's peak copies at maximum (peak rpm over one instance's rpm);
  target = queued and in-process requests per instance (``ApproximateBacklogSizePerInstance``,
  which counts the requests "currently being processed or yet to be processed", SageMaker
  Developer Guide, "Monitor asynchronous endpoint",
  https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference-monitor.html) = the
  concurrency its throughput is planned at, which is also the endpoint's maximum
  concurrent invocations per instance: at that backlog every instance processes its
  planned concurrency and nothing waits, and a longer queue adds instances, up to the
  peak's.
- Serverless: no instances; 0 concurrent invocations at minimum, ``MaxConcurrency`` = the
  model's copies at peak (Little's law, :mod:`fm_platform.fleet.sizing.serverless`) at maximum; no
  scaling target (SageMaker scales the invocations).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from fm_platform.fleet.deciding.kinds import ASYNC, IC, MULTI, SERVERLESS, SINGLE
from fm_platform.fleet.deciding.options import MME_MEMORY_SHARE, Shape
from fm_platform.fleet.outputs.plan import EndpointPlan, Placement
from fm_platform.fleet.placing.packing import instances_needed
from fm_platform.hardware.instances import InstanceSpec


def _shape(p: Placement) -> Shape:
    return Shape(p.accelerators, p.memory_mib, p.cpu_cores)


def size_inference_components(e: EndpointPlan, ps: list[Placement], spec: InstanceSpec) -> None:
    e.min_instances = instances_needed(((_shape(p), p.min_copies) for p in ps), spec)
    e.max_instances = max(1, instances_needed(((_shape(p), p.max_copies) for p in ps), spec))
    e.scaling_target = None


def size_single(e: EndpointPlan, ps: list[Placement], spec: InstanceSpec) -> None:
    (p,) = ps
    e.min_instances = 1
    e.max_instances = max(1, p.max_copies)
    e.scaling_target = round(p.rpm_per_copy, 2)


def load(p: Placement) -> float:
    """Instances a multi-model endpoint's model keeps busy at its peak."""
    return p.peak_rpm / p.rpm_per_copy if p.rpm_per_copy else 0.0


def size_multi(e: EndpointPlan, ps: list[Placement], spec: InstanceSpec) -> None:
    usable = spec.memory_mib * MME_MEMORY_SHARE
    e.min_instances = max(1, math.ceil(sum(p.memory_mib for p in ps) / usable - 1e-9))
    busy = sum(load(p) for p in ps)
    e.max_instances = max(e.min_instances, math.ceil(busy - 1e-9))
    peak = sum(p.peak_rpm for p in ps)
    capacity = peak / busy if busy else sum(p.rpm_per_copy for p in ps) / len(ps)
    e.scaling_target = round(capacity, 2)


def size_async(e: EndpointPlan, ps: list[Placement], spec: InstanceSpec) -> None:
    (p,) = ps
    e.min_instances = 0
    e.max_instances = max(1, p.max_copies)
    e.scaling_target = float(p.concurrency)


def size_serverless(e: EndpointPlan, ps: list[Placement], spec: InstanceSpec) -> None:
    (p,) = ps
    e.min_instances = 0
    e.max_instances = max(1, p.max_copies)
    e.scaling_target = None


SIZERS: dict[str, Callable[[EndpointPlan, list[Placement], InstanceSpec], None]] = {
    IC: size_inference_components,
    SINGLE: size_single,
    MULTI: size_multi,
    ASYNC: size_async,
    SERVERLESS: size_serverless,
}
