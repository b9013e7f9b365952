"""The inference stack: endpoints and models described by one
:class:`~fm_platform.config.InferenceConfig` (only what it holds: by default no endpoint).

Artifacts: the models read them from a bucket in a stack of its own
(:class:`~fm_platform.stacks.artifacts.ModelArtifactsStack`, deployed first) or from an
existing bucket the configuration names. Each model reads
``s3://<bucket>/models/<model-name>/`` (uncompressed files, e.g. a Hugging Face snapshot),
a serverless endpoint's model ``s3://<bucket>/models/<name>/model.tar.gz`` (Serverless
Inference reads no uncompressed files);
a multi-model endpoint reads the ``.tar.gz`` models under
``s3://<bucket>/models/<endpoint-name>/``; a single-model endpoint's fallback pool or a
component's instance type with a model of its own reads the same artifacts unless its
container names others.
Upload before deploying the endpoints, or set ``model_data_url`` / ``models_s3_prefix`` to
your own locations.

Asynchronous endpoints share one bucket (``AsyncInference``), each under its own prefix,
by default ``async/<name>/``: callers upload request bodies to ``inputs/``, results land in
``outputs/`` and failures in ``failures/`` (outputs ``AsyncInput<Name>``,
``AsyncOutput<Name>``, ``AsyncFailure<Name>``).

Images: unless a container names one, the image table's (``fm_platform/containers/
images.json``, which the planner reads too) in the stack's region, from the account that
publishes it there: LMI (``djl-inference``) for the LLMs, PyTorch inference (TorchServe,
multi-model capable) for the multi-model endpoint.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from aws_cdk import Annotations, CfnOutput, CrossStackReferences, Fn, ReferenceStrength, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from fm_platform.config.inference import (
    AsyncEndpointConfig,
    InferenceComponentEndpointConfig,
    InferenceConfig,
    MultiModelEndpointConfig,
    SingleModelEndpointConfig,
)
from fm_platform.constructs.inference.async_endpoint import (
    AsyncEndpoint,
    AsyncEndpointOptions,
    AsyncEndpointProps,
)
from fm_platform.constructs.inference.component_endpoint import (
    InferenceComponentEndpoint,
    InferenceComponentEndpointOptions,
    InferenceComponentEndpointProps,
)
from fm_platform.constructs.inference.endpoint_interface import IEndpoint
from fm_platform.constructs.inference.inference_component import (
    InferenceComponentModel,
    InferenceComponentModelOptions,
)
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.inference.multi_model_endpoint import (
    MultiModelEndpoint,
    MultiModelEndpointOptions,
    MultiModelEndpointProps,
)
from fm_platform.constructs.inference.serverless_endpoint import (
    ServerlessEndpoint,
    ServerlessEndpointOptions,
    ServerlessEndpointProps,
)
from fm_platform.constructs.inference.single_model_endpoint import (
    SingleModelEndpoint,
    SingleModelEndpointOptions,
    SingleModelEndpointProps,
)
from fm_platform.constructs.observability.inference_observability import (
    IC_KIND,
    MULTI_KIND,
    SINGLE_KIND,
    InferenceObservabilityProps,
    WatchedAsyncEndpoint,
    WatchedEndpoint,
    WatchedModel,
    WatchedServerlessEndpoint,
    watch_inference,
)
from fm_platform.constructs.observability.model_alarm import ModelAlarmOptions
from fm_platform.constructs.observability.topic import NotificationTopicOptions, notification_topic
from fm_platform.constructs.secure_bucket import SecureBucket, SecureBucketProps
from fm_platform.core.options import options_values
from fm_platform.stacks.artifacts import ModelArtifacts, ModelArtifactsStack
from fm_platform.stacks.limits import check_resource_count


def _output_id(prefix: str, name: str) -> str:
    return prefix + "".join(part.capitalize() for part in name.split("-"))


class InferenceStack(Stack):
    """Endpoints and models from an :class:`InferenceConfig`.

    Construct IDs derive from names, never positions: ``IcEndpoint-<name>`` (with
    ``Endpoint`` and ``Model-<model_name>`` inside), ``SingleModelEndpoint-<name>``,
    ``MultiModelEndpoint-<name>``, ``AsyncEndpoint-<name>`` and, with asynchronous
    endpoints, ``AsyncInference`` (their bucket).

    ``artifacts``: the bucket the models read (a :class:`ModelArtifacts`); by default the
    configuration's ``artifacts_bucket_name`` when set (an existing bucket), else a
    :class:`ModelArtifactsStack` created next to this stack in the same scope, named
    ``<construct_id>Artifacts``. A bucket of another stack is read through that stack's
    exports (strong references, set here whatever the app's flags), so this stack depends
    on it and the bucket cannot go while endpoints read it: deploy the artifacts stack,
    upload the artifacts, then deploy this stack.

    ``vpc``: when given, every endpoint runs in its private subnets, each with a dedicated
    security group; by default they use SageMaker's network. Every endpoint's models run
    without network access unless its spec sets ``network_isolation=False``.

    Attributes: ``config``, ``artifacts`` (the :class:`ModelArtifacts`), ``artifacts_stack``
    (None unless created here), ``ic_endpoints``, ``ic_models`` (by model name),
    ``single_model_endpoints``, ``multi_model_endpoints``, ``async_endpoints``,
    ``serverless_endpoints`` (``ServerlessEndpoint-<name>``) (dicts by
    name), ``async_storage`` (the asynchronous endpoints' :class:`SecureBucket`; None
    without them).

    Outputs: ``EndpointNames`` (comma-separated, read by the ``fmp`` CLI),
    ``Endpoint<Name>`` per endpoint, ``Components<Name>`` per IC endpoint (the exact
    component names to pass as ``--inference-component-name``, comma-separated),
    and ``InvokeExample`` (a CLI command for the first IC model, with its component name).
    Per asynchronous endpoint ``AsyncInput<Name>`` (where to upload request bodies),
    ``AsyncOutput<Name>`` and ``AsyncFailure<Name>`` (where results and failures land), and
    ``AsyncEndpoints`` lists their names; with notifications, ``NotificationTopicArn``. That
    is 3 + endpoints + IC endpoints + 3 x asynchronous endpoints (+ 1 with any) outputs,
    whatever the number of models (CloudFormation allows 200). The bucket's name is an
    output of the artifacts stack (``ModelArtifactsBucket``).

    Observability: a notification topic (``Notifications``, see
    :func:`~fm_platform.constructs.observability.topic.notification_topic`), and under
    ``Observability`` an alarm per model and per endpoint, each as its configuration's
    ``alarms`` say, and dashboards (see
    :func:`~fm_platform.constructs.observability.inference_observability.watch_inference`;
    attribute ``observability``); ``notifications=None`` creates no topic and no alarm,
    ``dashboards=False`` no dashboard.
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
        artifacts: ModelArtifacts | None = None,
        **stack_kwargs: Any,
    ) -> None:
        """Build the stack's endpoints and models from ``config``; it is validated first.
        ``notifications`` and ``dashboards``: see the class docstring."""
        super().__init__(scope, construct_id, **stack_kwargs)
        CrossStackReferences.of(self).consume(ReferenceStrength.STRONG)
        config.validate()
        self.config = config
        self.vpc = vpc
        self.artifacts_stack: ModelArtifactsStack | None = None
        if artifacts is None and config.artifacts_bucket_name is not None:
            artifacts = ModelArtifacts.existing(
                self, config.artifacts_bucket_name, config.artifacts_key_arn
            )
        if artifacts is None:
            self.artifacts_stack = _artifacts_stack(scope, construct_id, stack_kwargs)
            artifacts = self.artifacts_stack.artifacts
        self.artifacts = _imported_into(self, artifacts)
        self.ic_endpoints: dict[str, InferenceComponentEndpoint] = {}
        self.ic_models: dict[str, InferenceComponentModel] = {}
        self.single_model_endpoints: dict[str, SingleModelEndpoint] = {}
        self.multi_model_endpoints: dict[str, MultiModelEndpoint] = {}
        self.async_endpoints: dict[str, AsyncEndpoint] = {}
        self.async_storage: SecureBucket | None = None
        for ic_item in config.ic_endpoints:
            self._ic_endpoint(ic_item)
        for single_item in config.single_model_endpoints:
            self._single_model_endpoint(single_item)
        for multi_item in config.multi_model_endpoints:
            self._multi_model_endpoint(multi_item)
        for async_item in config.async_endpoints:
            self._async_endpoint(async_item)
        self.serverless_endpoints: dict[str, ServerlessEndpoint] = {}
        for serverless_item in config.serverless_endpoints:
            options = options_values(ServerlessEndpointOptions, serverless_item)
            options["container"] = self._container(
                serverless_item.container, serverless_item.name, archive=True
            )
            self.serverless_endpoints[serverless_item.name] = ServerlessEndpoint(
                self,
                f"ServerlessEndpoint-{serverless_item.name}",
                ServerlessEndpointProps(**options, artifact_key=self.artifacts.key),
            )
        self._add_outputs()
        watching = Construct(self, "Observability")
        topic = notification_topic(self, notifications, "inference alarms")
        self.observability = watch_inference(
            watching,
            InferenceObservabilityProps(
                endpoints=self._watched_endpoints(),
                async_endpoints=[
                    WatchedAsyncEndpoint(
                        label=item.name,
                        endpoint=self.async_endpoints[item.name],
                        alarms=item.alarms,
                        max_instance_count=item.scaling.max_instances if item.scaling else None,
                    )
                    for item in config.async_endpoints
                ],
                serverless_endpoints=[
                    WatchedServerlessEndpoint(
                        label=item.name,
                        endpoint=self.serverless_endpoints[item.name],
                        alarms=item.alarms,
                        provisioned=item.provisioned_concurrency is not None,
                    )
                    for item in config.serverless_endpoints
                ],
                topic=topic.topic if topic is not None else None,
                dashboards=dashboards,
            ),
        )
        check_resource_count(
            self,
            "split the endpoints across several InferenceStacks (a model with scaling takes "
            "about 4 resources, 6 when it scales to zero)",
        )

    # -- defaults ---------------------------------------------------------------------------

    def _container(
        self, container: ModelContainer, model_name: str, *, archive: bool = False
    ) -> ModelContainer:
        """``container`` with its artifacts by default in this stack's bucket: the
        uncompressed files under the model's prefix, or (``archive``) the
        ``model.tar.gz`` there."""
        if container.model_data_url is not None or not container.uses_artifacts:
            return container
        url = self.artifacts.archive_url(model_name) if archive else self.artifacts.url(model_name)
        return replace(container, model_data_url=url)

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
            options["per_instance_type"] = [
                replace(entry, container=self._container(entry.container, model.model_name))
                if entry.container is not None
                else entry
                for entry in model.per_instance_type or ()
            ]
            created = endpoint.add_model(
                f"Model-{model.model_name}",
                InferenceComponentModelOptions(**options),
                artifact_key=self.artifacts.key,
                scope=group,
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
        options["fallback_pools"] = [
            replace(pool, container=self._container(pool.container, item.name))
            if pool.container is not None
            else pool
            for pool in item.fallback_pools or ()
        ]
        endpoint = SingleModelEndpoint(
            self,
            f"SingleModelEndpoint-{item.name}",
            SingleModelEndpointProps(**options, vpc=self.vpc, artifact_key=self.artifacts.key),
        )
        self.single_model_endpoints[item.name] = endpoint

    def _multi_model_endpoint(self, item: MultiModelEndpointConfig) -> None:
        options = options_values(MultiModelEndpointOptions, item)
        options["models_s3_prefix"] = item.models_s3_prefix or self.artifacts.url(item.name)
        endpoint = MultiModelEndpoint(
            self,
            f"MultiModelEndpoint-{item.name}",
            MultiModelEndpointProps(**options, vpc=self.vpc, artifact_key=self.artifacts.key),
        )
        self.multi_model_endpoints[item.name] = endpoint

    def _async_endpoint(self, item: AsyncEndpointConfig) -> None:
        if self.async_storage is None:
            self.async_storage = SecureBucket(
                self,
                "AsyncInference",
                SecureBucketProps(purpose="SageMaker asynchronous inference requests and results"),
            )
        options = options_values(AsyncEndpointOptions, item)
        options["container"] = self._container(item.container, item.name)
        options["s3_prefix"] = item.prefix
        endpoint = AsyncEndpoint(
            self,
            f"AsyncEndpoint-{item.name}",
            AsyncEndpointProps(
                **options,
                vpc=self.vpc,
                artifact_key=self.artifacts.key,
                results_bucket=self.async_storage.bucket,
                results_key=self.async_storage.encryption_key,
            ),
        )
        self.async_endpoints[item.name] = endpoint

    def _watched_endpoints(self) -> list[WatchedEndpoint]:
        """The real-time endpoints as the configuration asks them watched, in order."""
        config = self.config
        watched = [
            WatchedEndpoint(
                label=item.name,
                endpoint=self.ic_endpoints[item.name],
                kind=IC_KIND,
                alarms=item.alarms,
                min_instance_count=item.min_instance_count,
                max_instance_count=item.max_instance_count,
                models=[
                    WatchedModel(
                        model=self.ic_models[model.model_name],
                        alarms=getattr(model, "alarms", None) or ModelAlarmOptions(),
                    )
                    for model in item.models
                ],
            )
            for item in config.ic_endpoints
        ]
        variants: list[
            tuple[SingleModelEndpointConfig | MultiModelEndpointConfig, IEndpoint, str]
        ] = [
            *(
                (item, self.single_model_endpoints[item.name], SINGLE_KIND)
                for item in config.single_model_endpoints
            ),
            *(
                (item, self.multi_model_endpoints[item.name], MULTI_KIND)
                for item in config.multi_model_endpoints
            ),
        ]
        for item, endpoint, kind in variants:
            scaling = item.scaling
            watched.append(
                WatchedEndpoint(
                    label=item.name,
                    endpoint=endpoint,
                    kind=kind,
                    alarms=item.alarms,
                    min_instance_count=scaling.min_instances if scaling else None,
                    max_instance_count=scaling.max_instances if scaling else None,
                )
            )
        return watched

    # -- outputs ----------------------------------------------------------------------------

    def _add_outputs(self) -> None:
        names: dict[str, str] = {
            **{n: e.endpoint_name for n, e in self.ic_endpoints.items()},
            **{n: e.endpoint_name for n, e in self.single_model_endpoints.items()},
            **{n: e.endpoint_name for n, e in self.multi_model_endpoints.items()},
            **{n: e.endpoint_name for n, e in self.async_endpoints.items()},
            **{n: e.endpoint_name for n, e in self.serverless_endpoints.items()},
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
        self._add_async_outputs()
        example = self._invoke_example()
        if example is not None:
            CfnOutput(
                self,
                "InvokeExample",
                value=example,
                description="Invoke a model (write the request body to request.json first)",
            )

    def _add_async_outputs(self) -> None:
        if not self.async_endpoints:
            return
        CfnOutput(
            self,
            "AsyncEndpoints",
            value=Fn.join(",", [e.endpoint_name for e in self.async_endpoints.values()]),
            description="The asynchronous endpoints' names, comma-separated: invoke them with "
            "fmp endpoint invoke-async",
        )
        for name, endpoint in self.async_endpoints.items():
            locations = {
                "AsyncInput": (
                    endpoint.input_location,
                    f"Upload request bodies for {name} under this S3 prefix, then "
                    "fmp endpoint invoke-async ENDPOINT --input s3://...",
                ),
                "AsyncOutput": (endpoint.output_location, f"Results of {name}"),
                "AsyncFailure": (endpoint.failure_location, f"Failed requests of {name}"),
            }
            for prefix, (value, description) in locations.items():
                CfnOutput(self, _output_id(prefix, name), value=value, description=description)

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


def _artifacts_stack(
    scope: Construct, construct_id: str, stack_kwargs: dict[str, Any]
) -> ModelArtifactsStack:
    """The artifacts stack created for an InferenceStack given none: same environment and
    synthesizer, its own name and description."""
    kwargs = {k: v for k, v in stack_kwargs.items() if k not in ("description", "stack_name")}
    if stack_kwargs.get("stack_name"):
        kwargs["stack_name"] = f"{stack_kwargs['stack_name']}Artifacts"
    return ModelArtifactsStack(
        scope,
        f"{construct_id}Artifacts",
        description="fm_platform: model artifacts bucket (deploy it and upload the models "
        "before the endpoints)",
        **kwargs,
    )


def _imported_into(stack: Stack, artifacts: ModelArtifacts) -> ModelArtifacts:
    """``artifacts`` as ``stack`` refers to them: a bucket (and key) of another stack is
    imported through that stack's exports up front, so that every ARN built from it (grants,
    their cdk-nag acknowledgements) already reads as the import the template holds."""
    producer = Stack.of(artifacts.bucket)
    if producer is stack:
        return artifacts
    # An import written out is not a reference CDK tracks: depend on the producer here.
    stack.add_stack_dependency(producer, "the models read their artifacts from its bucket")
    bucket = s3.Bucket.from_bucket_name(
        stack, "ArtifactsBucketImport", producer.export_value(artifacts.bucket.bucket_name)
    )
    key = artifacts.key
    if key is not None:
        key = kms.Key.from_key_arn(
            stack, "ArtifactsKeyImport", Stack.of(key).export_value(key.key_arn)
        )
    return ModelArtifacts(bucket=bucket, key=key)
