"""The container a hosted model runs: image, artifacts, environment, and its CloudFormation
container property."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from fm_platform.images import deep_learning_container_image


@dataclass(frozen=True, kw_only=True)
class ModelContainer:
    """The container a model runs in.

    image: the container image URI (an ECR image); by default the Large Model Inference
        Deep Learning Container in the stack's region
        (:func:`fm_platform.deep_learning_container_image`), filled in by the construct that
        hosts the container (:meth:`with_image_for`).
    model_data_url: the S3 URI of a ``model.tar.gz``, or an S3 prefix ending in ``/``
        holding uncompressed artifacts; by default no artifacts are attached and the
        container brings or fetches its model.
    environment: environment variables of the container; by default none.
    """

    image: str | None = None
    model_data_url: str | None = None
    environment: Mapping[str, str] = field(default_factory=dict)

    def with_image_for(self, scope: Construct) -> ModelContainer:
        """This container; without an image, a copy with the default image of ``scope``'s
        stack's region."""
        if self.image is not None:
            return self
        return replace(self, image=deep_learning_container_image(scope))

    @property
    def is_uncompressed(self) -> bool:
        """True when ``model_data_url`` is an S3 prefix of uncompressed artifacts."""
        return self.model_data_url is not None and self.model_data_url.endswith("/")

    def to_container_property(self) -> sagemaker.CfnModel.ContainerDefinitionProperty:
        """The ``AWS::SageMaker::Model`` container definition for this container."""
        environment = dict(self.environment) or None
        if self.model_data_url is None:
            return sagemaker.CfnModel.ContainerDefinitionProperty(
                image=self.image, environment=environment
            )
        if self.is_uncompressed:
            return sagemaker.CfnModel.ContainerDefinitionProperty(
                image=self.image,
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
            image=self.image, environment=environment, model_data_url=self.model_data_url
        )
