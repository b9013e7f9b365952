"""The container a hosted model runs: image, artifacts, environment, and its CloudFormation
container property."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from fm_platform.constructs.inference.container_image import ContainerImage
from fm_platform.core.tokens import is_unresolved, known
from fm_platform.rules.model_container import check_environment, check_model_data_url
from fm_platform.rules.problems import Problems


@dataclass(frozen=True, kw_only=True)
class ModelContainer:
    """The container a model runs in (the configuration's ``container`` keys too).

    image: the container image, as a URI or a :class:`ContainerImage`; by default the Large
        Model Inference (``lmi``) GPU image of the image table in the hosting stack's region
        (:meth:`ContainerImage.from_family`).
    model_data_url: the S3 URI of a ``model.tar.gz`` (ending in ``.tar.gz``), or an S3
        prefix ending in ``/`` holding uncompressed artifacts (not on serverless
        endpoints, which read a ``model.tar.gz`` only); by default no artifacts are
        attached and the container brings or fetches its model.
    environment: environment variables of the container (at most 100, names of letters,
        digits and ``_``, each name and value at most 1024 bytes, 32 KB together); by
        default none.
    model_size_gib: the size of the model's weights in GiB (parameters x bytes per
        parameter: a 7B model in bf16 is about 13 GiB); the startup timeouts and, on types
        without a local disk, the storage volume follow from it. By default unknown: the
        hosting construct estimates from what the copy reserves or the instance holds.
    uses_artifacts: False when the container downloads its model itself (a Hugging Face
        hub id): the stacks then attach no artifacts of their bucket; by default True.
    """

    image: str | ContainerImage | None = None
    model_data_url: str | None = None
    environment: Mapping[str, str] = field(default_factory=dict)
    model_size_gib: float | None = None
    uses_artifacts: bool = True

    def check(self, problems: Problems, field: str = "container") -> None:
        """Record every problem of this container in ``problems``, under ``field``."""
        if self.model_size_gib is not None and self.model_size_gib <= 0:
            problems.add(f"{field}.model_size_gib", self.model_size_gib, "must be greater than 0")
        check_model_data_url(problems, f"{field}.model_data_url", self.model_data_url)
        check_environment(problems, f"{field}.environment", plain_environment(self.environment))

    def container_image(self) -> ContainerImage:
        """The image as a :class:`ContainerImage`, the default one when none is set."""
        if self.image is None:
            return ContainerImage.from_family()
        return ContainerImage.of(self.image)

    def with_image_for(self, scope: Construct) -> ModelContainer:
        """This container with its image as a :class:`ContainerImage` (the default one
        when none is set); ``scope`` is kept for compatibility."""
        if isinstance(self.image, ContainerImage):
            return self
        return replace(self, image=self.container_image())

    def image_uri(self, scope: Construct) -> str:
        """The image's URI for a model in ``scope``'s stack."""
        return self.container_image().image_uri(scope)

    @property
    def is_uncompressed(self) -> bool:
        """True when ``model_data_url`` is an S3 prefix of uncompressed artifacts."""
        return self.model_data_url is not None and self.model_data_url.endswith("/")

    def to_container_property(
        self, scope: Construct | None = None, *, image_uri: str | None = None
    ) -> sagemaker.CfnModel.ContainerDefinitionProperty:
        """The ``AWS::SageMaker::Model`` container definition for this container, naming the
        image by ``image_uri``, else as a model in ``scope``'s stack names it (needed
        unless the image is a URI string)."""
        if image_uri is None:
            if isinstance(self.image, str):
                image_uri = self.image
            elif scope is not None:
                image_uri = self.image_uri(scope)
            else:
                raise ValueError("to_container_property needs a scope to name a ContainerImage")
        environment = dict(self.environment) or None
        if self.model_data_url is None:
            return sagemaker.CfnModel.ContainerDefinitionProperty(
                image=image_uri, environment=environment
            )
        if self.is_uncompressed:
            return sagemaker.CfnModel.ContainerDefinitionProperty(
                image=image_uri,
                environment=environment,
                model_data_source=sagemaker.CfnModel.ModelDataSourceProperty(
                    s3_data_source=sagemaker.CfnModel.S3DataSourceProperty(
                        s3_uri=self.model_data_url,
                        s3_data_type="S3Prefix",
                        compression_type="None",
                    )
                ),
            )
        return sagemaker.CfnModel.ContainerDefinitionProperty(
            image=image_uri, environment=environment, model_data_url=self.model_data_url
        )


def plain_environment(environment: Mapping[str, str] | None) -> dict[str, str | None]:
    """``environment`` for the rules: a value known only at deploy time (a token) as None,
    a name that is a token left out."""
    return {
        key: known(value) for key, value in (environment or {}).items() if not is_unresolved(key)
    }
