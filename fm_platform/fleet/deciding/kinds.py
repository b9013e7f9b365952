"""The hosting options a model can get, as data: what each kind of endpoint allows, how well
it serves each fitness concern, what its stack resources cost and what its scaling target
counts. The planner, the cost model and the stacks look kinds up here by name; a new kind
is one more :class:`Kind` plus its sizing rule in :mod:`fm_platform.fleet.placing.endpoints` and
its stack mapping.

``fit`` (how well the kind serves each fitness axis, 0-1; ``cost`` is computed from the
candidates' prices instead) follows the hosting guidance's comparison: a single-model
endpoint isolates a model on its own instances and adds no neighbours or cold starts, but
scales per instance and hosts one model; Inference Components give each model its own
accelerators, memory and container, scale per model (to zero) and pack hundreds of models,
with neighbours on the instances (and a cold start when scaling from zero); a multi-model
endpoint shares one container among thousands of small models loaded on demand (cold
starts, no isolation).

The asynchronous endpoint (SageMaker asynchronous inference) is this package's policy on
the same scale: it hosts one model on instances of its own (model size 1.0, isolation 1.0,
as a single-model endpoint); it answers through S3, never within the call (latency 0.0:
it serves only models of ``latency_class: batch``, whose latency score is 0 unless they
give ``latency_p50_ms``); and it scales on its queue's backlog, down to zero and out under
a burst, holding requests in the queue instead of refusing them (scalability 1.0, as
Inference Components, whose copies scale per model).

The serverless endpoint (SageMaker Serverless Inference, :mod:`fm_platform.fleet.sizing.serverless`)
is this package's policy too: it runs one small CPU model in 1-6 GB of memory (model size
0.2: no GPUs, nothing larger), with cold starts after idle periods (latency 0.3, as a
multi-model endpoint, which loads models on demand); each invocation gets compute of its
own (isolation 1.0); SageMaker scales it per request from zero, up to 200 concurrent
invocations per endpoint within an account quota shared by every serverless endpoint of
the region (scalability 0.6). It has no instance type: its options are memory sizes, its
cost is per request (nothing while idle), and it never keeps a copy warm (no provisioned
concurrency is planned).

Request limits per kind, from the SageMaker Developer Guide's "Supported features" of each
inference option (https://docs.aws.amazon.com/sagemaker/latest/dg/model-deploy-feature-matrix.html,
as archived in June 2023 in awsdocs/amazon-sagemaker-developer-guide,
doc_source/model-deploy-feature-matrix.md): a real-time request carries up to 6 MB and is
answered within 60 s; an asynchronous request up to 1 GB, processed for up to an hour; a
serverless request up to 4 MB ("Invoke a serverless endpoint", the same guide), answered
within the real-time limit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from fm_platform.rules.asynchronous import check_async_instance_type
from fm_platform.rules.problems import Problems

IC, SINGLE, MULTI, ASYNC = "inference-components", "single-model", "multi-model", "asynchronous"
SERVERLESS = "serverless"

#: The latency class of work whose callers do not wait for the answer.
BATCH = "batch"
#: Real-time requests: up to 6 MB, answered within 60 s (module docstring).
REALTIME_PAYLOAD_MB, REALTIME_REQUEST_S = 6.0, 60.0
#: Asynchronous requests: up to 1 GB, processed for up to an hour (module docstring).
ASYNC_PAYLOAD_MB, ASYNC_REQUEST_S = 1024.0, 3600.0
#: Serverless requests and responses: up to 4 MB (module docstring).
SERVERLESS_PAYLOAD_MB = 4.0
#: The customer-managed key of an endpoint config on a type whose storage is an EBS volume
#: (every kind; local NVMe storage is hardware-encrypted and gets none), measured on the
#: constructs: :func:`fm_platform.constructs.inference.storage_encryption.storage_key_applies`.
VOLUME_KEY_RESOURCES = 1
#: A LoRA adapter on an Inference Components base is one resource (its
#: ``AWS::SageMaker::InferenceComponent``; its weights' key is imported, not created), and a
#: base with adapters adds one output listing them (``fm_platform/stacks/fleet.py``).
ADAPTER_RESOURCES, ADAPTER_BASE_OUTPUTS = 1, 1


@dataclass(frozen=True)
class Kind:
    """One hosting option.

    shared: several models per endpoint. whole_instance: a copy takes a whole instance
    (instance-level scaling). accelerated / cpu: instance types it may use (CPU only for
    models that do not generate tokens). scale_to_zero: a model's copies may scale to zero.
    data_cache: its models may cache their artifacts and image on each instance
    (``DataCacheConfig``, :mod:`fm_platform.rules.caching`). instance_pools: its endpoint
    construct takes fallback instance types (``InstancePools``,
    :mod:`fm_platform.fleet.placing.pools`).
    max_params_b: the largest model it suits (None: any). cold_start: models must tolerate
    cold starts. fit: fitness per axis (module docstring). scaling_metric: what the
    scaling target of the plan counts. limit_models: an endpoint holds at most the planner's
    ``max_models_per_endpoint`` (each model is CloudFormation resources; a multi-model
    endpoint's models are S3 objects, not resources). Resources and outputs per endpoint
    and per model are the stack budget estimates, measured on the constructs in SageMaker's
    network (the fleet's stacks have no VPC; in one, each endpoint adds a security group),
    without the volume key of EBS-backed types (:data:`VOLUME_KEY_RESOURCES`, added per
    endpoint on such types); ``stack_resources`` and ``stack_outputs`` are added once per
    stack holding the kind (what its endpoints share).
    max_payload_mb, max_request_s: the largest request body (MB) and the longest
    processing (seconds) the kind takes (module docstring). batch_only: hosts only models
    of ``latency_class: batch``. queued: requests wait in a queue, so the endpoint scales to
    zero for every model, without refusing requests. type_rule: the pure rule an instance
    type must pass for the kind (None: every hosting type). preference: among equal
    utilities the lowest wins (:mod:`fm_platform.fleet.deciding.fitness`). serverless: no instances
    (:mod:`fm_platform.fleet.sizing.serverless`): its options are memory sizes, a copy is one
    concurrent invocation, it is paid per request and always scales to zero.
    """

    name: str
    prefix: str
    fit: Mapping[str, float]
    scaling_metric: str
    endpoint_resources: int
    endpoint_outputs: int
    shared: bool = False
    whole_instance: bool = True
    accelerated: bool = True
    cpu: bool = True
    scale_to_zero: bool = False
    data_cache: bool = False
    instance_pools: bool = False
    max_params_b: float | None = None
    cold_start: bool = False
    limit_models: bool = True
    model_resources: int = 0
    model_resources_zero: int = 0
    stack_resources: int = 0
    stack_outputs: int = 0
    max_payload_mb: float = REALTIME_PAYLOAD_MB
    max_request_s: float = REALTIME_REQUEST_S
    batch_only: bool = False
    queued: bool = False
    type_rule: Callable[[Problems, str, str | None], None] | None = None
    preference: int = 3
    serverless: bool = False

    @property
    def packs_devices(self) -> bool:
        """Models share instances with copies of whole devices each (Inference Components):
        instances follow the devices the copies take."""
        return self.shared and not self.whole_instance

    @property
    def pools_memory(self) -> bool:
        """Models share every instance's memory, loaded on demand (multi-model endpoints):
        instances follow the models' memory and their traffic."""
        return self.shared and self.whole_instance

    def refuses(self, batch: bool, payload_mb: float | None) -> str | None:
        """Why the kind cannot host a model of that latency class (``batch``) and request
        body (``payload_mb``, MB; None: small), or None."""
        if self.batch_only and not batch:
            return (
                f"for latency_class: {BATCH} only (requests are queued and answered through "
                "S3; a caller that waits needs a real-time endpoint)"
            )
        if payload_mb is not None and payload_mb > self.max_payload_mb:
            return (
                f"payload_mb {payload_mb:g} exceeds the {self.max_payload_mb:g} MB a request "
                "body may have"
            )
        return None

    def type_problem(self, instance_type: str) -> str | None:
        """Why the kind cannot run on ``instance_type`` (its ``type_rule``), or None."""
        if self.type_rule is None:
            return None
        problems = Problems("instance type")
        self.type_rule(problems, "instance_type", instance_type)
        return problems.messages[0].split(": ", 1)[1] if problems else None


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind(
            name=SINGLE,
            prefix="sme",
            fit={"model_size": 1.0, "latency": 1.0, "isolation": 1.0, "scalability": 0.3},
            scaling_metric="invocations per instance per minute",
            endpoint_resources=8,
            endpoint_outputs=1,
            instance_pools=True,
        ),
        Kind(
            name=IC,
            prefix="ic",
            preference=1,
            shared=True,
            whole_instance=False,
            cpu=False,
            scale_to_zero=True,
            data_cache=True,
            instance_pools=True,
            fit={"model_size": 1.0, "latency": 0.8, "isolation": 0.5, "scalability": 1.0},
            scaling_metric="invocations per copy per minute",
            endpoint_resources=5,
            endpoint_outputs=2,
            model_resources=5,
            model_resources_zero=7,
        ),
        Kind(
            name=MULTI,
            prefix="mme",
            preference=2,
            shared=True,
            accelerated=False,
            # The hosting guidance: multi-model endpoints suit models under ~1B parameters.
            max_params_b=1.0,
            cold_start=True,
            fit={"model_size": 0.5, "latency": 0.3, "isolation": 0.0, "scalability": 0.8},
            scaling_metric="invocations per instance per minute",
            limit_models=False,
            endpoint_resources=8,
            endpoint_outputs=1,
        ),
        Kind(
            name=ASYNC,
            prefix="async",
            preference=0,
            scale_to_zero=True,
            fit={"model_size": 1.0, "latency": 0.0, "isolation": 1.0, "scalability": 1.0},
            scaling_metric="queued and in-process requests per instance "
            "(ApproximateBacklogSizePerInstance)",
            # Model, endpoint config, endpoint, execution role and its policy, two topics
            # and their policies, scalable target, backlog and wake-up policies, wake-up
            # alarm, health alarm (errors, oldest request); outputs: its name, input, output
            # and failure locations. Per stack: the shared AsyncInference bucket (bucket,
            # policy, access-log bucket and policy, key) and the AsyncEndpoints output
            # (fm_platform/stacks/inference.py).
            endpoint_resources=14,
            endpoint_outputs=4,
            stack_resources=5,
            stack_outputs=1,
            max_payload_mb=ASYNC_PAYLOAD_MB,
            max_request_s=ASYNC_REQUEST_S,
            batch_only=True,
            queued=True,
            type_rule=check_async_instance_type,
        ),
        Kind(
            name=SERVERLESS,
            prefix="sls",
            preference=4,
            accelerated=False,
            serverless=True,
            cold_start=True,
            fit={"model_size": 0.2, "latency": 0.3, "isolation": 1.0, "scalability": 0.6},
            scaling_metric="requests per minute of one concurrent invocation (SageMaker "
            "scales the invocations up to MaxConcurrency)",
            # Model, endpoint config, endpoint, execution role and its policy, health alarm
            # (and the endpoint config's key, VOLUME_KEY_RESOURCES: it encrypts the copy of
            # the image SageMaker keeps); output: its name.
            endpoint_resources=6,
            endpoint_outputs=1,
            max_payload_mb=SERVERLESS_PAYLOAD_MB,
        ),
    )
}
#: An Inference Components model that scales to zero serves its first request after a
#: scale-out (minutes): its latency fit drops to this.
SCALE_TO_ZERO_LATENCY_FIT = 0.4


def min_copies(kind: str, to_zero: bool) -> int:
    """A model's fewest copies on ``kind``: 0 on a queued or serverless kind, 0 on a kind
    that may scale to zero when the model does (``to_zero``), else 1."""
    k = KINDS[kind]
    return 0 if k.queued or k.serverless or (k.scale_to_zero and to_zero) else 1
