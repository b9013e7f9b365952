"""What consumers need from a HyperPod cluster, created here or deployed elsewhere:
:class:`IHyperPodCluster`, which ``HyperPodCluster`` and the clusters its
``from_cluster_name``, ``from_cluster_arn`` and ``from_cluster_attributes`` import
(:class:`ImportedHyperPodCluster`, described by :class:`HyperPodClusterAttributes`)
implement.

A cluster's ARN does not hold its name: it ends in a generated ID
(``arn:aws:sagemaker:<region>:<account>:cluster/<12 characters>``, botocore ``ClusterArn``),
and CloudFormation returns no name it generated. So each attribute holds one thing:
``cluster_name`` the name when known, ``cluster_arn`` the ARN when known, and
``cluster_name_or_arn`` whichever is known, what every SageMaker cluster API takes as
``ClusterName`` (botocore ``ClusterNameOrArn``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from aws_cdk import Fn, Resource
from constructs import Construct, Node

from fm_platform.core.tokens import known
from fm_platform.rules.problems import Problems


class IHyperPodCluster(Protocol):
    """A HyperPod cluster: its name, ARN and ID when known, and the identifier the
    SageMaker cluster APIs take (``cluster_name_or_arn``)."""

    @property
    def node(self) -> Node: ...

    @property
    def cluster_name(self) -> str | None:
        """The cluster's name; None when it is not known (CloudFormation generated it, or
        the cluster was imported by ARN)."""
        ...

    @property
    def cluster_arn(self) -> str | None:
        """The cluster's ARN; None for a cluster imported by name."""
        ...

    @property
    def cluster_id(self) -> str | None:
        """The last part of the ARN (SSM targets name it); None without the ARN."""
        ...

    @property
    def cluster_name_or_arn(self) -> str:
        """The name when known, else the ARN: what every SageMaker cluster API takes as
        ``ClusterName``."""
        ...


def cluster_id_of(cluster_arn: str) -> str:
    """The ID that ends ``cluster_arn`` (a token when the ARN is one)."""
    return Fn.select(1, Fn.split("/", cluster_arn))


@dataclass(frozen=True, kw_only=True)
class HyperPodClusterAttributes:
    """A HyperPod cluster deployed elsewhere, as ``HyperPodCluster.from_cluster_attributes``
    takes it: at least one of

    cluster_name: the cluster's name; by default unknown.
    cluster_arn: the cluster's ARN; by default unknown (it cannot be built from the name).
    """

    cluster_name: str | None = None
    cluster_arn: str | None = None

    def check(self, problems: Problems) -> None:
        """Record every problem of these attributes in ``problems`` (values that are
        tokens are not checked)."""
        if self.cluster_name is None and self.cluster_arn is None:
            problems.add("cluster_name", None, "give the cluster's name or its ARN")
        problems.check_shape("cluster_name", known(self.cluster_name), "ClusterName")
        problems.check_shape("cluster_arn", known(self.cluster_arn), "ClusterArn")

    def validate(self) -> None:
        """Raise one ``ValueError`` listing every problem in these attributes."""
        problems = Problems(type(self).__name__)
        self.check(problems)
        problems.raise_if_any()


class ImportedHyperPodCluster(Resource):
    """A HyperPod cluster deployed elsewhere (see :class:`HyperPodClusterAttributes`);
    nothing is created. Its account and region (``env``) are those of its ARN when known,
    else its stack's."""

    def __init__(
        self, scope: Construct, construct_id: str, attrs: HyperPodClusterAttributes
    ) -> None:
        """Describe the cluster under ``scope``; ``attrs`` are validated first."""
        attrs.validate()
        super().__init__(scope, construct_id, environment_from_arn=attrs.cluster_arn)
        self.cluster_name: str | None = attrs.cluster_name
        self.cluster_arn: str | None = attrs.cluster_arn
        self.cluster_id: str | None = (
            cluster_id_of(attrs.cluster_arn) if attrs.cluster_arn is not None else None
        )
        # validate() refuses attributes without either.
        self.cluster_name_or_arn: str = attrs.cluster_name or attrs.cluster_arn or ""
