"""The hosting options a model can get, as data: what each kind of endpoint allows, how well
it serves each fitness concern, what its stack resources cost and what its scaling target
counts. The planner, the cost model and the stacks look kinds up here by name; a new kind
(e.g. asynchronous inference) is one more :class:`Kind` plus its sizing rule in
:mod:`fm_platform.fleet.endpoints` and its stack mapping.

``fit`` (how well the kind serves each fitness axis, 0-1; ``cost`` is computed from the
candidates' prices instead) follows the hosting guidance's comparison: a single-model
endpoint isolates a model on its own instances and adds no neighbours or cold starts, but
scales per instance and hosts one model; Inference Components give each model its own
accelerators, memory and container, scale per model (to zero) and pack hundreds of models,
with neighbours on the instances (and a cold start when scaling from zero); a multi-model
endpoint shares one container among thousands of small models loaded on demand (cold
starts, no isolation).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

IC, SINGLE, MULTI = "inference-components", "single-model", "multi-model"


@dataclass(frozen=True)
class Kind:
    """One hosting option.

    shared: several models per endpoint. whole_instance: a copy takes a whole instance
    (instance-level scaling). accelerated / cpu: instance types it may use (CPU only for
    models that do not generate tokens). scale_to_zero: a model's copies may scale to zero.
    max_params_b: the largest model it suits (None: any). cold_start: models must tolerate
    cold starts. fit: fitness per axis (module docstring). scaling_metric: what the
    scaling target of the plan counts. limit_models: an endpoint holds at most the planner's
    ``max_models_per_endpoint`` (each model is CloudFormation resources; a multi-model
    endpoint's models are S3 objects, not resources). Resources and outputs per endpoint
    and per model are the stack budget estimates (measured on the constructs).
    """

    name: str
    prefix: str
    shared: bool
    whole_instance: bool
    accelerated: bool
    cpu: bool
    scale_to_zero: bool
    max_params_b: float | None
    cold_start: bool
    fit: Mapping[str, float]
    scaling_metric: str
    limit_models: bool
    endpoint_resources: int
    endpoint_outputs: int
    model_resources: int
    model_resources_zero: int


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind(
            name=SINGLE,
            prefix="sme",
            shared=False,
            whole_instance=True,
            accelerated=True,
            cpu=True,
            scale_to_zero=False,
            max_params_b=None,
            cold_start=False,
            fit={"model_size": 1.0, "latency": 1.0, "isolation": 1.0, "scalability": 0.3},
            scaling_metric="invocations per instance per minute",
            limit_models=True,
            endpoint_resources=7,
            endpoint_outputs=1,
            model_resources=0,
            model_resources_zero=0,
        ),
        Kind(
            name=IC,
            prefix="ic",
            shared=True,
            whole_instance=False,
            accelerated=True,
            cpu=False,
            scale_to_zero=True,
            max_params_b=None,
            cold_start=False,
            fit={"model_size": 1.0, "latency": 0.8, "isolation": 0.5, "scalability": 1.0},
            scaling_metric="invocations per copy per minute",
            limit_models=True,
            endpoint_resources=4,
            endpoint_outputs=2,
            model_resources=4,
            model_resources_zero=6,
        ),
        Kind(
            name=MULTI,
            prefix="mme",
            shared=True,
            whole_instance=True,
            accelerated=False,
            cpu=True,
            scale_to_zero=False,
            # The hosting guidance: multi-model endpoints suit models under ~1B parameters.
            max_params_b=1.0,
            cold_start=True,
            fit={"model_size": 0.5, "latency": 0.3, "isolation": 0.0, "scalability": 0.8},
            scaling_metric="invocations per instance per minute",
            limit_models=False,
            endpoint_resources=8,
            endpoint_outputs=1,
            model_resources=0,
            model_resources_zero=0,
        ),
    )
}
#: An Inference Components model that scales to zero serves its first request after a
#: scale-out (minutes): its latency fit drops to this.
SCALE_TO_ZERO_LATENCY_FIT = 0.4
