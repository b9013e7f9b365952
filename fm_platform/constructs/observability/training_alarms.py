"""Alarms of a training cluster: the shared file system filling up, and errors in the
lifecycle scripts' log.

FSx for Lustre (Amazon FSx for Lustre User Guide, "Monitoring with Amazon CloudWatch"):
``FreeDataStorageCapacity`` in ``AWS/FSx`` with the dimension ``FileSystemId``, in bytes;
its Sum is the file system's free bytes.

Lifecycle scripts: HyperPod ships each node's ``/var/log/provision/provisioning.log`` to
the log group ``/aws/sagemaker/Clusters/<cluster name>/<cluster id>`` (stream
``LifecycleConfig/<group>/<instance>``); this package's scripts write every failure as a
line with ``ERROR:`` (``lifecycle_assets/on_create.sh`` and ``provision.py``). HyperPod
creates that log group itself, when nodes first ship logs; CloudFormation returns no
generated cluster name, and a metric filter on a log group that does not exist fails (and
with it the stack, which would roll back a cluster's creation). So the filter is created
after the cluster, with the cluster's name read by ``DescribeCluster`` and the group
created when HyperPod has not made it yet (``CreateLogGroup``, ``ResourceAlreadyExists``
ignored): both through one AWS SDK custom resource function. The same function then sets
the group's retention and its customer-managed key (``PutRetentionPolicy``,
``AssociateKmsKey``: HyperPod usually makes the group first, with neither), may create only
this cluster's group (``/aws/sagemaker/Clusters/*/<cluster id>``) and reaches the APIs over
HTTPS only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from aws_cdk import ArnFormat, Duration, Fn, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import custom_resources as cr
from constructs import Construct

from fm_platform.core.compliance import acknowledge, acknowledge_wildcard_resource
from fm_platform.core.dependencies import drop_redundant_depends_on
from fm_platform.core.encryption import allow_cloudwatch_logs
from fm_platform.core.function_roles import vpc_function_role
from fm_platform.rules.functions import check_reserved_concurrency
from fm_platform.rules.observability import check_percent
from fm_platform.rules.problems import Problems

FSX_NAMESPACE = "AWS/FSx"
FREE_CAPACITY_METRIC = "FreeDataStorageCapacity"
_BYTES_PER_GIB = 1024**3
#: Where HyperPod sends the lifecycle scripts' output (see the module docstring).
CLUSTER_LOG_GROUP_PREFIX = "/aws/sagemaker/Clusters/"
#: What this package's lifecycle scripts write on a failure (a CloudWatch Logs filter
#: pattern matching the exact term).
LIFECYCLE_ERROR_PATTERN = '"ERROR:"'
LIFECYCLE_ERRORS_METRIC = "LifecycleScriptErrors"
#: The construct ID of aws-cdk-lib's AWS SDK custom resource function (one per stack:
#: ``AwsCustomResource.PROVIDER_FUNCTION_UUID`` without dashes, after "AWS").
SDK_FUNCTION_ID = "AWS679f53fac002430cb0da5b7982bd2287"
#: How long the lifecycle log is kept: a year, as the upload function's own log.
LIFECYCLE_LOG_RETENTION_DAYS = 365


@dataclass(frozen=True, kw_only=True)
class TrainingAlarmOptions:
    """Plain options of a training cluster's alarms and events (the configuration's
    ``training`` keys too).

    fsx_free_capacity_percent: alarm when the file system's free capacity stays below this
        share of its storage for 10 minutes (a full Lustre file system fails the writes of
        every job, checkpoints included); by default 10. None: no alarm.
    lifecycle_error_alarm: alarm on any ``ERROR:`` line the lifecycle scripts log (a node
        that failed to join, on creation or when HyperPod replaces one); by default True.
    cluster_events: send the cluster's node health and state change events to the topic;
        by default True.
    sdk_function_reserved_concurrency: concurrent executions reserved for the stack's AWS
        SDK custom resource function (which finds the lifecycle log group), for landing
        zones whose scanners require it; at least 1. By default none reserved: the function
        runs a few times per deployment, and a reservation takes from the account's
        unreserved pool, of which Lambda keeps at least 100.
    """

    fsx_free_capacity_percent: float | None = 10.0
    lifecycle_error_alarm: bool = True
    cluster_events: bool = True
    sdk_function_reserved_concurrency: int | None = None

    def check(self, problems: Problems) -> None:
        """Record every problem of these options in ``problems``."""
        check_percent(problems, "fsx_free_capacity_percent", self.fsx_free_capacity_percent)
        check_reserved_concurrency(
            problems,
            "sdk_function_reserved_concurrency",
            self.sdk_function_reserved_concurrency,
        )


def free_capacity_threshold_bytes(capacity_gib: int, percent: float) -> float:
    """``percent`` of ``capacity_gib``, in bytes (what FreeDataStorageCapacity reports)."""
    return capacity_gib * _BYTES_PER_GIB * percent / 100


def _topic_action(scope: Construct, topic_arn: str) -> cloudwatch_actions.SnsAction:
    return cloudwatch_actions.SnsAction(sns.Topic.from_topic_arn(scope, "Topic", topic_arn))


class FileSystemCapacityAlarm(Construct):
    """An alarm (``Alarm``) when an FSx for Lustre file system's free bytes (the Sum of
    ``FreeDataStorageCapacity`` over 5 minutes) stay under ``percent`` of
    ``capacity_gib`` in 2 consecutive periods; missing data is not breaching (a new file
    system reports within minutes). Its ALARM state goes to ``topic_arn``.

    Attributes: ``alarm``, ``threshold_bytes``.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        file_system_id: str,
        capacity_gib: int,
        percent: float,
        topic_arn: str,
    ) -> None:
        """Watch ``file_system_id``'s free capacity."""
        super().__init__(scope, construct_id)
        self.threshold_bytes = free_capacity_threshold_bytes(capacity_gib, percent)
        free = cloudwatch.Metric(
            namespace=FSX_NAMESPACE,
            metric_name=FREE_CAPACITY_METRIC,
            dimensions_map={"FileSystemId": file_system_id},
            statistic="Sum",
            period=Duration.minutes(5),
        )
        self.alarm = cloudwatch.Alarm(
            self,
            "Alarm",
            alarm_name=f"{Stack.of(self).stack_name}-fsx-free-capacity",
            alarm_description=(
                f"fm_platform: FSx for Lustre {file_system_id} has less than {percent:g}% of "
                f"its {capacity_gib} GiB free: jobs' writes and checkpoints will fail when it "
                "is full. Delete old checkpoints or raise storage_capacity_gib."
            ),
            metric=free,
            threshold=self.threshold_bytes,
            comparison_operator=cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
            evaluation_periods=2,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        self.alarm.add_alarm_action(_topic_action(self, topic_arn))


@dataclass(frozen=True, kw_only=True)
class FunctionPlacement:
    """Where the custom resource function runs and logs: ``vpc`` and ``subnet`` (its
    network interface, in a security group of its own; it reaches the SageMaker and
    CloudWatch Logs APIs through the subnet's NAT), ``log_group`` (its logs,
    encrypted) and ``log_key`` (the key it gives the cluster's lifecycle log group, kept
    with the data, e.g. the key of ``log_group``; its policy is extended so that CloudWatch
    Logs may use it for HyperPod's ``/aws/sagemaker/Clusters/`` log groups, and an
    imported key's policy must already allow that), and
    ``reserved_concurrency`` (its reserved concurrent executions; by default none)."""

    vpc: ec2.IVpc
    subnet: ec2.ISubnet
    log_group: logs.ILogGroup
    log_key: kms.IKey
    reserved_concurrency: int | None = None


_NO_RESERVATION = (
    "The AWS SDK custom resource function runs a few times per deployment, called by "
    "CloudFormation only: reserved concurrency would take from the account's unreserved "
    "pool for nothing (training.sdk_function_reserved_concurrency reserves some)."
)
#: Why the function has no dead-letter queue (Lambda sends only asynchronous invocations
#: that failed to one; AWS Lambda Developer Guide, "Adding a dead-letter queue").
_NO_DEAD_LETTER_QUEUE = (
    "CloudFormation invokes the AWS SDK custom resource function and waits for its "
    "response, and reports a failed call as a failed stack operation: a dead-letter queue "
    "would hold a request nothing replays."
)


class LifecycleErrorAlarm(Construct):
    """A metric filter on the cluster's lifecycle log group counting ``ERROR:`` lines
    (``Errors``: metric ``LifecycleScriptErrors`` in namespace ``fm_platform/<stack>``, 0
    for other lines) and an alarm (``Alarm``) on any error within 5 minutes, whose ALARM
    state goes to ``topic_arn``; missing data is not breaching (no node is starting). The
    log group is found and made sure of after the cluster exists (``ClusterName`` and
    ``LogGroup``, AWS SDK custom resources; see the module docstring) by the stack's AWS SDK
    custom resource function, run as ``FunctionRole`` with ``FunctionPolicy`` in
    ``placement``.

    Attributes: ``log_group_name``, ``metric`` (the filter's, for dashboards), ``alarm``.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        cluster_arn: str,
        cluster_id: str,
        topic_arn: str,
        placement: FunctionPlacement,
    ) -> None:
        """Watch the lifecycle log of the cluster ``cluster_arn`` (id ``cluster_id``)."""
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        # Only this cluster's group: its name ends in the cluster's id (read at deploy time).
        groups_arn = stack.format_arn(
            service="logs",
            resource="log-group",
            resource_name=f"{CLUSTER_LOG_GROUP_PREFIX}*/{cluster_id}",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        role = self._function_role(cluster_arn, groups_arn, placement.log_group)
        # The key encrypts the cluster's group once associated: CloudWatch Logs may use it
        # for HyperPod's cluster groups (the key's stack cannot name this cluster's id).
        key_stack = Stack.of(placement.log_key)
        allow_cloudwatch_logs(
            placement.log_key,
            key_stack.region,
            [
                key_stack.format_arn(
                    service="logs",
                    resource="log-group",
                    resource_name=f"{CLUSTER_LOG_GROUP_PREFIX}*",
                    arn_format=ArnFormat.COLON_RESOURCE_NAME,
                )
            ],
        )

        def sdk_resource(
            construct_id: str, call: cr.AwsSdkCall, *, update: bool
        ) -> cr.AwsCustomResource:
            return cr.AwsCustomResource(
                self,
                construct_id,
                on_create=call,
                on_update=call if update else None,
                install_latest_aws_sdk=False,
                role=role,
                log_group=placement.log_group,
                vpc=placement.vpc,
                vpc_subnets=ec2.SubnetSelection(subnets=[placement.subnet]),
            )

        name = sdk_resource(
            "ClusterName",
            cr.AwsSdkCall(
                service="SageMaker",
                action="describeCluster",
                parameters={"ClusterName": cluster_arn},
                physical_resource_id=cr.PhysicalResourceId.of(cluster_arn),
                output_paths=["ClusterName"],
            ),
            update=True,
        )
        self.log_group_name: str = Fn.join(
            "", [CLUSTER_LOG_GROUP_PREFIX, name.get_response_field("ClusterName"), "/", cluster_id]
        )
        ensure = sdk_resource(
            "LogGroup",
            cr.AwsSdkCall(
                service="CloudWatchLogs",
                action="createLogGroup",
                parameters={"logGroupName": self.log_group_name},
                physical_resource_id=cr.PhysicalResourceId.of(self.log_group_name),
                ignore_error_codes_matching="ResourceAlreadyExistsException",
            ),
            update=False,
        )
        settings = [
            sdk_resource(
                construct_id,
                cr.AwsSdkCall(
                    service="CloudWatchLogs",
                    action=action,
                    parameters={"logGroupName": self.log_group_name, **parameters},
                    physical_resource_id=cr.PhysicalResourceId.of(self.log_group_name),
                ),
                update=True,
            )
            for construct_id, action, parameters in (
                (
                    "LogRetention",
                    "putRetentionPolicy",
                    {"retentionInDays": LIFECYCLE_LOG_RETENTION_DAYS},
                ),
                ("LogKey", "associateKmsKey", {"kmsKeyId": placement.log_key.key_arn}),
            )
        ]
        for setting in settings:
            setting.node.add_dependency(ensure)
        for custom in (name, ensure, *settings):
            custom.node.add_dependency(self.policy)
        self._acknowledge_function(placement.reserved_concurrency)
        namespace = f"fm_platform/{stack.stack_name}"
        errors = logs.CfnMetricFilter(
            self,
            "Errors",
            log_group_name=self.log_group_name,
            filter_pattern=LIFECYCLE_ERROR_PATTERN,
            metric_transformations=[
                logs.CfnMetricFilter.MetricTransformationProperty(
                    metric_namespace=namespace,
                    metric_name=LIFECYCLE_ERRORS_METRIC,
                    metric_value="1",
                    default_value=0,
                )
            ],
        )
        errors.node.add_dependency(ensure)
        self.metric = cloudwatch.Metric(
            namespace=namespace,
            metric_name=LIFECYCLE_ERRORS_METRIC,
            statistic="Sum",
            period=Duration.minutes(5),
        )
        self.alarm = cloudwatch.Alarm(
            self,
            "Alarm",
            alarm_name=f"{stack.stack_name}-lifecycle-errors",
            alarm_description=(
                "fm_platform: the HyperPod lifecycle scripts logged an ERROR (a node failed "
                "to set up, at creation or when a node was replaced). Read the log group "
                "/aws/sagemaker/Clusters/<cluster name>/<cluster id>, streams "
                "LifecycleConfig/<group>/<instance>, or: fmp cluster nodes"
            ),
            metric=self.metric,
            threshold=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluation_periods=1,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        self.alarm.add_alarm_action(_topic_action(self, topic_arn))

    def _function_role(
        self, cluster_arn: str, groups_arn: str, log_group: logs.ILogGroup
    ) -> iam.IRole:
        """The function's role: VPC access (AWS managed, as Lambda documents it) and a
        customer-managed policy with exactly its calls and its logs."""
        role = vpc_function_role(
            self,
            "FunctionRole",
            "Finds a HyperPod cluster's lifecycle log group and makes sure it exists",
        )
        self.policy = iam.ManagedPolicy(
            self,
            "FunctionPolicy",
            description="Describe one HyperPod cluster, create its lifecycle log group",
            roles=[role],
            statements=[
                iam.PolicyStatement(actions=["sagemaker:DescribeCluster"], resources=[cluster_arn]),
                iam.PolicyStatement(
                    actions=[
                        "logs:CreateLogGroup",
                        "logs:PutRetentionPolicy",
                        "logs:AssociateKmsKey",
                    ],
                    resources=[groups_arn, f"{groups_arn}:*"],
                ),
                iam.PolicyStatement(
                    actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                    resources=[log_group.log_group_arn],
                ),
            ],
        )
        acknowledge_wildcard_resource(
            self.policy,
            "HyperPod names the lifecycle log group after the cluster's name and id; the "
            "grant names the id and HyperPod's /aws/sagemaker/Clusters/ prefix, and the name "
            "(read at deploy time) stays a wildcard; it covers creating the group and "
            "setting its retention and key.",
            groups_arn,
            f"{groups_arn}:*",
        )
        return role.without_policy_updates()

    def _acknowledge_function(self, reserved_concurrency: int | None) -> None:
        """Give the stack's AWS SDK custom resource function its reserved concurrency (if
        any), let it reach the APIs over HTTPS only, and acknowledge what it does not
        change."""
        function = Stack.of(self).node.try_find_child(SDK_FUNCTION_ID)
        if function is None:
            return
        group = function.node.try_find_child("SecurityGroup")
        if group is not None:
            # SageMaker and CloudWatch Logs APIs and CloudFormation's response URL: HTTPS.
            cast(ec2.CfnSecurityGroup, group.node.default_child).security_group_egress = [
                ec2.CfnSecurityGroup.EgressProperty(
                    ip_protocol="tcp",
                    from_port=443,
                    to_port=443,
                    cidr_ip="0.0.0.0/0",
                    description="HTTPS to the AWS APIs and CloudFormation's response URL",
                )
            ]
        cfn_function = cast(lambda_.CfnFunction, function.node.default_child)
        # Its DependsOn on the role repeats the function's GetAtt on that role.
        drop_redundant_depends_on(cfn_function)
        if reserved_concurrency is None:
            acknowledge(
                function,
                _NO_RESERVATION,
                "HIPAA.Security-LambdaConcurrency",
                "NIST.800.53.R5-LambdaConcurrency",
            )
        else:
            cfn_function.reserved_concurrent_executions = reserved_concurrency
        acknowledge(
            function,
            _NO_DEAD_LETTER_QUEUE,
            "HIPAA.Security-LambdaDLQ",
            "NIST.800.53.R5-LambdaDLQ",
        )
