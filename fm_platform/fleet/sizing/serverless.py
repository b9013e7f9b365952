"""Serverless endpoints as the planner sees them: which memory sizes a model fits, how fast
one invocation serves a request, what a request costs, how many concurrent invocations its
peak needs and how long its cold start takes.

Limits (SageMaker Developer Guide, "Serverless Inference", "Invoke a serverless endpoint",
awsdocs/amazon-sagemaker-developer-guide ``doc_source/serverless-endpoints.md`` and
``serverless-endpoints-invoke.md`` as of September 2022; botocore
``ProductionVariantServerlessConfig``):

- memory 1024-6144 MB in 1 GB steps, vCPUs proportional to it, no GPUs ("Feature
  exclusions"); a CPU model only, and no text generation (as on CPU instances);
- container images up to 10 GB: the large-model containers (LMI, TGI: 10-20 GB,
  :mod:`fm_platform.fleet.sizing.coldstart`) have no CPU image anyway, so the container's CPU
  image rule keeps them out; a custom image's size is the catalog's to check;
- request and response bodies up to 4 MB; the container answers ``/invocations`` within
  1 minute;
- after a cold start "the model must download and the server must respond successfully to
  ``/ping`` within 3 minutes" (:data:`PING_LIMIT_S`);
- the model's artifacts a ``model.tar.gz`` (``ModelDataUrl``): botocore's
  ``ContainerDefinition.ModelDataSource`` cannot be used "in conjunction with ... SageMaker
  serverless endpoints", so a catalog ``weights_uri`` that is a prefix of uncompressed
  files rules the kind out (:func:`fm_platform.rules.model_container.is_prefix`); without
  one, the model reads ``<model>/model.tar.gz`` of the fleet's artifacts bucket;
- ``MaxConcurrency`` 1-200 per endpoint; the endpoints of an account share 1000 concurrent
  invocations per region in us-east-1 and seven other regions, 500 elsewhere, and a region
  holds at most 50 serverless endpoints (:data:`ACCOUNT_NOTE`: quotas the plan reports,
  not ones it packs against).

Fit: one invocation holds the weights in fp32 (as a copy on a CPU instance) plus the
container's own memory, :data:`CONTAINER_MIB` (an estimate: the model server and its
framework; AWS says only that "the memory size should be at least as large as your model
size").

Speed: each invocation serves one request at a time (AWS recommends "only one worker in
the container and only loading one copy of the model"). Compute: memory / 1769 MB vCPUs
(an estimate: Serverless Inference "integrates with AWS Lambda", and Lambda gives a
function "the equivalent of one vCPU" at 1,769 MB, Lambda Developer Guide, "Configure
Lambda function memory"), each an m5 vCPU's FP32 peak x the CPU efficiency of
:mod:`fm_platform.fleet.sizing.performance`. A catalog ``rpm_per_copy`` is one invocation's rate
(a request takes 60 s / rpm).

Cost per request (:func:`request_usd`): the request's seconds x the memory size's price per
second, plus the data processed (the request body in and a response as large out, an
assumption; nothing without ``payload_mb``) x the price per GB, from
``fm_platform/hardware/serverless_prices.json``. Nothing is billed between requests.

Concurrency: Little's law, concurrent invocations at peak = arrival rate x time in the
system = peak_rpm / 60 x seconds per request, which is the peak rpm over one invocation's
rpm (an option's ``load``); the endpoint's ``MaxConcurrency`` is that, rounded up (at least
1: its copies at peak), and more than 200 rules the kind out (:func:`concurrency_problem`).

Cold start: no instance to launch; the image pull, the weights download and their load
(:func:`fm_platform.fleet.sizing.coldstart.cold_start`, an estimate); over :data:`PING_LIMIT_S`
rules the kind out.
"""

from __future__ import annotations

from fm_platform.fleet.sizing.coldstart import cold_start
from fm_platform.fleet.sizing.needs import Needs
from fm_platform.fleet.sizing.performance import (
    CPU_EFFICIENCY,
    Performance,
    encode_estimate,
    override,
)
from fm_platform.hardware.devices import family_vcpu_gflops
from fm_platform.hardware.instances import InstanceSpec, instance_spec
from fm_platform.hardware.serverless_prices import ServerlessPrices
from fm_platform.rules.serverless import max_concurrency_limit

#: The container's own memory beside the weights (MiB), an estimate (module docstring).
CONTAINER_MIB = 512
#: Memory per vCPU's worth of compute (MB), Lambda's figure (module docstring).
MB_PER_VCPU = 1769
#: The CPU family whose vCPU stands for a serverless one (an estimate).
VCPU_FAMILY = "m5"
#: A cold start must download the model and answer /ping within this (seconds).
PING_LIMIT_S = 180.0
#: The account quotas serverless endpoints share (module docstring).
ACCOUNT_NOTE = (
    "the account's serverless endpoints share 1000 concurrent invocations per region "
    "(500 in smaller regions) and at most 50 endpoints per region"
)
#: Why a model on a serverless endpoint scales to zero, whatever its priorities.
ZERO_REASON = (
    "scales to zero: serverless compute runs only while it serves requests (a cold start "
    "after idle periods)"
)
TYPE_PREFIX = "serverless-"
BYTES_PER_MB = 1024**2


def memory_type(memory_mib: int) -> str:
    """The plan's name of a serverless memory size where a type would be: ``serverless-2048MB``."""
    return f"{TYPE_PREFIX}{memory_mib}MB"


def type_memory(name: str) -> int | None:
    """The memory size (MiB) a name of :func:`memory_type` stands for; None for a type."""
    if not name.startswith(TYPE_PREFIX):
        return None
    return int(name.removeprefix(TYPE_PREFIX).removesuffix("MB"))


def memory_spec(name: str) -> InstanceSpec:
    """What one invocation of the memory size ``name`` (:func:`memory_type`) offers, as an
    instance spec: its memory, whole vCPUs (at least 1) and no accelerator."""
    memory = type_memory(name)
    if memory is None:
        raise ValueError(f"{name!r} names no serverless memory size")
    return InstanceSpec(name, max(1, round(vcpus(memory))), memory, "none", 0, 0, False, 0)


def spec_of(name: str) -> InstanceSpec:
    """The hardware of the instance type ``name``, or of one invocation of the memory size
    it names (:func:`memory_spec`)."""
    return memory_spec(name) if type_memory(name) is not None else instance_spec(name)


def vcpus(memory_mib: int) -> float:
    """The vCPUs' worth of compute an invocation of ``memory_mib`` gets (an estimate)."""
    return memory_mib / MB_PER_VCPU


def performance(needs: Needs, memory_mib: int) -> Performance | None:
    """One invocation's throughput (one request at a time): the catalog's
    ``rpm_per_copy``, else the compute-bound estimate; None without CPU figures."""
    if needs.rpm_override is not None:
        perf = override(needs, lambda _concurrency: True)
        detail = "rpm_per_copy, one request at a time per invocation"
        return Performance(perf.rpm, 1, None, 60_000 / perf.rpm, perf.source, detail)
    gflops = family_vcpu_gflops(VCPU_FAMILY)
    if gflops is None:
        return None
    cores = vcpus(memory_mib)
    what = (
        f"{cores:.2f} vCPUs of {memory_mib} MB ({MB_PER_VCPU} MB each, as Lambda; "
        f"{gflops:g} GFLOPS each as {VCPU_FAMILY} x {CPU_EFFICIENCY})"
    )
    return encode_estimate(needs, cores * gflops * 1e9 * CPU_EFFICIENCY, what)


def request_seconds(perf: Performance) -> float:
    """How long one invocation works on a request."""
    return perf.latency_ms / 1000 if perf.latency_ms is not None else 60 / perf.rpm


def processed_bytes(needs: Needs) -> float:
    """Data processed per request: the body in and a response as large out (module
    docstring); 0 without ``payload_mb``."""
    return 2 * needs.payload_mb * BYTES_PER_MB if needs.payload_mb else 0.0


def request_usd(
    prices: ServerlessPrices, needs: Needs, memory_mib: int, perf: Performance
) -> float:
    """What one request costs on ``memory_mib`` (module docstring)."""
    return prices.request_usd(memory_mib, request_seconds(perf), processed_bytes(needs))


def concurrency_problem(needed: int) -> str | None:
    """Why ``needed`` concurrent invocations do not fit one serverless endpoint, or None."""
    limit = max_concurrency_limit()
    if needed <= limit:
        return None
    return (
        f"its peak needs {needed} concurrent invocations (peak rpm / 60 x seconds per "
        f"request), a serverless endpoint allows at most {limit}"
    )


def cold_start_problem(needs: Needs) -> str | None:
    """Why the model's cold start (estimated) misses the 3 minutes SageMaker allows, or
    None."""
    seconds, parts = cold_start(needs, False)
    if seconds <= PING_LIMIT_S:
        return None
    return (
        f"its cold start (about {seconds:,.0f} s: {parts}; estimated) exceeds the "
        f"{PING_LIMIT_S:g} s a serverless endpoint allows to download the model and answer /ping"
    )
