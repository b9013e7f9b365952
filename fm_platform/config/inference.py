"""The inference side of the app's configuration: endpoints and their models, each item
holding the options of its construct.

An :class:`InferenceConfig` holds only what it is given: by default no endpoint. The demo
fleet (the hosting guidance's examples, one per hosting option) lives in the app's
configuration file, ``fmp-config.json``, under ``inference``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fm_platform.constructs.inference.async_endpoint import AsyncEndpointOptions
from fm_platform.constructs.inference.component_endpoint import InferenceComponentEndpointOptions
from fm_platform.constructs.inference.inference_component import InferenceComponentModelOptions
from fm_platform.constructs.inference.multi_model_endpoint import MultiModelEndpointOptions
from fm_platform.constructs.inference.serverless_endpoint import ServerlessEndpointOptions
from fm_platform.constructs.inference.single_model_endpoint import (
    SingleModelEndpointOptions,
)
from fm_platform.constructs.observability.async_alarm import AsyncEndpointAlarmOptions
from fm_platform.constructs.observability.endpoint_alarm import (
    COMPONENT_ENDPOINT_ALARMS,
    EndpointAlarmOptions,
)
from fm_platform.constructs.observability.model_alarm import ModelAlarmOptions
from fm_platform.constructs.observability.serverless_alarm import ServerlessEndpointAlarmOptions
from fm_platform.rules.asynchronous import check_unique_prefixes
from fm_platform.rules.capacity import CopyDemand, check_min_copies_fit
from fm_platform.rules.components import check_component_name_free, component_name_for
from fm_platform.rules.inference import (
    check_bucket_name,
    check_endpoint_names,
    check_kms_key_arn,
    check_model_names,
    check_output_count,
)
from fm_platform.rules.problems import Problems
from fm_platform.rules.replacement import component_endpoint_key
from fm_platform.rules.types import read
from fm_platform.rules.variant_features import check_counted_frequency

#: Outputs besides the per-endpoint ones: EndpointNames, InvokeExample, NotificationTopicArn.
FIXED_OUTPUTS = 3
#: Outputs of an asynchronous endpoint besides its name: AsyncInput, AsyncOutput and
#: AsyncFailure<Name>; with any, AsyncEndpoints lists them.
ASYNC_OUTPUTS_PER_ENDPOINT = 3
#: Key prefix of the asynchronous endpoints in their stack's bucket: ``async/<name>/``.
ASYNC_PREFIX = "async"


@dataclass(frozen=True, kw_only=True)
class InferenceComponentModelConfig(InferenceComponentModelOptions):
    """A model on an Inference Components endpoint: the fields of
    :class:`InferenceComponentModelOptions`, and

    alarms: the model's alarm (:class:`ModelAlarmOptions`); by default its defaults.
    """

    alarms: ModelAlarmOptions = field(default_factory=ModelAlarmOptions)


@dataclass(frozen=True, kw_only=True)
class InferenceComponentEndpointConfig(InferenceComponentEndpointOptions):
    """An Inference Components endpoint and its models: the fields of
    :class:`InferenceComponentEndpointOptions`, and

    name: a stable logical name; construct IDs derive from it (renaming replaces the
        endpoint).
    models: the models placed on it (:class:`InferenceComponentModelConfig`).
    alarms: the endpoint's alarm (:class:`EndpointAlarmOptions`); by default its instances
        at their maximum (errors and latency are watched per model).
    """

    name: str
    models: tuple[InferenceComponentModelConfig, ...]
    alarms: EndpointAlarmOptions = COMPONENT_ENDPOINT_ALARMS


@dataclass(frozen=True, kw_only=True)
class SingleModelEndpointConfig(SingleModelEndpointOptions):
    """A single-model endpoint: the fields of :class:`SingleModelEndpointOptions`, and

    name: a stable logical name; construct IDs derive from it.
    model_name: by default ``name``.
    alarms: the endpoint's alarm (:class:`EndpointAlarmOptions`); by default its defaults.
    """

    name: str
    model_name: str | None = None  # type: ignore[assignment]
    alarms: EndpointAlarmOptions = field(default_factory=EndpointAlarmOptions)

    def __post_init__(self) -> None:
        if self.model_name is None:
            object.__setattr__(self, "model_name", self.name)


@dataclass(frozen=True, kw_only=True)
class MultiModelEndpointConfig(MultiModelEndpointOptions):
    """A multi-model endpoint: the fields of :class:`MultiModelEndpointOptions`, and

    name: a stable logical name; construct IDs derive from it.
    models_s3_prefix: by default ``s3://<stack bucket>/models/<name>/``.
    alarms: the endpoint's alarm (:class:`EndpointAlarmOptions`); by default its defaults.
    """

    name: str
    models_s3_prefix: str | None = None  # type: ignore[assignment]
    alarms: EndpointAlarmOptions = field(default_factory=EndpointAlarmOptions)


@dataclass(frozen=True, kw_only=True)
class ServerlessEndpointConfig(ServerlessEndpointOptions):
    """A serverless endpoint: the fields of :class:`ServerlessEndpointOptions`, and

    name: a stable logical name; construct IDs derive from it.
    model_name: by default ``name``.
    alarms: the endpoint's alarm (:class:`ServerlessEndpointAlarmOptions`); by default its
        defaults.
    """

    name: str
    model_name: str | None = None  # type: ignore[assignment]
    alarms: ServerlessEndpointAlarmOptions = field(default_factory=ServerlessEndpointAlarmOptions)

    def __post_init__(self) -> None:
        if self.model_name is None:
            object.__setattr__(self, "model_name", self.name)


@dataclass(frozen=True, kw_only=True)
class AsyncEndpointConfig(AsyncEndpointOptions):
    """An asynchronous endpoint: the fields of :class:`AsyncEndpointOptions`, and

    name: a stable logical name; construct IDs derive from it.
    model_name: by default ``name``.
    s3_prefix: by default ``async/<name>`` in the stack's asynchronous-inference bucket.
    alarms: the endpoint's alarm (:class:`AsyncEndpointAlarmOptions`); by default its
        defaults.
    """

    name: str
    model_name: str | None = None  # type: ignore[assignment]
    s3_prefix: str | None = None  # type: ignore[assignment]
    alarms: AsyncEndpointAlarmOptions = field(default_factory=AsyncEndpointAlarmOptions)

    def __post_init__(self) -> None:
        if self.model_name is None:
            object.__setattr__(self, "model_name", self.name)

    @property
    def prefix(self) -> str:
        """``s3_prefix``, by default ``async/<name>``."""
        return self.s3_prefix or f"{ASYNC_PREFIX}/{self.name}"


@dataclass(frozen=True, kw_only=True)
class InferenceConfig:
    """Every endpoint and model of an inference stack.

    ic_endpoints: Inference Components endpoints with their models; by default none.
    single_model_endpoints: single-model endpoints; by default none.
    multi_model_endpoints: multi-model endpoints; by default none.
    artifacts_bucket_name: an existing bucket the models read their artifacts from; by
        default a bucket is created in the artifacts stack (``<stack name>Artifacts``),
        which deploys before the endpoints.
    artifacts_key_arn: the KMS key of that existing bucket's objects, so that the
        execution roles may decrypt them; by default none (SSE-S3 or a bucket key the
        roles can already use).
    async_endpoints: asynchronous endpoints; by default none.
    serverless_endpoints: serverless endpoints (:class:`ServerlessEndpointConfig`) for
        small CPU models with sporadic traffic; by default none.
    """

    ic_endpoints: tuple[InferenceComponentEndpointConfig, ...] = ()
    single_model_endpoints: tuple[SingleModelEndpointConfig, ...] = ()
    multi_model_endpoints: tuple[MultiModelEndpointConfig, ...] = ()
    artifacts_bucket_name: str | None = None
    artifacts_key_arn: str | None = None
    async_endpoints: tuple[AsyncEndpointConfig, ...] = ()
    serverless_endpoints: tuple[ServerlessEndpointConfig, ...] = ()

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], into: Problems | None = None) -> InferenceConfig:
        """Read from JSON-like data (a config file or ``cdk.json`` context): keys are the
        field names, missing keys keep their defaults. Every problem is one error naming
        the key; with ``into``, problems are recorded there and the config is built all
        the same (``None`` where a value was missing or wrong)."""
        problems = Problems.within(into, "InferenceConfig")
        config = read(problems, "", data, cls)
        problems.raise_if_any()
        return config

    @property
    def endpoint_names(self) -> tuple[str, ...]:
        """Every endpoint's logical name."""
        groups = (
            self.ic_endpoints,
            self.single_model_endpoints,
            self.multi_model_endpoints,
            self.async_endpoints,
            self.serverless_endpoints,
        )
        return tuple(item.name for group in groups for item in group)

    @property
    def output_count(self) -> int:
        """How many stack outputs this config produces (one per endpoint, one more per
        Inference Components endpoint, three more per asynchronous endpoint and one for
        them all, plus two)."""
        asynchronous = len(self.async_endpoints)
        return (
            FIXED_OUTPUTS
            + len(self.endpoint_names)
            + len(self.ic_endpoints)
            + ASYNC_OUTPUTS_PER_ENDPOINT * asynchronous
            + (1 if asynchronous else 0)
        )

    def validate(self, into: Problems | None = None) -> None:
        """Raise one ``ValueError`` for bad or clashing names and too many endpoints for
        one stack's outputs (the constructs check the rest). With ``into``, record them
        there instead (see :meth:`Problems.within`)."""
        problems = Problems.within(into, "InferenceConfig")
        check_endpoint_names(
            problems,
            {
                "ic_endpoints": [e.name for e in self.ic_endpoints],
                "single_model_endpoints": [e.name for e in self.single_model_endpoints],
                "multi_model_endpoints": [e.name for e in self.multi_model_endpoints],
                "async_endpoints": [e.name for e in self.async_endpoints],
                "serverless_endpoints": [e.name for e in self.serverless_endpoints],
            },
        )
        check_unique_prefixes(
            problems,
            "async_endpoints",
            [(e.prefix if e.name else None) for e in self.async_endpoints],
        )
        check_output_count(problems, len(self.endpoint_names), self.output_count)
        check_bucket_name(problems, "artifacts_bucket_name", self.artifacts_bucket_name)
        check_kms_key_arn(problems, "artifacts_key_arn", self.artifacts_key_arn)
        if self.artifacts_key_arn is not None and self.artifacts_bucket_name is None:
            problems.add(
                "artifacts_key_arn",
                self.artifacts_key_arn,
                "applies only with artifacts_bucket_name (the created bucket's key is known)",
            )
        check_model_names(
            problems,
            [
                (f"ic_endpoints[{index}].models[{position}].model_name", model.model_name)
                for index, endpoint in enumerate(self.ic_endpoints)
                for position, model in enumerate(endpoint.models or ())
            ],
        )
        problems.raise_if_any()

    def check(self, problems: Problems, *, stack_name: str) -> None:
        """Record every problem the stack's constructs would report, under the
        configuration's keys; components are named as the stack ``stack_name`` names them."""
        self.validate(problems)
        names: set[str] = set()
        for index, endpoint in enumerate(self.ic_endpoints):
            _check_ic_endpoint(problems, f"ic_endpoints[{index}].", endpoint, names, stack_name)
        variant_endpoints: list[tuple[str, SingleModelEndpointConfig | MultiModelEndpointConfig]]
        variant_endpoints = [
            *(
                (f"single_model_endpoints[{i}].", e)
                for i, e in enumerate(self.single_model_endpoints)
            ),
            *(
                (f"multi_model_endpoints[{i}].", e)
                for i, e in enumerate(self.multi_model_endpoints)
            ),
        ]
        for where, item in variant_endpoints:
            view = problems.scoped(where, about=f"endpoint {item.name!r}")
            item.check(view)
            _check_alarms(view.scoped("alarms."), item)
        for index, queued in enumerate(self.async_endpoints):
            view = problems.scoped(f"async_endpoints[{index}].", about=f"endpoint {queued.name!r}")
            queued.check(view)
            _check_alarms(view.scoped("alarms."), queued)
        for index, serverless in enumerate(self.serverless_endpoints):
            view = problems.scoped(
                f"serverless_endpoints[{index}].", about=f"endpoint {serverless.name!r}"
            )
            serverless.check(view)
            _check_alarms(view.scoped("alarms."), serverless)


def _counts_copies(endpoint: InferenceComponentEndpointConfig) -> bool:
    """Whether the alarms of ``endpoint`` or of its models count instances or copies."""
    alarms = endpoint.alarms
    if alarms.enabled and alarms.instances_at_max:
        return True
    return any(
        isinstance(model, InferenceComponentModelConfig)
        and model.alarms.enabled
        and model.alarms.copies_at_max
        for model in endpoint.models or ()
    )


def _check_ic_endpoint(
    problems: Problems,
    where: str,
    endpoint: InferenceComponentEndpointConfig,
    names: set[str],
    stack_name: str,
) -> None:
    """Record the problems of one Inference Components endpoint under ``where``: its own,
    each model's (its component name must be none of ``names``, which gains it), and the
    first model at which the minimum copies no longer fit the endpoint."""
    endpoint.check(problems.scoped(where, about=f"endpoint {endpoint.name!r}"))
    if endpoint.metrics is not None and _counts_copies(endpoint):
        check_counted_frequency(
            problems.scoped(where, about=f"endpoint {endpoint.name!r}"),
            "metrics",
            endpoint.metrics.publish_frequency_s,
        )
    _check_alarms(problems.scoped(f"{where}alarms.", about=f"endpoint {endpoint.name!r}"), endpoint)
    demands: list[CopyDemand] = []
    fits = True
    for position, model in enumerate(endpoint.models or ()):
        view = problems.scoped(
            f"{where}models[{position}].",
            about=f"model {model.model_name!r} on endpoint {endpoint.name!r}",
        )
        model.check(
            view,
            instance_type=endpoint.instance_type,
            fallback_types=list(endpoint.fallback_instance_types or ()),
        )
        _check_alarms(view.scoped("alarms."), model)
        name = model.component_name or (
            component_name_for(
                stack_name,
                model.model_name,
                component_endpoint_key(
                    instance_type=endpoint.instance_type,
                    variant_name=endpoint.variant_name,
                ),
                model.name_suffix,
            )
            if model.model_name
            else None
        )
        check_component_name_free(view, "component_name", name, name in names)
        if name is not None:
            names.add(name)
        if view:
            continue  # its copies are not counted until its own problems are fixed
        demands.append(model.demand(name))
        if fits:  # report the model at which the minimum copies stop fitting
            capacity = view.scoped("")
            check_min_copies_fit(
                capacity,
                "scaling.min_copies" if model.scaling is not None else "initial_copies",
                demands,
                endpoint.instance_type,
                endpoint.max_instance_count,
            )
            fits = not capacity


def _check_alarms(problems: Problems, item: object) -> None:
    """The problems of ``item``'s ``alarms`` options, when it has some (a model given as
    plain :class:`InferenceComponentModelOptions` has none)."""
    alarms = getattr(item, "alarms", None)
    if isinstance(
        alarms,
        ModelAlarmOptions
        | EndpointAlarmOptions
        | AsyncEndpointAlarmOptions
        | ServerlessEndpointAlarmOptions,
    ):
        alarms.check(problems)
    if isinstance(alarms, ModelAlarmOptions) and alarms.enabled and not problems:
        scaling = getattr(item, "scaling", None)
        top, bottom = getattr(scaling, "max_copies", None), getattr(scaling, "min_copies", None)
        copies_scale = isinstance(top, int) and isinstance(bottom, int) and top > bottom
        only_copies = (
            alarms.error_rate_percent is None
            and not alarms.no_capacity
            and alarms.latency_objective_ms is None
        )
        if only_copies and not copies_scale:
            problems.add(
                "copies_at_max",
                alarms.copies_at_max,
                "nothing to watch: the model's copies do not scale (no scaling, or max_copies "
                "= min_copies); set another condition (or enabled: false)",
            )
