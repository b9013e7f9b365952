"""IAM roles that Kubernetes service accounts of the HyperPod EKS cluster assume: through
EKS Pod Identity (:func:`pod_identity_role`) or through IAM roles for service accounts
(IRSA: :class:`ServiceAccountIssuer`, for the add-ons whose documentation asks for it), and
the customer-managed policy each role's own statements go in (:func:`role_policy`).

IRSA in CloudFormation alone: the cluster's OpenID Connect issuer becomes an
``AWS::IAM::OIDCProvider`` (no thumbprint: IAM trusts the issuer's certificate authority
itself for EKS issuers; IAM User Guide, "Create an OpenID Connect (OIDC) identity provider
in IAM"), and a role's trust policy names the issuer in its condition keys
(``<issuer>:sub``, ``<issuer>:aud``; EKS User Guide, "Assign IAM roles to Kubernetes service
accounts"). A JSON key cannot hold a reference, so the trust policy is written as one
``Fn::Sub`` string (``AssumeRolePolicyDocument`` takes a string or an object in the
``AWS::IAM::Role`` schema), with no custom resource.
"""

from __future__ import annotations

import json
from typing import cast

from aws_cdk import Fn, Stack
from aws_cdk import aws_iam as iam
from constructs import Construct

from fm_platform.core.compliance import acknowledge

#: The audience EKS's token projection writes for IRSA tokens.
_STS_AUDIENCE = "sts.amazonaws.com"


def role_policy(role: iam.Role, *statements: iam.PolicyStatement) -> iam.ManagedPolicy:
    """``statements`` in a customer-managed policy of ``role`` (construct ID ``Policy``
    under the role; the compliance packs refuse inline policies)."""
    return iam.ManagedPolicy(
        role,
        "Policy",
        description=f"{role.node.id} (fm_platform)",
        roles=[role],
        statements=list(statements),
    )


def attach_managed_policy(role: iam.Role, name: str) -> None:
    """Attach the AWS managed policy ``name``, the one AWS documents for the add-on whose
    service account assumes ``role``, acknowledging the finding."""
    role.add_managed_policy(iam.ManagedPolicy.from_aws_managed_policy_name(name))
    acknowledge(
        role,
        f"{name} is the policy AWS documents for this add-on's service account and keeps "
        "in step with the add-on's versions.",
        f"AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/{name}]",
    )


def pod_identity_role(
    scope: Construct, construct_id: str, cluster_arn: str, *, managed_policy: str | None = None
) -> iam.Role:
    """A role EKS Pod Identity hands to a service account of the EKS cluster
    ``cluster_arn`` only, with the AWS managed policy ``managed_policy`` when given."""
    # Pod Identity assumes the role with session tags (sts:TagSession too).
    principal = (
        iam.ServicePrincipal("pods.eks.amazonaws.com")
        .with_conditions(
            {
                "StringEquals": {
                    "aws:SourceAccount": Stack.of(scope).account,
                    "aws:SourceArn": cluster_arn,
                }
            }
        )
        .with_session_tags()
    )
    role = iam.Role(
        scope,
        construct_id,
        assumed_by=principal,
        description=f"EKS Pod Identity: {construct_id} of the HyperPod cluster (fm_platform)",
    )
    if managed_policy is not None:
        attach_managed_policy(role, managed_policy)
    return role


class ServiceAccountIssuer(Construct):
    """The EKS cluster's OpenID Connect issuer as an IAM identity provider (construct ID
    ``Resource``), and roles that service accounts of the cluster assume through it
    (:meth:`role`).

    Attributes: ``provider`` (the ``CfnOIDCProvider``), ``provider_arn``, ``issuer`` (the
    issuer URL without ``https://``, as IAM condition keys name it).
    """

    def __init__(self, scope: Construct, construct_id: str, *, issuer_url: str) -> None:
        """Register ``issuer_url`` (``AWS::EKS::Cluster`` ``OpenIdConnectIssuerUrl``)."""
        super().__init__(scope, construct_id)
        self.provider = iam.CfnOIDCProvider(
            self, "Resource", url=issuer_url, client_id_list=[_STS_AUDIENCE]
        )
        self.provider_arn: str = self.provider.attr_arn
        self.issuer: str = Fn.select(1, Fn.split("//", issuer_url))

    def role(
        self,
        scope: Construct,
        construct_id: str,
        subject: str,
        *,
        role_name: str | None = None,
        sagemaker_too: bool = False,
    ) -> iam.Role:
        """A role the service accounts ``subject`` matches assume (``system:serviceaccount:
        <namespace>:<name>``; a ``*`` in it matches with ``StringLike``); with
        ``sagemaker_too``, SageMaker of this account may assume it as well (the inference
        operator hands its roles to SageMaker)."""
        role = iam.Role(
            scope,
            construct_id,
            role_name=role_name,
            # Replaced below by the Fn::Sub trust policy; the principal keeps the L2's view.
            assumed_by=iam.FederatedPrincipal(
                self.provider_arn, {}, "sts:AssumeRoleWithWebIdentity"
            ),
            description=f"IRSA: {construct_id} of the HyperPod EKS cluster (fm_platform)",
        )
        operator = "StringLike" if "*" in subject else "StringEquals"
        statements: list[dict[str, object]] = [
            {
                "Effect": "Allow",
                "Principal": {"Federated": "${Provider}"},
                "Action": "sts:AssumeRoleWithWebIdentity",
                "Condition": {operator: {"${Issuer}:sub": subject, "${Issuer}:aud": _STS_AUDIENCE}},
            }
        ]
        if sagemaker_too:
            statements.append(
                {
                    "Effect": "Allow",
                    "Principal": {"Service": "sagemaker.amazonaws.com"},
                    "Action": "sts:AssumeRole",
                    "Condition": {"StringEquals": {"aws:SourceAccount": "${AWS::AccountId}"}},
                }
            )
        document = json.dumps({"Version": "2012-10-17", "Statement": statements})
        cast(iam.CfnRole, role.node.default_child).add_property_override(
            "AssumeRolePolicyDocument",
            Fn.sub(document, {"Provider": self.provider_arn, "Issuer": self.issuer}),
        )
        return role
