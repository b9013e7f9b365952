"""The HyperPod inference operator on the EKS cluster: the ``amazon-sagemaker-hyperpod-inference``
add-on and everything it needs, in the order the template states.

What it needs (SageMaker developer guide, "Setting up your HyperPod clusters for model
deployment" and its troubleshooting pages; AWS's add-on configuration as
aws/sagemaker-hyperpod-cli's ``helm_chart/HyperPodHelmChart/charts/inference-operator``
migration script writes it; awslabs/awsome-distributed-training, hyperpod-eks-tf module
``hyperpod_inference_operator``):

- the EKS cluster's OpenID Connect provider: the operator, the AWS Load Balancer Controller
  and KEDA it brings, and the Mountpoint for Amazon S3 CSI driver take their roles through
  IAM roles for service accounts (IRSA), the way AWS documents them;
- an execution role named ``SageMakerHyperPodInference...`` (the add-on refuses another
  name) with the AWS managed policy ``AmazonSageMakerHyperPodInferenceAccess`` and its TLS
  bucket's objects; a role for gated JumpStart models
  (``AmazonSageMakerHyperPodGatedModelAccess``); the load balancer controller's and KEDA's
  roles;
- an S3 bucket for the TLS certificates it issues (a :class:`SecureBucket`);
- before it, once the HyperPod cluster has nodes: ``cert-manager``, the FSx CSI driver (the
  caller's), the Mountpoint for Amazon S3 CSI driver and ``metrics-server``.

Order in the template (``DependsOn`` or a reference): the roles' policies, the bucket's
policy, the HyperPod cluster and the four add-ons above, then the operator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aws_cdk import Aws, CfnResource, Fn, Names, Stack
from aws_cdk import aws_eks as eks
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from fm_platform.constructs.secure_bucket import SecureBucket, SecureBucketProps
from fm_platform.constructs.training.eks_cluster import EksControlPlane
from fm_platform.constructs.training.eks_roles import (
    ServiceAccountIssuer,
    attach_managed_policy,
    role_policy,
)
from fm_platform.core.compliance import acknowledge_wildcard_resource
from fm_platform.rules.eks import (
    ALB_CONTROLLER_SERVICE_ACCOUNT,
    GATED_MODEL_SUBJECT,
    INFERENCE_NAMESPACE,
    INFERENCE_OPERATOR_SERVICE_ACCOUNT,
    INFERENCE_ROLE_PREFIX,
    KEDA_SERVICE_ACCOUNT,
    S3_CSI_SERVICE_ACCOUNT,
)

INFERENCE_ADDON = "amazon-sagemaker-hyperpod-inference"
#: The managed policies AWS documents for the operator's execution role and for the role
#: of gated JumpStart models (same sources as the module's).
INFERENCE_POLICY = "AmazonSageMakerHyperPodInferenceAccess"
GATED_MODEL_POLICY = "AmazonSageMakerHyperPodGatedModelAccess"
#: IAM role names are at most 64 characters: the prefix, a hyphen, a unique part, a hyphen
#: and the Region (at most 14 characters, e.g. ap-southeast-4).
_ROLE_NAME_UNIQUE = 64 - len(INFERENCE_ROLE_PREFIX) - 2 - 14
#: metrics-server runs on any node, tainted ones included (the hyperpod-eks-tf module's
#: configuration: HyperPod groups are often all tainted).
_TOLERATE_ALL = {
    "tolerations": [
        {"operator": "Exists", "effect": effect}
        for effect in ("NoSchedule", "NoExecute", "PreferNoSchedule")
    ]
}


def _subject(namespace: str, service_account: str) -> str:
    return f"system:serviceaccount:{namespace}:{service_account}"


@dataclass(frozen=True, kw_only=True)
class InferenceOperatorProps:
    """Options of :class:`InferenceOperator`.

    control_plane: the EKS cluster (its issuer, its add-ons).
    cluster: the HyperPod cluster: the operator serves on its nodes, and every add-on here
        is created after it.
    after: the other add-ons the operator is created after: ``cert-manager`` and the FSx
        CSI driver.
    """

    control_plane: EksControlPlane
    cluster: sagemaker.CfnCluster
    after: Sequence[CfnResource]


class InferenceOperator(Construct):
    """The OpenID Connect provider (``Issuer``), the TLS certificates' bucket
    (``TlsCertificates``, kept on stack deletion like every bucket of the project), the roles
    (``ExecutionRole``, ``GatedModelRole``, ``LoadBalancerControllerRole``, ``KedaRole``,
    ``S3CsiDriverRole``) and the add-ons ``S3CsiDriver``, ``MetricsServer`` and
    ``InferenceOperator`` (under the control plane, beside the other add-ons).

    Attributes: ``issuer``, ``tls_bucket`` (the :class:`SecureBucket`), ``execution_role``,
    ``load_balancer_controller_role``, ``keda_role``, ``add_ons`` (by construct ID, in
    creation order), ``add_on`` (the operator's).
    """

    def __init__(self, scope: Construct, construct_id: str, props: InferenceOperatorProps) -> None:
        """Create the operator and its prerequisites under ``scope``."""
        super().__init__(scope, construct_id)
        control = props.control_plane
        self.issuer = ServiceAccountIssuer(
            self, "Issuer", issuer_url=control.cluster.attr_open_id_connect_issuer_url
        )
        self.tls_bucket = SecureBucket(
            self,
            "TlsCertificates",
            SecureBucketProps(purpose="TLS certificates of the HyperPod inference operator"),
        )
        self.execution_role = self._execution_role()
        self.load_balancer_controller_role, alb_policy = self._load_balancer_controller_role()
        self.keda_role, keda_policy = self._keda_role()
        policies = [self._policy_of(self.execution_role), alb_policy, keda_policy]
        gated = self.issuer.role(self, "GatedModelRole", GATED_MODEL_SUBJECT, sagemaker_too=True)
        attach_managed_policy(gated, GATED_MODEL_POLICY)
        s3_role, s3_policy = self._s3_csi_driver_role()
        s3_driver = control.add_on("S3CsiDriver", "aws-mountpoint-s3-csi-driver")
        s3_driver.service_account_role_arn = s3_role.role_arn
        s3_driver.node.add_dependency(s3_policy)
        metrics = control.add_on("MetricsServer", "metrics-server")
        metrics.configuration_values = Stack.of(self).to_json_string(_TOLERATE_ALL)
        self.add_on = control.add_on("InferenceOperator", INFERENCE_ADDON)
        # Its configuration names the HyperPod cluster: created after it.
        self.add_on.configuration_values = Stack.of(self).to_json_string(
            self._configuration(props.cluster.attr_cluster_arn, gated)
        )
        for add_on in (s3_driver, metrics):
            add_on.add_resource_dependency(props.cluster)
            self.add_on.add_resource_dependency(add_on)
        for before in props.after:
            self.add_on.add_resource_dependency(before)
        for policy in policies:
            self.add_on.node.add_dependency(policy)
        bucket_policy = self.tls_bucket.bucket.policy
        if bucket_policy is not None:
            self.add_on.node.add_dependency(bucket_policy)
        self.add_ons: dict[str, eks.CfnAddon] = {
            "S3CsiDriver": s3_driver,
            "MetricsServer": metrics,
            "InferenceOperator": self.add_on,
        }

    def _configuration(self, cluster_arn: str, gated: iam.Role) -> dict[str, object]:
        """The add-on's configuration values (the keys of AWS's migration to the add-on)."""
        return {
            "executionRoleArn": self.execution_role.role_arn,
            "tlsCertificateS3Bucket": self.tls_bucket.bucket.bucket_name,
            "hyperpodClusterArn": cluster_arn,
            "jumpstartGatedModelDownloadRoleArn": gated.role_arn,
            "alb": {
                "enabled": True,
                "serviceAccount": {
                    "create": True,
                    "roleArn": self.load_balancer_controller_role.role_arn,
                },
            },
            "keda": {
                "enabled": True,
                "auth": {"aws": {"irsa": {"enabled": True, "roleArn": self.keda_role.role_arn}}},
            },
        }

    def _execution_role(self) -> iam.Role:
        """The operator's role, named with the prefix the add-on requires; unique in the
        account (IAM names are global: the Region is part of it)."""
        unique = Names.unique_resource_name(self, max_length=_ROLE_NAME_UNIQUE, separator="-")
        role = self.issuer.role(
            self,
            "ExecutionRole",
            _subject(INFERENCE_NAMESPACE, INFERENCE_OPERATOR_SERVICE_ACCOUNT),
            role_name=Fn.join("", [f"{INFERENCE_ROLE_PREFIX}-{unique}-", Aws.REGION]),
            sagemaker_too=True,
        )
        attach_managed_policy(role, INFERENCE_POLICY)
        return role

    def _policy_of(self, role: iam.Role) -> iam.ManagedPolicy:
        """The execution role's own statements: the TLS bucket's objects and its key (what
        AWS's migration to the add-on grants beside the managed policy; listing the bucket,
        as AWS's CloudFormation reference grants it, so that a missing certificate reads as
        missing rather than as denied)."""
        bucket = self.tls_bucket.bucket
        objects = bucket.arn_for_objects("*")
        policy = role_policy(
            role,
            iam.PolicyStatement(
                sid="TlsCertificatesBucket",
                actions=["s3:ListBucket"],
                resources=[bucket.bucket_arn],
            ),
            iam.PolicyStatement(
                sid="TlsCertificates",
                actions=["s3:GetObject", "s3:PutObject", "s3:PutObjectTagging", "s3:DeleteObject"],
                resources=[objects],
            ),
            iam.PolicyStatement(
                sid="TlsCertificatesKey",
                actions=["kms:Decrypt", "kms:GenerateDataKey"],
                resources=[self.tls_bucket.encryption_key.key_arn],
            ),
        )
        acknowledge_wildcard_resource(
            policy,
            "The operator names each certificate object after the model endpoint it issues "
            "it for, in its own bucket only.",
            objects,
        )
        return policy

    def _load_balancer_controller_role(self) -> tuple[iam.Role, iam.ManagedPolicy]:
        """The AWS Load Balancer Controller's role: the controller's own IAM policy
        (kubernetes-sigs/aws-load-balancer-controller ``docs/install/iam_policy.json``, as the
        hyperpod-eks-tf module grants it), with its ARNs in this account and Region."""
        role = self.issuer.role(
            self,
            "LoadBalancerControllerRole",
            _subject(INFERENCE_NAMESPACE, ALB_CONTROLLER_SERVICE_ACCOUNT),
        )
        statements, wildcards = load_balancer_controller_statements(Stack.of(self))
        policy = role_policy(role, *statements)
        acknowledge_wildcard_resource(
            policy,
            "The AWS Load Balancer Controller creates the load balancers, target groups, "
            "listeners and security groups of the models it exposes, whose IDs are not known "
            "in advance; it changes or deletes only those tagged elbv2.k8s.aws/cluster (the "
            "controller's own policy), and its Describe and Get calls support no "
            "resource-level permissions.",
            *wildcards,
        )
        return role, policy

    def _keda_role(self) -> tuple[iam.Role, iam.ManagedPolicy]:
        """KEDA reads the metrics models scale on: CloudWatch (no resource-level
        permissions) and the account's Prometheus workspaces in the Region."""
        role = self.issuer.role(
            self, "KedaRole", _subject(INFERENCE_NAMESPACE, KEDA_SERVICE_ACCOUNT)
        )
        workspaces = Stack.of(self).format_arn(
            service="aps", resource="workspace", resource_name="*"
        )
        policy = role_policy(
            role,
            iam.PolicyStatement(
                sid="ReadCloudWatchMetrics",
                actions=[
                    "cloudwatch:GetMetricData",
                    "cloudwatch:GetMetricStatistics",
                    "cloudwatch:ListMetrics",
                ],
                resources=["*"],
            ),
            iam.PolicyStatement(
                sid="QueryPrometheus",
                actions=[
                    "aps:QueryMetrics",
                    "aps:GetLabels",
                    "aps:GetSeries",
                    "aps:GetMetricMetadata",
                ],
                resources=[workspaces],
            ),
        )
        acknowledge_wildcard_resource(
            policy,
            "KEDA reads the metrics that a model's scaler names when it is deployed: "
            "CloudWatch metric reads support no resource-level permissions, and Prometheus "
            "queries are limited to this account's workspaces in this Region.",
            "*",
            workspaces,
        )
        return role, policy

    def _s3_csi_driver_role(self) -> tuple[iam.Role, iam.ManagedPolicy]:
        """The Mountpoint for Amazon S3 CSI driver's role: read the account's buckets that
        model pods mount (the buckets are named when a model is deployed)."""
        role = self.issuer.role(
            self, "S3CsiDriverRole", _subject("kube-system", S3_CSI_SERVICE_ACCOUNT)
        )
        stack = Stack.of(self)
        buckets = f"arn:{stack.partition}:s3:::*"
        keys = stack.format_arn(service="kms", resource="key", resource_name="*")
        same_account = {"StringEquals": {"aws:ResourceAccount": stack.account}}
        policy = role_policy(
            role,
            iam.PolicyStatement(
                sid="MountModelBuckets",
                actions=["s3:ListBucket", "s3:GetObject"],
                resources=[buckets, f"{buckets}/*"],
                conditions=same_account,
            ),
            iam.PolicyStatement(
                sid="DecryptModelObjects",
                actions=["kms:Decrypt"],
                resources=[keys],
                conditions={
                    **same_account,
                    "StringLike": {"kms:ViaService": f"s3.{stack.region}.amazonaws.com"},
                },
            ),
        )
        acknowledge_wildcard_resource(
            policy,
            "Model pods mount the buckets their deployments name (model weights), unknown to "
            "the cluster; the driver only lists and reads, in this account's buckets, and "
            "decrypts through S3 only.",
            buckets,
            f"{buckets}/*",
            keys,
        )
        return role, policy


def load_balancer_controller_statements(
    stack: Stack,
) -> tuple[list[iam.PolicyStatement], list[str]]:
    """The AWS Load Balancer Controller's policy statements with this account's and
    Region's ARNs, and the wildcard resources among them."""
    security_groups = stack.format_arn(service="ec2", resource="security-group", resource_name="*")
    vpcs = stack.format_arn(service="ec2", resource="vpc", resource_name="*")
    elb = "elasticloadbalancing"
    target_groups = stack.format_arn(service=elb, resource="targetgroup", resource_name="*/*")
    load_balancers = [
        stack.format_arn(service=elb, resource="loadbalancer", resource_name=f"{kind}/*/*")
        for kind in ("net", "app")
    ]
    listeners = [
        stack.format_arn(service=elb, resource=resource, resource_name=f"{kind}/*/*/*")
        for resource in ("listener", "listener-rule")
        for kind in ("net", "app")
    ]
    tagged = {"Null": {"aws:ResourceTag/elbv2.k8s.aws/cluster": "false"}}
    retag = {
        "Null": {
            "aws:RequestTag/elbv2.k8s.aws/cluster": "true",
            "aws:ResourceTag/elbv2.k8s.aws/cluster": "false",
        }
    }
    statements = [
        iam.PolicyStatement(
            actions=["iam:CreateServiceLinkedRole"],
            resources=["*"],
            conditions={"StringEquals": {"iam:AWSServiceName": f"{elb}.amazonaws.com"}},
        ),
        iam.PolicyStatement(actions=list(_ALB_READ), resources=["*"]),
        iam.PolicyStatement(actions=list(_ALB_INTEGRATIONS), resources=["*"]),
        iam.PolicyStatement(actions=list(_INGRESS), resources=[security_groups]),
        # CreateSecurityGroup is authorized on the group and on the VPC it is made in.
        iam.PolicyStatement(actions=["ec2:CreateSecurityGroup"], resources=[security_groups, vpcs]),
        iam.PolicyStatement(
            actions=["ec2:CreateTags"],
            resources=[security_groups],
            conditions={
                "StringEquals": {"ec2:CreateAction": "CreateSecurityGroup"},
                "Null": {"aws:RequestTag/elbv2.k8s.aws/cluster": "false"},
            },
        ),
        iam.PolicyStatement(
            actions=["ec2:CreateTags", "ec2:DeleteTags"],
            resources=[security_groups],
            conditions=retag,
        ),
        iam.PolicyStatement(
            actions=[*_INGRESS, "ec2:DeleteSecurityGroup"],
            resources=[security_groups],
            conditions=tagged,
        ),
        iam.PolicyStatement(
            actions=[f"{elb}:CreateLoadBalancer", f"{elb}:CreateTargetGroup"],
            resources=["*"],
            conditions={"Null": {"aws:RequestTag/elbv2.k8s.aws/cluster": "false"}},
        ),
        iam.PolicyStatement(actions=list(_ALB_LISTENERS), resources=["*"]),
        iam.PolicyStatement(
            actions=[f"{elb}:AddTags", f"{elb}:RemoveTags"],
            resources=[target_groups, *load_balancers],
            conditions=retag,
        ),
        iam.PolicyStatement(actions=[f"{elb}:AddTags", f"{elb}:RemoveTags"], resources=listeners),
        iam.PolicyStatement(actions=list(_ALB_MODIFY), resources=["*"], conditions=tagged),
        iam.PolicyStatement(
            actions=[f"{elb}:AddTags"],
            resources=[target_groups, *load_balancers],
            conditions={
                "StringEquals": {
                    f"{elb}:CreateAction": ["CreateTargetGroup", "CreateLoadBalancer"]
                },
                "Null": {"aws:RequestTag/elbv2.k8s.aws/cluster": "false"},
            },
        ),
        iam.PolicyStatement(
            actions=[f"{elb}:RegisterTargets", f"{elb}:DeregisterTargets"],
            resources=[target_groups],
        ),
    ]
    return statements, ["*", security_groups, vpcs, target_groups, *load_balancers, *listeners]


_INGRESS = ("ec2:AuthorizeSecurityGroupIngress", "ec2:RevokeSecurityGroupIngress")
#: Reads that support no resource-level permissions.
_ALB_READ = (
    "ec2:DescribeAccountAttributes",
    "ec2:DescribeAddresses",
    "ec2:DescribeAvailabilityZones",
    "ec2:DescribeInternetGateways",
    "ec2:DescribeVpcs",
    "ec2:DescribeVpcPeeringConnections",
    "ec2:DescribeSubnets",
    "ec2:DescribeSecurityGroups",
    "ec2:DescribeInstances",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeTags",
    "ec2:GetCoipPoolUsage",
    "ec2:DescribeCoipPools",
    "ec2:GetSecurityGroupsForVpc",
    "ec2:DescribeIpamPools",
    "ec2:DescribeRouteTables",
    "elasticloadbalancing:DescribeLoadBalancers",
    "elasticloadbalancing:DescribeLoadBalancerAttributes",
    "elasticloadbalancing:DescribeListeners",
    "elasticloadbalancing:DescribeListenerCertificates",
    "elasticloadbalancing:DescribeSSLPolicies",
    "elasticloadbalancing:DescribeRules",
    "elasticloadbalancing:DescribeTargetGroups",
    "elasticloadbalancing:DescribeTargetGroupAttributes",
    "elasticloadbalancing:DescribeTargetHealth",
    "elasticloadbalancing:DescribeTags",
    "elasticloadbalancing:DescribeTrustStores",
    "elasticloadbalancing:DescribeListenerAttributes",
    "elasticloadbalancing:DescribeCapacityReservation",
)
#: Certificates, Cognito, WAF and Shield that an Ingress may name.
_ALB_INTEGRATIONS = (
    "cognito-idp:DescribeUserPoolClient",
    "acm:ListCertificates",
    "acm:DescribeCertificate",
    "iam:ListServerCertificates",
    "iam:GetServerCertificate",
    "waf-regional:GetWebACL",
    "waf-regional:GetWebACLForResource",
    "waf-regional:AssociateWebACL",
    "waf-regional:DisassociateWebACL",
    "wafv2:GetWebACL",
    "wafv2:GetWebACLForResource",
    "wafv2:AssociateWebACL",
    "wafv2:DisassociateWebACL",
    "shield:GetSubscriptionState",
    "shield:DescribeProtection",
    "shield:CreateProtection",
    "shield:DeleteProtection",
)
_ALB_LISTENERS = (
    "elasticloadbalancing:CreateListener",
    "elasticloadbalancing:DeleteListener",
    "elasticloadbalancing:CreateRule",
    "elasticloadbalancing:DeleteRule",
    "elasticloadbalancing:SetWebAcl",
    "elasticloadbalancing:ModifyListener",
    "elasticloadbalancing:AddListenerCertificates",
    "elasticloadbalancing:RemoveListenerCertificates",
    "elasticloadbalancing:ModifyRule",
    "elasticloadbalancing:SetRulePriorities",
)
#: Changes to the load balancers and target groups the controller made (tagged).
_ALB_MODIFY = (
    "elasticloadbalancing:ModifyLoadBalancerAttributes",
    "elasticloadbalancing:SetIpAddressType",
    "elasticloadbalancing:SetSecurityGroups",
    "elasticloadbalancing:SetSubnets",
    "elasticloadbalancing:DeleteLoadBalancer",
    "elasticloadbalancing:ModifyTargetGroup",
    "elasticloadbalancing:ModifyTargetGroupAttributes",
    "elasticloadbalancing:DeleteTargetGroup",
    "elasticloadbalancing:ModifyListenerAttributes",
    "elasticloadbalancing:ModifyCapacityReservation",
    "elasticloadbalancing:ModifyIpPools",
)
