"""The inference stack: endpoints and models described by one :class:`InferenceConfig`.

The defaults are the hosting guidance's examples, one per hosting option:

- an Inference Components endpoint ``shared-g5`` on ml.g5.12xlarge (4 x A10G) packing a
  7B chat model (1 GPU), a 13B model (2 GPUs, tensor parallel) and a FLAN-T5-XL-sized model
  (1 GPU) that scales to zero copies when idle, each with its own target tracking;
- a single-model endpoint ``summarizer`` for an isolated summarisation model: network
  isolation, data capture to an encrypted bucket, its own instances and, when the stack is
  given a VPC, its own security group;
- a multi-model endpoint ``small-models`` serving a fleet of small models from one S3 prefix
  on CPU instances (ml.m5.xlarge).

Artifacts: the stack creates a model-artifacts bucket (``ModelArtifacts``, output
``ModelArtifactsBucket``). Each model reads ``s3://<bucket>/models/<model-name>/``
(uncompressed files, e.g. a Hugging Face snapshot); a multi-model endpoint reads the
``.tar.gz`` models under ``s3://<bucket>/models/<endpoint-name>/``. Upload before deploying,
or set ``model_data_url`` / ``models_s3_prefix`` to your own locations.

Images: AWS Deep Learning Containers from account 763104351884 in the stack's region (the
account serving most commercial regions; set ``image`` elsewhere): LMI
(``djl-inference``) for the LLMs, PyTorch inference (TorchServe, multi-model capable) for
the multi-model endpoint.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aws_cdk import Annotations, CfnOutput, Fn, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_kms as kms
from constructs import Construct

from fm_platform.constructs.inference.component_scaling import ComponentScaling
from fm_platform.constructs.inference.ic_endpoint import (
    EndpointReference,
    InferenceEndpoint,
    InferenceEndpointProps,
)
from fm_platform.constructs.inference.inference_component import (
    InferenceComponentModel,
    InferenceComponentModelProps,
)
from fm_platform.constructs.inference.instance_scaling import InstanceScaling
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.inference.multi_model_endpoint import (
    MultiModelEndpoint,
    MultiModelEndpointProps,
)
from fm_platform.constructs.inference.single_model_endpoint import (
    DataCaptureProps,
    SingleModelEndpoint,
    SingleModelEndpointProps,
)
from fm_platform.constructs.secure_bucket import SecureBucket, SecureBucketProps
from fm_platform.images import (
    PYTORCH_CPU_IMAGE,
    PYTORCH_GPU_IMAGE,
    deep_learning_container_image,
)
from fm_platform.mapping import dataclass_values, list_of
from fm_platform.specs.instances import UnknownInstanceTypeError, instance_spec
from fm_platform.stacks.limits import MAX_OUTPUTS_PER_STACK, check_resource_count
from fm_platform.validation import Problems

#: Key prefix of model artifacts in the stack's bucket: ``models/<model-name>/``.
ARTIFACTS_PREFIX = "models"

#: Outputs besides the per-endpoint ones: EndpointNames, ModelArtifactsBucket, InvokeExample.
_FIXED_OUTPUTS = 3


@dataclass(frozen=True, kw_only=True)
class ContainerSpec:
    """A model's container.

    image: an image URI; by default the stack's Deep Learning Container for the hosting
        option (LMI for LLMs, PyTorch inference for multi-model endpoints).
    model_data_url: the artifacts' S3 URI (``model.tar.gz`` or a prefix ending in ``/``);
        by default ``s3://<stack bucket>/models/<model-name>/``.
    environment: environment variables; by default none.
    """

    image: str | None = None
    model_data_url: str | None = None
    environment: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class IcModelSpec:
    """A model on an Inference Components endpoint (see
    :class:`InferenceComponentModelProps`).

    model_name: unique in the stack; names its artifacts' folder and, after the stack's
        name, its inference component (``<stack name>-<model_name>``, which requests name;
        output ``Components<Endpoint>``).
    accelerators, min_memory_mib: per copy. cpu_cores: per copy; by default none reserved.
    container: by default the LMI image and the stack bucket's ``models/<model_name>/``.
    initial_copies: by default the scaling minimum (at least 1), else 1.
    scaling: by default none (fixed copy count).
    component_name: by default ``<stack name>-<model_name>``.
    """

    model_name: str
    accelerators: int
    min_memory_mib: int
    cpu_cores: float | None = None
    container: ContainerSpec = field(default_factory=ContainerSpec)
    initial_copies: int | None = None
    scaling: ComponentScaling | None = None
    component_name: str | None = None

    def props(
        self,
        endpoint: InferenceEndpoint | EndpointReference,
        container: ModelContainer,
        artifact_key: kms.IKey | None = None,
    ) -> InferenceComponentModelProps:
        """The construct props of this model on ``endpoint``, running ``container``."""
        return InferenceComponentModelProps(
            model_name=self.model_name,
            endpoint=endpoint,
            container=container,
            accelerators=self.accelerators,
            cpu_cores=self.cpu_cores,
            min_memory_mib=self.min_memory_mib,
            initial_copies=self.initial_copies,
            scaling=self.scaling,
            component_name=self.component_name,
            artifact_key=artifact_key,
        )


@dataclass(frozen=True, kw_only=True)
class IcEndpointSpec:
    """An Inference Components endpoint and its models.

    name: a stable logical name; construct IDs derive from it (renaming replaces the
        endpoint). instance_type: the instances' type.
    initial_instance_count / min_instance_count / max_instance_count: managed instance
        scaling; by default 1 / 1 / 2.
    routing_strategy: by default LEAST_OUTSTANDING_REQUESTS.
    network_isolation: run its models without network access; by default True (set False
        for containers that download weights from a model hub at startup).
    models: the models placed on it.
    """

    name: str
    instance_type: str
    models: tuple[IcModelSpec, ...]
    initial_instance_count: int = 1
    min_instance_count: int = 1
    max_instance_count: int = 2
    routing_strategy: str = "LEAST_OUTSTANDING_REQUESTS"
    network_isolation: bool = True

    def props(self, vpc: ec2.IVpc | None = None) -> InferenceEndpointProps:
        """The construct props of this endpoint, in ``vpc`` when given."""
        return InferenceEndpointProps(
            instance_type=self.instance_type,
            initial_instance_count=self.initial_instance_count,
            min_instance_count=self.min_instance_count,
            max_instance_count=self.max_instance_count,
            routing_strategy=self.routing_strategy,
            network_isolation=self.network_isolation,
            vpc=vpc,
        )


@dataclass(frozen=True, kw_only=True)
class SingleModelEndpointSpec:
    """A single-model endpoint.

    name: stable logical name (also the model's logical name). instance_type, container
    (by default LMI and ``models/<name>/``), initial_instance_count (by default 1),
    scaling (by default fixed), network_isolation (by default True),
    data_capture_percentage: percentage of requests and responses captured to an encrypted
    bucket; by default nothing is captured. With a ``vpc`` given to the stack, the endpoint
    runs in its private subnets with a dedicated security group.
    """

    name: str
    instance_type: str
    container: ContainerSpec = field(default_factory=ContainerSpec)
    initial_instance_count: int = 1
    scaling: InstanceScaling | None = None
    network_isolation: bool = True
    data_capture_percentage: int | None = None

    def props(
        self,
        container: ModelContainer,
        vpc: ec2.IVpc | None = None,
        artifact_key: kms.IKey | None = None,
    ) -> SingleModelEndpointProps:
        """The construct props of this endpoint, running ``container``."""
        return SingleModelEndpointProps(
            model_name=self.name,
            container=container,
            instance_type=self.instance_type,
            initial_instance_count=self.initial_instance_count,
            scaling=self.scaling,
            network_isolation=self.network_isolation,
            data_capture=(
                DataCaptureProps(sampling_percentage=self.data_capture_percentage)
                if self.data_capture_percentage is not None
                else None
            ),
            vpc=vpc,
            artifact_key=artifact_key,
        )


@dataclass(frozen=True, kw_only=True)
class MultiModelEndpointSpec:
    """A multi-model endpoint.

    name: stable logical name. instance_type: a CPU or single-GPU type.
    image: by default the PyTorch inference image (CPU or GPU flavour by instance type).
    models_s3_prefix: by default ``s3://<stack bucket>/models/<name>/``.
    environment, initial_instance_count (by default 1), scaling (by default fixed).
    network_isolation: run the container without network access; by default True (set
    False for a container that downloads models from a hub itself).
    """

    name: str
    instance_type: str
    image: str | None = None
    models_s3_prefix: str | None = None
    environment: Mapping[str, str] = field(default_factory=dict)
    initial_instance_count: int = 1
    scaling: InstanceScaling | None = None
    network_isolation: bool = True

    def props(
        self,
        image: str,
        models_s3_prefix: str,
        vpc: ec2.IVpc | None = None,
        artifact_key: kms.IKey | None = None,
    ) -> MultiModelEndpointProps:
        """The construct props of this endpoint, running ``image`` over
        ``models_s3_prefix``."""
        return MultiModelEndpointProps(
            models_s3_prefix=models_s3_prefix,
            image=image,
            instance_type=self.instance_type,
            environment=dict(self.environment),
            initial_instance_count=self.initial_instance_count,
            scaling=self.scaling,
            network_isolation=self.network_isolation,
            vpc=vpc,
            artifact_key=artifact_key,
        )


def _lmi_environment(tensor_parallel_degree: int, rolling_batch: str) -> dict[str, str]:
    return {
        "OPTION_ROLLING_BATCH": rolling_batch,
        "OPTION_TENSOR_PARALLEL_DEGREE": str(tensor_parallel_degree),
    }


DEFAULT_IC_ENDPOINTS = (
    IcEndpointSpec(
        name="shared-g5",
        instance_type="ml.g5.12xlarge",
        initial_instance_count=1,
        min_instance_count=1,
        max_instance_count=4,
        models=(
            IcModelSpec(
                model_name="llama-7b-chat",
                accelerators=1,
                cpu_cores=4,
                min_memory_mib=32768,
                container=ContainerSpec(environment=_lmi_environment(1, "vllm")),
                scaling=ComponentScaling(min_copies=1, max_copies=4, target_value=10.0),
            ),
            IcModelSpec(
                model_name="llama-13b",
                accelerators=2,
                cpu_cores=8,
                min_memory_mib=65536,
                container=ContainerSpec(environment=_lmi_environment(2, "vllm")),
                scaling=ComponentScaling(min_copies=1, max_copies=2, target_value=5.0),
            ),
            IcModelSpec(
                model_name="flan-t5-xl",
                accelerators=1,
                cpu_cores=2,
                min_memory_mib=16384,
                container=ContainerSpec(environment=_lmi_environment(1, "disable")),
                scaling=ComponentScaling(min_copies=0, max_copies=2, target_value=10.0),
            ),
        ),
    ),
)

DEFAULT_SINGLE_MODEL_ENDPOINTS = (
    SingleModelEndpointSpec(
        name="summarizer",
        instance_type="ml.g5.2xlarge",
        container=ContainerSpec(environment=_lmi_environment(1, "vllm")),
        scaling=InstanceScaling(
            min_instances=1, max_instances=2, target_invocations_per_instance=20
        ),
        network_isolation=True,
        data_capture_percentage=10,
    ),
)

DEFAULT_MULTI_MODEL_ENDPOINTS = (
    MultiModelEndpointSpec(
        name="small-models",
        instance_type="ml.m5.xlarge",
        scaling=InstanceScaling(
            min_instances=1, max_instances=4, target_invocations_per_instance=200
        ),
    ),
)


@dataclass(frozen=True, kw_only=True)
class InferenceConfig:
    """Every endpoint and model of the inference stack.

    ic_endpoints: Inference Components endpoints with their models; by default one
        ml.g5.12xlarge endpoint with a 7B, a 13B and a scale-to-zero FLAN-T5-XL model.
    single_model_endpoints: by default the isolated ``summarizer``.
    multi_model_endpoints: by default ``small-models`` on ml.m5.xlarge.
    """

    ic_endpoints: tuple[IcEndpointSpec, ...] = DEFAULT_IC_ENDPOINTS
    single_model_endpoints: tuple[SingleModelEndpointSpec, ...] = DEFAULT_SINGLE_MODEL_ENDPOINTS
    multi_model_endpoints: tuple[MultiModelEndpointSpec, ...] = DEFAULT_MULTI_MODEL_ENDPOINTS

    @property
    def endpoint_names(self) -> tuple[str, ...]:
        """Every endpoint's logical name."""
        groups = (self.ic_endpoints, self.single_model_endpoints, self.multi_model_endpoints)
        return tuple(spec.name for group in groups for spec in group)

    @property
    def output_count(self) -> int:
        """How many stack outputs this config produces (one per endpoint, one more per
        Inference Components endpoint, plus three)."""
        return _FIXED_OUTPUTS + len(self.endpoint_names) + len(self.ic_endpoints)

    def validate(self, into: Problems | None = None) -> None:
        """Raise one ``ValueError`` for bad or clashing names and too many endpoints for
        one stack's outputs (the constructs check the rest).
        With ``into``, record them there instead (see :meth:`Problems.within`)."""
        problems = Problems.within(into, "InferenceConfig")
        seen: set[str] = set()
        for key in ("ic_endpoints", "single_model_endpoints", "multi_model_endpoints"):
            for index, spec in enumerate(getattr(self, key)):
                field = f"{key}[{index}].name"
                problems.check_shape(field, spec.name, "EndpointName")
                if spec.name in seen:
                    problems.add(field, spec.name, "must be unique among the endpoint names")
                seen.add(spec.name)
        if self.output_count > MAX_OUTPUTS_PER_STACK:
            problems.add(
                "endpoints",
                len(self.endpoint_names),
                f"need {self.output_count} stack outputs, more than CloudFormation's "
                f"{MAX_OUTPUTS_PER_STACK}; split them across several InferenceStacks",
            )
        models: set[str] = set()
        for index, endpoint in enumerate(self.ic_endpoints):
            for position, model in enumerate(endpoint.models):
                if model.model_name in models:
                    problems.add(
                        f"ic_endpoints[{index}].models[{position}].model_name",
                        model.model_name,
                        "must be unique: it names the inference component, and those are "
                        "unique per account and region",
                    )
                models.add(model.model_name)
        problems.raise_if_any()

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], into: Problems | None = None) -> InferenceConfig:
        """A config from JSON-like data. Top-level keys are this class's fields (a missing
        one keeps its default; ``[]`` removes it); each holds a list of mappings with the
        field names of its spec class. ``container`` is a mapping of :class:`ContainerSpec`
        fields; ``scaling`` a mapping of :class:`ComponentScaling` fields (``min_copies``,
        ``max_copies``, ``metric``, ``target_value``) for IC models and of
        :class:`InstanceScaling` fields otherwise. Unknown keys raise ``ValueError`` naming
        the key and the allowed keys. With ``into``, problems are recorded there and the
        config is built from the valid entries."""
        problems = Problems.within(into, "InferenceConfig")
        values = dataclass_values(problems, "", data, cls)
        for key, build in _TOP_LEVEL.items():
            if key in values:
                values[key] = list_of(problems, key, values[key], build)
        problems.raise_if_any()
        return cls(**values)


_MAPPING_SCALING_FIELDS = ("min_copies", "max_copies", "metric", "target_value")


def _container(problems: Problems, where: str, data: Any) -> ContainerSpec:
    return ContainerSpec(**dataclass_values(problems, where, data, ContainerSpec))


def _instance_scaling(problems: Problems, where: str, data: Any) -> InstanceScaling | None:
    values = dataclass_values(problems, where, data, InstanceScaling)
    return None if problems else InstanceScaling(**values)


def _component_scaling(problems: Problems, where: str, data: Any) -> ComponentScaling | None:
    values = dataclass_values(
        problems, where, data, ComponentScaling, allowed=_MAPPING_SCALING_FIELDS
    )
    return None if problems else ComponentScaling(**values)


def _spec(cls: type, nested: Mapping[str, Any]) -> Callable[[Problems, str, Any], Any]:
    def build(problems: Problems, where: str, data: Any) -> Any:
        values = dataclass_values(problems, where, data, cls)
        for key, convert in nested.items():
            if values.get(key) is not None:
                values[key] = convert(problems, f"{where}{key}.", values[key])
        return None if problems else cls(**values)

    return build


_IC_MODEL = _spec(IcModelSpec, {"container": _container, "scaling": _component_scaling})
_TOP_LEVEL = {
    "ic_endpoints": _spec(
        IcEndpointSpec,
        {"models": lambda problems, where, items: list_of(problems, where[:-1], items, _IC_MODEL)},
    ),
    "single_model_endpoints": _spec(
        SingleModelEndpointSpec, {"container": _container, "scaling": _instance_scaling}
    ),
    "multi_model_endpoints": _spec(MultiModelEndpointSpec, {"scaling": _instance_scaling}),
}


def _output_id(prefix: str, name: str) -> str:
    return prefix + "".join(part.capitalize() for part in name.split("-"))


class InferenceStack(Stack):
    """Endpoints and models from an :class:`InferenceConfig`.

    Construct IDs derive from names, never positions: ``ModelArtifacts`` (the artifacts
    bucket), ``IcEndpoint-<name>`` (with ``Endpoint`` and ``Model-<model_name>`` inside),
    ``SingleModelEndpoint-<name>``, ``MultiModelEndpoint-<name>``.

    ``vpc``: when given, every endpoint runs in its private subnets, each with a dedicated
    security group; by default they use SageMaker's network. Every endpoint's models run
    without network access unless its spec sets ``network_isolation=False``.

    Attributes: ``config``, ``artifacts`` (the :class:`SecureBucket`), ``ic_endpoints``,
    ``ic_models`` (by model name), ``single_model_endpoints``, ``multi_model_endpoints``
    (dicts by name).

    Outputs: ``EndpointNames`` (comma-separated, read by the ``fmp`` CLI),
    ``Endpoint<Name>`` per endpoint, ``Components<Name>`` per IC endpoint (the exact
    component names to pass as ``--inference-component-name``, comma-separated),
    ``ModelArtifactsBucket`` and ``InvokeExample`` (a CLI command for the first IC model,
    with its component name). That is 3 + endpoints + IC endpoints outputs, whatever the number of
    models (CloudFormation allows 200).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: InferenceConfig = InferenceConfig(),  # noqa: B008 - frozen, so safe to share
        vpc: ec2.IVpc | None = None,
        **stack_kwargs: Any,
    ) -> None:
        """Build the stack's endpoints and models from ``config``; it is validated first."""
        super().__init__(scope, construct_id, **stack_kwargs)
        config.validate()
        self.config = config
        self.vpc = vpc
        self.artifacts = SecureBucket(
            self, "ModelArtifacts", SecureBucketProps(purpose="SageMaker model artifacts")
        )
        self.ic_endpoints: dict[str, InferenceEndpoint] = {}
        self.ic_models: dict[str, InferenceComponentModel] = {}
        self.single_model_endpoints: dict[str, SingleModelEndpoint] = {}
        self.multi_model_endpoints: dict[str, MultiModelEndpoint] = {}
        for ic_spec in config.ic_endpoints:
            self._ic_endpoint(ic_spec)
        for single_spec in config.single_model_endpoints:
            self._single_model_endpoint(single_spec)
        for multi_spec in config.multi_model_endpoints:
            self._multi_model_endpoint(multi_spec)
        self._add_outputs()
        check_resource_count(
            self,
            "split the endpoints across several InferenceStacks (a model with scaling takes "
            "about 4 resources, 6 when it scales to zero)",
        )

    # -- defaults ---------------------------------------------------------------------------

    def dlc_image(self, repository_and_tag: str) -> str:
        """A Deep Learning Container image URI in this stack's region."""
        return deep_learning_container_image(self, repository_and_tag)

    def _container(self, spec: ContainerSpec, model_name: str) -> ModelContainer:
        return ModelContainer(
            image=spec.image,  # None: the hosting construct's default, LMI in this region
            model_data_url=spec.model_data_url or self._artifacts_url(model_name),
            environment=dict(spec.environment),
        )

    def _artifacts_url(self, name: str) -> str:
        return f"s3://{self.artifacts.bucket.bucket_name}/{ARTIFACTS_PREFIX}/{name}/"

    # -- endpoints --------------------------------------------------------------------------

    def _ic_endpoint(self, spec: IcEndpointSpec) -> None:
        group = Construct(self, f"IcEndpoint-{spec.name}")
        endpoint = InferenceEndpoint(group, "Endpoint", spec.props(self.vpc))
        self.ic_endpoints[spec.name] = endpoint
        keeps_copies = any(m.scaling is None or m.scaling.min_copies > 0 for m in spec.models)
        for model in spec.models:
            container = self._container(model.container, model.model_name)
            created = InferenceComponentModel(
                group,
                f"Model-{model.model_name}",
                model.props(endpoint, container, self.artifacts.encryption_key),
            )
            if keeps_copies:
                Annotations.of(created).acknowledge_warning(
                    "fm_platform:endpointKeepsInstances",
                    f"other models on {spec.name} keep at least one copy, so its instances "
                    "stay in service for them",
                )
            self.ic_models[model.model_name] = created

    def _single_model_endpoint(self, spec: SingleModelEndpointSpec) -> None:
        container = self._container(spec.container, spec.name)
        endpoint = SingleModelEndpoint(
            self,
            f"SingleModelEndpoint-{spec.name}",
            spec.props(container, self.vpc, self.artifacts.encryption_key),
        )
        self.single_model_endpoints[spec.name] = endpoint

    def _multi_model_endpoint(self, spec: MultiModelEndpointSpec) -> None:
        image = spec.image or self.dlc_image(self._multi_model_image(spec.instance_type))
        prefix = spec.models_s3_prefix or self._artifacts_url(spec.name)
        endpoint = MultiModelEndpoint(
            self,
            f"MultiModelEndpoint-{spec.name}",
            spec.props(image, prefix, self.vpc, self.artifacts.encryption_key),
        )
        self.multi_model_endpoints[spec.name] = endpoint

    @staticmethod
    def _multi_model_image(instance_type: str) -> str:
        try:
            gpu = instance_spec(instance_type).accelerator == "nvidia-gpu"
        except UnknownInstanceTypeError:
            gpu = False  # the endpoint's validation reports the type
        return PYTORCH_GPU_IMAGE if gpu else PYTORCH_CPU_IMAGE

    # -- outputs ----------------------------------------------------------------------------

    def _add_outputs(self) -> None:
        names: dict[str, str] = {
            **{n: e.endpoint_name for n, e in self.ic_endpoints.items()},
            **{n: e.endpoint_name for n, e in self.single_model_endpoints.items()},
            **{n: e.endpoint_name for n, e in self.multi_model_endpoints.items()},
        }
        CfnOutput(
            self,
            "EndpointNames",
            value=Fn.join(",", list(names.values())) if names else "",
            description="Every endpoint's name, comma-separated (read by the fmp CLI)",
        )
        for name, endpoint_name in names.items():
            CfnOutput(
                self,
                _output_id("Endpoint", name),
                value=endpoint_name,
                description=f"SageMaker endpoint name of {name}",
            )
        for spec in self.config.ic_endpoints:
            CfnOutput(
                self,
                _output_id("Components", spec.name),
                value=",".join(self.ic_models[m.model_name].component_name for m in spec.models),
                description=f"Inference component names on {spec.name}, comma-separated: "
                "pass one as --inference-component-name",
            )
        CfnOutput(
            self,
            "ModelArtifactsBucket",
            value=self.artifacts.bucket.bucket_name,
            description=f"Upload model artifacts to s3://<bucket>/{ARTIFACTS_PREFIX}/<model-name>/",
        )
        example = self._invoke_example()
        if example is not None:
            CfnOutput(
                self,
                "InvokeExample",
                value=example,
                description="Invoke a model (write the request body to request.json first)",
            )

    def _invoke_example(self) -> str | None:
        for spec in self.config.ic_endpoints:
            if spec.models:
                endpoint = self.ic_endpoints[spec.name]
                return (
                    "aws sagemaker-runtime invoke-endpoint "
                    f"--endpoint-name {endpoint.endpoint_name} "
                    "--inference-component-name "
                    f"{self.ic_models[spec.models[0].model_name].component_name} "
                    "--content-type application/json --body fileb://request.json response.json"
                )
        for sme in self.single_model_endpoints.values():
            return (
                f"aws sagemaker-runtime invoke-endpoint --endpoint-name {sme.endpoint_name} "
                "--content-type application/json --body fileb://request.json response.json"
            )
        return None
