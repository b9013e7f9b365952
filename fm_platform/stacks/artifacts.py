"""Where the models' artifacts live: a stack of its own that deploys before the endpoints,
or a bucket that already exists.

SageMaker reads a model's artifacts while it creates the endpoint, so they must be in the
bucket before the endpoint stack deploys: deploy the artifacts stack, upload, then deploy
the endpoints (``cdk deploy FmpInferenceArtifacts``, ``aws s3 sync``, ``cdk deploy
FmpInference``). The bucket is retained, so deleting the endpoints (or this stack) keeps
the models.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aws_cdk import CfnOutput, Stack
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from fm_platform.constructs.secure_bucket import SecureBucket, SecureBucketProps

#: Key prefix of model artifacts in the bucket: ``models/<model-name>/``.
ARTIFACTS_PREFIX = "models"
#: The archive a serverless model reads under its prefix (Serverless Inference reads a
#: ``model.tar.gz`` only, never uncompressed files).
ARCHIVE_NAME = "model.tar.gz"


@dataclass(frozen=True, kw_only=True)
class ModelArtifacts:
    """The bucket models read their artifacts from.

    bucket: the bucket. key: the KMS key its objects are encrypted with; None when they are
    not encrypted with a key the execution roles must be granted (e.g. SSE-S3).
    """

    bucket: s3.IBucket
    key: kms.IKey | None = None

    @property
    def encryption_key(self) -> kms.IKey | None:
        """``key`` (the name the stack's former ``artifacts`` bucket construct used)."""
        return self.key

    def url(self, name: str) -> str:
        """The default location of ``name``'s artifacts: ``s3://<bucket>/models/<name>/``."""
        return f"s3://{self.bucket.bucket_name}/{ARTIFACTS_PREFIX}/{name}/"

    def archive_url(self, name: str) -> str:
        """The default location of ``name``'s artifacts as one archive, for a model that
        cannot read uncompressed files (a serverless one):
        ``s3://<bucket>/models/<name>/model.tar.gz``."""
        return self.url(name) + ARCHIVE_NAME

    @staticmethod
    def existing(scope: Construct, bucket_name: str, key_arn: str | None = None) -> ModelArtifacts:
        """A bucket that already exists, by name (``key_arn``: its objects' KMS key, when
        the execution roles need a decrypt grant)."""
        bucket = s3.Bucket.from_bucket_name(scope, "ArtifactsBucketImport", bucket_name)
        key = kms.Key.from_key_arn(scope, "ArtifactsKeyImport", key_arn) if key_arn else None
        return ModelArtifacts(bucket=bucket, key=key)


class ModelArtifactsStack(Stack):
    """A KMS-encrypted, versioned, TLS-only, access-logged bucket for model artifacts
    (``ModelArtifacts``: a :class:`SecureBucket`, retained with its key), in a stack that
    deploys before the endpoints that read it.

    Attributes: ``storage`` (the :class:`SecureBucket`), ``artifacts`` (a
    :class:`ModelArtifacts` to give an ``InferenceStack``). Outputs: ``ModelArtifactsBucket``
    (upload to ``s3://<bucket>/models/<model-name>/``) and ``ModelArtifactsKeyArn``.
    """

    def __init__(self, scope: Construct, construct_id: str, **stack_kwargs: Any) -> None:
        """Create the bucket."""
        super().__init__(scope, construct_id, **stack_kwargs)
        self.storage = SecureBucket(
            self,
            "ModelArtifacts",
            # A model's new weights replace its artifacts under the same prefix.
            SecureBucketProps(purpose="SageMaker model artifacts", replaced_in_place=True),
        )
        self.artifacts = ModelArtifacts(bucket=self.storage.bucket, key=self.storage.encryption_key)
        CfnOutput(
            self,
            "ModelArtifactsBucket",
            value=self.storage.bucket.bucket_name,
            description=f"Upload model artifacts to s3://<bucket>/{ARTIFACTS_PREFIX}/<model-name>/"
            " before deploying the endpoints",
        )
        CfnOutput(
            self,
            "ModelArtifactsKeyArn",
            value=self.storage.encryption_key.key_arn,
            description="KMS key of the model artifacts (uploads are encrypted with it)",
        )
