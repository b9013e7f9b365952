"""The inference stack: endpoints and models described by one
:class:`~fm_platform.config.InferenceConfig` (by default the hosting guidance's examples).

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

from dataclasses import replace
from typing import Any

from aws_cdk import Annotations, CfnOutput, Fn, Stack
from aws_cdk import aws_ec2 as ec2
from constructs import Construct

from fm_platform.config.inference import (
    InferenceComponentEndpointConfig,
    InferenceConfig,
    MultiModelEndpointConfig,
    SingleModelEndpointConfig,
)
from fm_platform.constructs.inference.component_endpoint import (
    InferenceComponentEndpoint,
    InferenceComponentEndpointOptions,
    InferenceComponentEndpointProps,
)
from fm_platform.constructs.inference.inference_component import (
    InferenceComponentModel,
    InferenceComponentModelOptions,
    InferenceComponentModelProps,
)
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.inference.multi_model_endpoint import (
    MultiModelEndpoint,
    MultiModelEndpointOptions,
    MultiModelEndpointProps,
)
from fm_platform.constructs.inference.single_model_endpoint import (
    SingleModelEndpoint,
    SingleModelEndpointOptions,
    SingleModelEndpointProps,
)
from fm_platform.constructs.observability.topic import NotificationTopicOptions
from fm_platform.constructs.options import options_values
from fm_platform.constructs.secure_bucket import SecureBucket, SecureBucketProps
from fm_platform.images import deep_learning_container_image
from fm_platform.stacks.limits import check_resource_count
from fm_platform.stacks.observability import InferenceObservability

#: Key prefix of model artifacts in the stack's bucket: ``models/<model-name>/``.
ARTIFACTS_PREFIX = "models"


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
    ``ModelArtifactsBucket``, ``InvokeExample`` (a CLI command for the first IC model,
    with its component name) and, with notifications, ``NotificationTopicArn``. That is at
    most 4 + endpoints + IC endpoints outputs, whatever the number of models
    (CloudFormation allows 200).

    Observability (``Observability``, see :class:`InferenceObservability`): a notification
    topic, an alarm per model and per endpoint, dashboards; ``notifications=None`` creates
    no topic and no alarm, ``dashboards=False`` no dashboard.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: InferenceConfig = InferenceConfig(),  # noqa: B008 - frozen, so safe to share
        vpc: ec2.IVpc | None = None,
        notifications: NotificationTopicOptions | None = NotificationTopicOptions(),  # noqa: B008
        dashboards: bool = True,
        **stack_kwargs: Any,
    ) -> None:
        """Build the stack's endpoints and models from ``config``; it is validated first.
        ``notifications`` and ``dashboards``: see :class:`InferenceObservability`."""
        super().__init__(scope, construct_id, **stack_kwargs)
        config.validate()
        self.config = config
        self.vpc = vpc
        self.artifacts = SecureBucket(
            self, "ModelArtifacts", SecureBucketProps(purpose="SageMaker model artifacts")
        )
        self.ic_endpoints: dict[str, InferenceComponentEndpoint] = {}
        self.ic_models: dict[str, InferenceComponentModel] = {}
        self.single_model_endpoints: dict[str, SingleModelEndpoint] = {}
        self.multi_model_endpoints: dict[str, MultiModelEndpoint] = {}
        for ic_item in config.ic_endpoints:
            self._ic_endpoint(ic_item)
        for single_item in config.single_model_endpoints:
            self._single_model_endpoint(single_item)
        for multi_item in config.multi_model_endpoints:
            self._multi_model_endpoint(multi_item)
        self._add_outputs()
        self.observability = InferenceObservability(
            self, "Observability", notifications=notifications, dashboards=dashboards
        )
        check_resource_count(
            self,
            "split the endpoints across several InferenceStacks (a model with scaling takes "
            "about 4 resources, 6 when it scales to zero)",
        )

    # -- defaults ---------------------------------------------------------------------------

    def dlc_image(self, repository_and_tag: str) -> str:
        """A Deep Learning Container image URI in this stack's region."""
        return deep_learning_container_image(self, repository_and_tag)

    def _container(self, container: ModelContainer, model_name: str) -> ModelContainer:
        """``container`` with its artifacts by default in this stack's bucket."""
        if container.model_data_url is not None:
            return container
        return replace(container, model_data_url=self._artifacts_url(model_name))

    def _artifacts_url(self, name: str) -> str:
        return f"s3://{self.artifacts.bucket.bucket_name}/{ARTIFACTS_PREFIX}/{name}/"

    # -- endpoints --------------------------------------------------------------------------

    def _ic_endpoint(self, item: InferenceComponentEndpointConfig) -> None:
        group = Construct(self, f"IcEndpoint-{item.name}")
        endpoint = InferenceComponentEndpoint(
            group,
            "Endpoint",
            InferenceComponentEndpointProps(
                **options_values(InferenceComponentEndpointOptions, item), vpc=self.vpc
            ),
        )
        self.ic_endpoints[item.name] = endpoint
        keeps_copies = any(m.scaling is None or m.scaling.min_copies > 0 for m in item.models)
        for model in item.models:
            options = options_values(InferenceComponentModelOptions, model)
            options["container"] = self._container(model.container, model.model_name)
            created = InferenceComponentModel(
                group,
                f"Model-{model.model_name}",
                InferenceComponentModelProps(
                    **options, endpoint=endpoint, artifact_key=self.artifacts.encryption_key
                ),
            )
            if keeps_copies:
                Annotations.of(created).acknowledge_warning(
                    "fm_platform:endpointKeepsInstances",
                    f"other models on {item.name} keep at least one copy, so its instances "
                    "stay in service for them",
                )
            self.ic_models[model.model_name] = created

    def _single_model_endpoint(self, item: SingleModelEndpointConfig) -> None:
        options = options_values(SingleModelEndpointOptions, item)
        options["container"] = self._container(item.container, item.name)
        endpoint = SingleModelEndpoint(
            self,
            f"SingleModelEndpoint-{item.name}",
            SingleModelEndpointProps(
                **options, vpc=self.vpc, artifact_key=self.artifacts.encryption_key
            ),
        )
        self.single_model_endpoints[item.name] = endpoint

    def _multi_model_endpoint(self, item: MultiModelEndpointConfig) -> None:
        options = options_values(MultiModelEndpointOptions, item)
        options["models_s3_prefix"] = item.models_s3_prefix or self._artifacts_url(item.name)
        endpoint = MultiModelEndpoint(
            self,
            f"MultiModelEndpoint-{item.name}",
            MultiModelEndpointProps(
                **options, vpc=self.vpc, artifact_key=self.artifacts.encryption_key
            ),
        )
        self.multi_model_endpoints[item.name] = endpoint

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
        for item in self.config.ic_endpoints:
            CfnOutput(
                self,
                _output_id("Components", item.name),
                value=",".join(self.ic_models[m.model_name].component_name for m in item.models),
                description=f"Inference component names on {item.name}, comma-separated: "
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
        for item in self.config.ic_endpoints:
            if item.models:
                endpoint = self.ic_endpoints[item.name]
                return (
                    "aws sagemaker-runtime invoke-endpoint "
                    f"--endpoint-name {endpoint.endpoint_name} "
                    "--inference-component-name "
                    f"{self.ic_models[item.models[0].model_name].component_name} "
                    "--content-type application/json --body fileb://request.json response.json"
                )
        for sme in self.single_model_endpoints.values():
            return (
                f"aws sagemaker-runtime invoke-endpoint --endpoint-name {sme.endpoint_name} "
                "--content-type application/json --body fileb://request.json response.json"
            )
        return None
