#!/usr/bin/env python3
"""Benchmark: an Inference Components fleet built with the public API against plain L1 code.

The same resources are written as plain L1 ``Cfn*`` code, side by side in one run.

Each fleet has one endpoint (ml.g5.12xlarge, managed instance scaling down to zero; its
local NVMe storage takes no KMS key) per 20 models and 60 models per stack; every model
has its own model, inference component, scalable target, target-tracking policy and
scale-out-from-zero step policy with its alarm, and reads its artifacts under its own S3
prefix (KMS-encrypted). Every measurement is a cold one-shot process (the virtualenv's
Node first on PATH) that imports what its side needs (timed apart: a one-off cost whatever
the fleet's size), then builds the app and synthesizes it; the sides alternate, several
repetitions per size. Printed per size: build+synth seconds of each side (min and median),
the ratio public / L1 of the back-to-back runs of each repetition (min and median), of
wall-clock seconds and of CPU seconds (the measuring process and its Node.js processes,
read from ``/proc``: less sensitive than wall-clock to other load on a shared machine), jsii
round trips and template KiB per model of each side, import seconds, and ``nag_s``: the
public fleet built and synthesized with the three cdk-nag packs, in a cold process of its
own. ``--by-source`` adds, per size, each side's round trips per model by the function of
the package (or of this script) that made them.

``--alarms`` adds what the stacks add to watch a fleet: per stack a KMS-encrypted
notification topic and a dashboard (a section per endpoint, a line per model), per model
and per endpoint one alarm sending to the topic; the L1 side writes the same resources as
plain ``Cfn*`` code (typed alarm queries, the dashboard body as JSON text of one
``Fn::Sub``).

Run with ``make bench`` or ``python scripts/bench_synth.py [--repeats N] [--no-nag]
[--by-source] [--without-builtin-validation] [--alarms] [SIZE ...]`` (default sizes 100,
300, 1000).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SIZES = (100, 300, 1000)
MODELS_PER_ENDPOINT = 20
MODELS_PER_STACK = 60
SIDES = ("public", "l1")
IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"
REPOSITORY_ARN = "ecr:us-east-1:763104351884:repository/djl-inference"
BUCKET = "fm-bench-artifacts"
ARTIFACT_KEY_ARN = "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
INSTANCE_TYPE = "ml.g5.12xlarge"
# Application Auto Scaling's SageMaker service-linked role (see instance_scaling.py).
SERVICE_LINKED_ROLE = (
    "aws-service-role/sagemaker.application-autoscaling.amazonaws.com/"
    "AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint"
)


# What each side imports (the CDK runtime starts with aws_cdk), timed apart from build and
# synth: a one-off cost per process, whatever the fleet's size.
MODULES = {
    "public": [
        "aws_cdk",
        "aws_cdk.aws_kms",
        "fm_platform.core.compliance",
        "fm_platform.constructs.inference.component_scaling",
        "fm_platform.constructs.inference.component_endpoint",
        "fm_platform.constructs.inference.inference_component",
        "fm_platform.constructs.inference.model_container",
    ],
    "public-alarms": [
        "fm_platform.constructs.observability.topic",
        "fm_platform.constructs.observability.model_alarm",
        "fm_platform.constructs.observability.endpoint_alarm",
        "fm_platform.constructs.observability.dashboards",
        "fm_platform.constructs.observability.inference_dashboard",
    ],
    "l1-alarms": ["aws_cdk.aws_kms", "aws_cdk.aws_sns"],
    "l1": [
        "aws_cdk",
        "aws_cdk.aws_applicationautoscaling",
        "aws_cdk.aws_cloudwatch",
        "aws_cdk.aws_iam",
        "aws_cdk.aws_sagemaker",
        "fm_platform.core.compliance",
    ],
}


def model_name(index: int) -> str:
    return f"model-{index:04d}"


def prefix(index: int) -> str:
    return f"models/{model_name(index)}/"


def layout(model_count: int) -> list[list[list[int]]]:
    """Model indices grouped by stack, then by endpoint."""
    stacks = []
    for first in range(0, model_count, MODELS_PER_STACK):
        in_stack = range(first, min(first + MODELS_PER_STACK, model_count))
        stacks.append(
            [
                list(in_stack[start : start + MODELS_PER_ENDPOINT])
                for start in range(0, len(in_stack), MODELS_PER_ENDPOINT)
            ]
        )
    return stacks


# -- the public API ---------------------------------------------------------------------------


def public_fleet(app, model_count: int, alarms: bool = False) -> list:
    import aws_cdk as cdk
    from aws_cdk import aws_kms as kms

    from fm_platform.constructs.inference.component_endpoint import (
        InferenceComponentEndpoint,
        InferenceComponentEndpointProps,
    )
    from fm_platform.constructs.inference.component_scaling import ComponentScaling
    from fm_platform.constructs.inference.inference_component import (
        InferenceComponentModel,
        InferenceComponentModelProps,
    )
    from fm_platform.constructs.inference.model_container import ModelContainer

    stacks = []
    for stack_index, endpoints in enumerate(layout(model_count)):
        stack = cdk.Stack(app, f"Fleet{stack_index}")
        stacks.append(stack)
        key = kms.Key.from_key_arn(stack, "ArtifactKey", ARTIFACT_KEY_ARN)
        watch = _PublicWatch(stack) if alarms else None
        for models in endpoints:
            endpoint = InferenceComponentEndpoint(
                stack,
                f"Endpoint{models[0] // MODELS_PER_ENDPOINT}",
                InferenceComponentEndpointProps(
                    instance_type=INSTANCE_TYPE, min_instance_count=0, max_instance_count=4
                ),
            )
            placed = []
            for index in models:
                model = InferenceComponentModel(
                    stack,
                    f"Model{index}",
                    InferenceComponentModelProps(
                        model_name=model_name(index),
                        endpoint=endpoint,
                        container=ModelContainer(
                            image=IMAGE, model_data_url=f"s3://{BUCKET}/{prefix(index)}"
                        ),
                        accelerators=1,
                        min_memory_mib=8192,
                        artifact_key=key,
                        scaling=ComponentScaling(min_copies=0, max_copies=2),
                    ),
                )
                placed.append((index, model))
            if watch is not None:
                watch.endpoint(endpoint, placed)
        if watch is not None:
            watch.dashboards()
    return stacks


class _PublicWatch:
    """A stack's topic, alarms and dashboard through the package's constructs."""

    def __init__(self, stack) -> None:
        from fm_platform.constructs.observability.topic import (
            NotificationTopic,
            NotificationTopicProps,
        )

        self.stack = stack
        self.topic = NotificationTopic(stack, "Notifications", NotificationTopicProps())
        self.sections: list = []

    def endpoint(self, endpoint, models) -> None:
        from fm_platform.constructs.observability.endpoint_alarm import (
            EndpointAlarm,
            EndpointAlarmProps,
        )
        from fm_platform.constructs.observability.inference_dashboard import (
            DashboardEndpoint,
            endpoint_section,
        )
        from fm_platform.constructs.observability.model_alarm import (
            ModelAlarm,
            ModelAlarmProps,
        )

        arns = [
            ModelAlarm(
                self.stack,
                f"Model{index}Alarm",
                ModelAlarmProps(model=model, topic_arn=self.topic.topic_arn),
            ).alarm_arn
            for index, model in models
        ]
        label = endpoint.node.id
        arns.append(
            EndpointAlarm(
                self.stack,
                f"{label}Alarm",
                EndpointAlarmProps(
                    endpoint=endpoint,
                    label=label,
                    topic_arn=self.topic.topic_arn,
                    error_rate_percent=None,
                ),
            ).alarm_arn
        )
        item = DashboardEndpoint(
            label=label,
            endpoint=endpoint,
            kind="Inference Components",
            models=[model for _, model in models],
            max_instance_count=4,
            alarm_arns=arns,
        )
        self.sections.append(endpoint_section(item, self.stack.region))

    def dashboards(self) -> None:
        from fm_platform.constructs.observability.dashboards import Dashboards

        Dashboards(self.stack, "Dashboards", sections=self.sections, title=self.stack.stack_name)


# -- the same resources in plain L1 code ------------------------------------------------------


def l1_fleet(app, model_count: int, alarms: bool = False) -> list:
    import aws_cdk as cdk

    stacks = []
    partition, account, region = cdk.Aws.PARTITION, cdk.Aws.ACCOUNT_ID, cdk.Aws.REGION
    autoscaling_role = f"arn:{partition}:iam::{account}:role/{SERVICE_LINKED_ROLE}"
    for stack_index, endpoints in enumerate(layout(model_count)):
        stack = cdk.Stack(app, f"Fleet{stack_index}")
        stacks.append(stack)
        topic = _l1_topic(stack, account) if alarms else None
        widgets: list = []
        variables: dict = {}
        for models in endpoints:
            endpoint = _l1_endpoint(stack, models, partition, account, region, autoscaling_role)
            if topic is not None:
                _l1_watch(stack, endpoint, models, topic, widgets, variables)
        if topic is not None:
            _l1_dashboard(stack, widgets, variables)
    return stacks


def _l1_topic(stack, account):
    """A topic encrypted with its own key, TLS only, publishable by CloudWatch and
    EventBridge of this account."""
    from aws_cdk import RemovalPolicy
    from aws_cdk import aws_kms as kms
    from aws_cdk import aws_sns as sns

    services = ["cloudwatch.amazonaws.com", "events.amazonaws.com"]
    key = kms.CfnKey(
        stack,
        "NotificationsKey",
        enable_key_rotation=True,
        description="fm_platform alarms (SNS)",
        key_policy=_document(
            {
                "Action": "kms:*",
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:aws:iam::{account}:root"},
                "Resource": "*",
            },
            {
                "Action": ["kms:Decrypt", "kms:GenerateDataKey*"],
                "Effect": "Allow",
                "Principal": {"Service": services},
                "Resource": "*",
            },
        ),
    )
    key.apply_removal_policy(RemovalPolicy.RETAIN)
    topic = sns.CfnTopic(
        stack,
        "NotificationsTopic",
        display_name="fm_platform alarms",
        kms_master_key_id=key.attr_arn,
    )
    sns.CfnTopicPolicy(
        stack,
        "NotificationsTopicPolicy",
        topics=[topic.ref],
        policy_document=_document(
            {
                "Action": "sns:Publish",
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                "Effect": "Deny",
                "Principal": "*",
                "Resource": topic.ref,
            },
            {
                "Action": "sns:Publish",
                "Condition": {"StringEquals": {"aws:SourceAccount": account}},
                "Effect": "Allow",
                "Principal": {"Service": services},
                "Resource": topic.ref,
            },
        ),
    )
    return topic


def _l1_alarm(stack, construct_id, description, conditions, topic):
    """One alarm on the sum of 2**i per condition (id, namespace, metric, dimensions,
    statistic, threshold) that holds in each of 10 minutes."""
    from aws_cdk import aws_cloudwatch as cloudwatch

    query = cloudwatch.CfnAlarm.MetricDataQueryProperty
    terms = [
        f"{2**i} * (FILL({c[0]}, 0) >= {c[5]})" if i else f"(FILL({c[0]}, 0) >= {c[5]})"
        for i, c in enumerate(conditions)
    ]
    metrics = [query(id="health", expression=" + ".join(terms), return_data=True)]
    for metric_id, namespace, name, dimensions, statistic, _ in conditions:
        metrics.append(
            query(
                id=metric_id,
                return_data=False,
                metric_stat=cloudwatch.CfnAlarm.MetricStatProperty(
                    metric=cloudwatch.CfnAlarm.MetricProperty(
                        namespace=namespace,
                        metric_name=name,
                        dimensions=[
                            cloudwatch.CfnAlarm.DimensionProperty(name=k, value=v)
                            for k, v in dimensions.items()
                        ],
                    ),
                    period=60,
                    stat=statistic,
                ),
            )
        )
    return cloudwatch.CfnAlarm(
        stack,
        construct_id,
        alarm_description=description,
        metrics=metrics,
        threshold=1,
        comparison_operator="GreaterThanOrEqualToThreshold",
        evaluation_periods=10,
        datapoints_to_alarm=10,
        treat_missing_data="notBreaching",
        alarm_actions=[topic.ref],
    )


def _l1_watch(stack, endpoint, models, topic, widgets, variables) -> None:
    """An alarm per model and one for the endpoint, and the endpoint's dashboard widgets
    (its instances, then one line per model in each per-model widget)."""
    sagemaker, components = "AWS/SageMaker", "/aws/sagemaker/InferenceComponents"
    endpoint_var = f"e{len(variables)}"
    variables[endpoint_var] = endpoint.attr_endpoint_name
    alarms = []
    for index in models:
        component = {"InferenceComponentName": model_name(index)}
        alarm = _l1_alarm(
            stack,
            f"Model{index}Alarm",
            f"model {model_name(index)} on endpoint {endpoint.node.id}: unhealthy",
            [
                ("errors", sagemaker, "Invocation5XXErrors", component, "Average", 0.05),
                ("nocapacity", sagemaker, "NoCapacityInvocationFailures", component, "Sum", 1),
                ("copies", components, "CPUUtilizationNormalized", component, "SampleCount", 2),
            ],
            topic,
        )
        alarms.append(alarm)
    variant = {"EndpointName": endpoint.attr_endpoint_name, "VariantName": "AllTraffic"}
    alarms.append(
        _l1_alarm(
            stack,
            f"{endpoint.node.id}Alarm",
            f"endpoint {endpoint.node.id}: instances at the maximum",
            [
                (
                    "instances",
                    "/aws/sagemaker/Endpoints",
                    "CPUUtilizationNormalized",
                    variant,
                    "SampleCount",
                    4,
                )
            ],
            topic,
        )
    )
    alarm_vars = []
    for alarm in alarms:
        alarm_vars.append(f"a{len(variables)}")
        variables[alarm_vars[-1]] = alarm.attr_arn
    per_model = [
        ("Invocations per model", sagemaker, "Invocations", "Sum"),
        ("Model latency p50", sagemaker, "ModelLatency", "p50"),
        ("Model latency p90", sagemaker, "ModelLatency", "p90"),
        ("5xx errors per model", sagemaker, "Invocation5XXErrors", "Sum"),
        ("4xx errors per model", sagemaker, "Invocation4XXErrors", "Sum"),
        ("Copies per model", components, "CPUUtilizationNormalized", "SampleCount"),
        ("Invocations per copy", sagemaker, "InvocationsPerCopy", "Sum"),
        ("Accelerator utilisation", components, "GPUUtilizationNormalized", "Average"),
        ("Accelerator memory", components, "GPUMemoryUtilizationNormalized", "Average"),
        ("Host memory", components, "MemoryUtilizationNormalized", "Average"),
        ("No copy", sagemaker, "NoCapacityInvocationFailures", "Sum"),
    ]
    top = 28 * (len(widgets) // 14)  # a heading, the alarms and 4 rows of 3 graphs
    widgets.append(
        {
            "type": "alarm",
            "x": 0,
            "y": top,
            "width": 24,
            "height": 2,
            "properties": {"title": "alarms", "alarms": [f"${{{a}}}" for a in alarm_vars]},
        }
    )
    widgets.append(
        {
            "type": "text",
            "x": 0,
            "y": top + 2,
            "width": 24,
            "height": 1,
            "properties": {"markdown": f"### {endpoint.node.id}"},
        }
    )
    graphs = [
        (
            "Instances",
            [
                [
                    "/aws/sagemaker/Endpoints",
                    "CPUUtilizationNormalized",
                    "EndpointName",
                    f"${{{endpoint_var}}}",
                    "VariantName",
                    "AllTraffic",
                    {"stat": "SampleCount"},
                ]
            ],
        )
    ] + [
        (
            title,
            [
                [
                    namespace,
                    metric,
                    "InferenceComponentName",
                    f"{stack.stack_name}-{model_name(i)}",
                    {"stat": stat, "label": model_name(i)},
                ]
                for i in models
            ],
        )
        for title, namespace, metric, stat in per_model
    ]
    for n, (title, lines) in enumerate(graphs):
        widgets.append(
            {
                "type": "metric",
                "x": 8 * (n % 3),
                "y": top + 3 + 6 * (n // 3),
                "width": 8,
                "height": 6,
                "properties": {
                    "title": title,
                    "region": "${AWS::Region}",
                    "period": 60,
                    "view": "timeSeries",
                    "metrics": lines,
                },
            }
        )


def _l1_dashboard(stack, widgets, variables) -> None:
    import aws_cdk as cdk
    from aws_cdk import aws_cloudwatch as cloudwatch

    text = json.dumps({"start": "-PT3H", "widgets": widgets}, separators=(",", ":"))
    cloudwatch.CfnDashboard(
        stack,
        "Dashboard",
        dashboard_name=f"{stack.stack_name}-bench",
        dashboard_body=cdk.Fn.sub(text, variables),
    )


def _l1_endpoint(stack, models, partition, account, region, autoscaling_role):
    from aws_cdk import aws_applicationautoscaling as appscaling
    from aws_cdk import aws_cloudwatch as cloudwatch
    from aws_cdk import aws_iam as iam
    from aws_cdk import aws_sagemaker as sagemaker

    name = f"Endpoint{models[0] // MODELS_PER_ENDPOINT}"
    role = iam.CfnRole(
        stack,
        f"{name}Role",
        assume_role_policy_document=_document(
            {
                "Action": "sts:AssumeRole",
                "Effect": "Allow",
                "Principal": {"Service": "sagemaker.amazonaws.com"},
            }
        ),
    )
    role_arn = role.attr_arn
    logs = [
        f"arn:{partition}:logs:{region}:{account}:log-group:/aws/sagemaker/{kind}/*{stream}"
        for kind in ("Endpoints", "InferenceComponents")
        for stream in ("", ":log-stream:*")
    ]
    bucket = f"arn:{partition}:s3:::{BUCKET}"
    policy = iam.CfnPolicy(
        stack,
        f"{name}Policy",
        policy_name=f"{name}Policy",
        roles=[role.ref],
        policy_document=_document(
            {"Action": "ecr:GetAuthorizationToken", "Effect": "Allow", "Resource": "*"},
            {
                "Action": "cloudwatch:PutMetricData",
                "Condition": {"StringLike": {"cloudwatch:namespace": "/aws/sagemaker/*"}},
                "Effect": "Allow",
                "Resource": "*",
            },
            {
                "Action": [
                    "logs:CreateLogGroup",
                    "logs:CreateLogStream",
                    "logs:DescribeLogStreams",
                    "logs:PutLogEvents",
                ],
                "Effect": "Allow",
                "Resource": logs,
            },
            {
                "Action": [
                    "ecr:BatchCheckLayerAvailability",
                    "ecr:BatchGetImage",
                    "ecr:GetDownloadUrlForLayer",
                ],
                "Effect": "Allow",
                "Resource": f"arn:{partition}:{REPOSITORY_ARN}",
            },
            {"Action": "kms:Decrypt", "Effect": "Allow", "Resource": ARTIFACT_KEY_ARN},
            {
                "Action": "s3:GetObject",
                "Effect": "Allow",
                "Resource": [f"{bucket}/{prefix(i)}*" for i in models],
            },
            {
                "Action": "s3:ListBucket",
                "Condition": {"StringLike": {"s3:prefix": [f"{prefix(i)}*" for i in models]}},
                "Effect": "Allow",
                "Resource": bucket,
            },
        ),
    )
    config = sagemaker.CfnEndpointConfig(
        stack,
        f"{name}Config",
        execution_role_arn=role_arn,
        production_variants=[
            sagemaker.CfnEndpointConfig.ProductionVariantProperty(
                variant_name="AllTraffic",
                instance_type=INSTANCE_TYPE,
                initial_instance_count=1,
                managed_instance_scaling=sagemaker.CfnEndpointConfig.ManagedInstanceScalingProperty(
                    status="ENABLED", min_instance_count=0, max_instance_count=4
                ),
                routing_config=sagemaker.CfnEndpointConfig.RoutingConfigProperty(
                    routing_strategy="LEAST_OUTSTANDING_REQUESTS"
                ),
            )
        ],
    )
    config.add_resource_dependency(policy)
    endpoint = sagemaker.CfnEndpoint(
        stack, name, endpoint_config_name=config.attr_endpoint_config_name
    )
    endpoint_name = endpoint.attr_endpoint_name
    ic = sagemaker.CfnInferenceComponent
    for index in models:
        component_name = model_name(index)
        model = sagemaker.CfnModel(
            stack,
            f"Model{index}",
            execution_role_arn=role_arn,
            primary_container=sagemaker.CfnModel.ContainerDefinitionProperty(
                image=IMAGE,
                model_data_source=sagemaker.CfnModel.ModelDataSourceProperty(
                    s3_data_source=sagemaker.CfnModel.S3DataSourceProperty(
                        s3_uri=f"s3://{BUCKET}/{prefix(index)}",
                        s3_data_type="S3Prefix",
                        compression_type="None",
                    )
                ),
            ),
        )
        model.add_resource_dependency(policy)
        component = ic(
            stack,
            f"Component{index}",
            endpoint_name=endpoint_name,
            variant_name="AllTraffic",
            inference_component_name=component_name,
            specification=ic.InferenceComponentSpecificationProperty(
                model_name=model.attr_model_name,
                compute_resource_requirements=(
                    ic.InferenceComponentComputeResourceRequirementsProperty(
                        number_of_accelerator_devices_required=1, min_memory_required_in_mb=8192
                    )
                ),
            ),
            runtime_config=ic.InferenceComponentRuntimeConfigProperty(copy_count=1),
        )
        target = appscaling.CfnScalableTarget(
            stack,
            f"Target{index}",
            service_namespace="sagemaker",
            resource_id=f"inference-component/{component_name}",
            scalable_dimension="sagemaker:inference-component:DesiredCopyCount",
            min_capacity=0,
            max_capacity=2,
            role_arn=autoscaling_role,
        )
        target.add_resource_dependency(component)
        target_id = target.ref
        appscaling.CfnScalingPolicy(
            stack,
            f"Tracking{index}",
            policy_name="TargetTracking",
            policy_type="TargetTrackingScaling",
            scaling_target_id=target_id,
            target_tracking_scaling_policy_configuration=appscaling.CfnScalingPolicy.TargetTrackingScalingPolicyConfigurationProperty(
                target_value=10,
                predefined_metric_specification=appscaling.CfnScalingPolicy.PredefinedMetricSpecificationProperty(
                    predefined_metric_type="SageMakerInferenceComponentInvocationsPerCopy"
                ),
                scale_in_cooldown=300,
                scale_out_cooldown=60,
            ),
        )
        step = appscaling.CfnScalingPolicy(
            stack,
            f"ScaleOutFromZero{index}",
            policy_name="ScaleOutFromZero",
            policy_type="StepScaling",
            scaling_target_id=target_id,
            step_scaling_policy_configuration=appscaling.CfnScalingPolicy.StepScalingPolicyConfigurationProperty(
                adjustment_type="ChangeInCapacity",
                cooldown=60,
                metric_aggregation_type="Maximum",
                step_adjustments=[
                    appscaling.CfnScalingPolicy.StepAdjustmentProperty(
                        metric_interval_lower_bound=0, scaling_adjustment=1
                    )
                ],
            ),
        )
        cloudwatch.CfnAlarm(
            stack,
            f"NoCapacityAlarm{index}",
            alarm_description=(
                f"Requests to inference component {component_name} found no copy: scale "
                "out from zero."
            ),
            namespace="AWS/SageMaker",
            metric_name="NoCapacityInvocationFailures",
            dimensions=[
                cloudwatch.CfnAlarm.DimensionProperty(
                    name="InferenceComponentName", value=component_name
                )
            ],
            statistic="Maximum",
            period=60,
            threshold=1,
            evaluation_periods=1,
            comparison_operator="GreaterThanOrEqualToThreshold",
            treat_missing_data="notBreaching",
            alarm_actions=[step.ref],
        )
    return endpoint


def _document(*statements: dict) -> dict:
    return {"Statement": list(statements), "Version": "2012-10-17"}


# -- one measurement (child process) ----------------------------------------------------------


def _cpu_seconds() -> float | None:
    """CPU seconds used so far by this process and its descendants that are still running
    (the jsii runtime's Node.js processes), or None where ``/proc`` is unavailable."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    parents: dict[int, list[tuple[int, int]]] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        # After the command: state, ppid, ..., utime (14th field) and stime (15th).
        parents.setdefault(int(fields[1]), []).append(
            (int(entry.name), int(fields[11]) + int(fields[12]))
        )
    used, frontier = 0, [os.getpid()]
    while frontier:
        children = [child for pid in frontier for child in parents.get(pid, [])]
        used += sum(cpu for _, cpu in children)
        frontier = [pid for pid, _ in children]
    return time.process_time() + used / ticks


#: Where the functions a round trip is attributed to live: the package, and this script
#: (the plain L1 fleet).
SOURCE_FILES = (ROOT / "fm_platform", Path(__file__).resolve())


def _source(frame) -> str:
    """The innermost function of the package or of this script's fleets on the stack of
    ``frame``, as ``module.qualified_name``."""
    while frame is not None:
        path = Path(frame.f_code.co_filename)
        if any(path == where or path.is_relative_to(where) for where in SOURCE_FILES):
            return f"{path.stem}.{frame.f_code.co_qualname}"
        frame = frame.f_back
    return "(aws-cdk-lib: App.synth)"


def measure(
    side: str, model_count: int, with_nag: bool, by_source: bool = False, alarms: bool = False
) -> dict:
    """Build and synthesize one fleet in this process (with ``alarms``, watched: see
    ``--alarms``); count jsii round trips (with ``by_source``, by the innermost function of
    this repository that made them)."""
    from jsii._kernel.providers import process

    round_trips = [0]
    sources: dict[str, int] = {}
    send = process._NodeProcess.send

    def counting_send(self, request, response_type):
        round_trips[0] += 1
        if by_source:
            source = _source(sys._getframe(1))
            sources[source] = sources.get(source, 0) + 1
        return send(self, request, response_type)

    process._NodeProcess.send = counting_send  # type: ignore[method-assign]
    try:
        return _measured(side, model_count, with_nag, round_trips, sources, alarms)
    finally:
        process._NodeProcess.send = send  # type: ignore[method-assign]


def _measured(
    side: str,
    model_count: int,
    with_nag: bool,
    round_trips: list[int],
    sources: dict[str, int],
    alarms: bool = False,
) -> dict:
    importing = time.perf_counter()
    for module in MODULES[side] + (MODULES[f"{side}-alarms"] if alarms else []):
        importlib.import_module(module)
    imported = time.perf_counter()

    import aws_cdk as cdk

    from fm_platform.core.compliance import apply_compliance_packs

    context = json.loads((ROOT / "cdk.json").read_text())["context"]
    build = public_fleet if side == "public" else l1_fleet
    with tempfile.TemporaryDirectory() as outdir:
        cpu_started = _cpu_seconds()
        started = time.perf_counter()
        before = round_trips[0]
        sources.clear()  # those of the imports are not the fleet's
        app = cdk.App(context=context, outdir=outdir)
        stacks = build(app, model_count, alarms)
        built = time.perf_counter()
        build_trips = round_trips[0] - before
        if with_nag:
            apply_compliance_packs(app)
        assembly = app.synth()
        synthesized = time.perf_counter()
        cpu_done = _cpu_seconds()
        fleet_sources = dict(sources)
        synth_trips = round_trips[0] - before - build_trips
        templates = [assembly.get_stack_by_name(s.stack_name).template for s in stacks]
    cpu = None if cpu_started is None or cpu_done is None else cpu_done - cpu_started
    return {
        "side": side,
        "models": model_count,
        "nag": with_nag,
        "alarms": alarms,
        "stacks": len(stacks),
        "import_s": imported - importing,
        "build_s": built - started,
        "synth_s": synthesized - built,
        "total_s": synthesized - started,
        "cpu_s": cpu,
        "build_trips": build_trips,
        "synth_trips": synth_trips,
        "sources": fleet_sources,
        "resources": sum(len(t["Resources"]) for t in templates),
        "resource_types": dict(
            Counter(r["Type"] for t in templates for r in t["Resources"].values())
        ),
        "template_bytes": sum(len(json.dumps(t, separators=(",", ":"))) for t in templates),
    }


# -- the run (parent process) -----------------------------------------------------------------


def run_child(side: str, model_count: int, with_nag: bool, by_source: bool = False) -> dict:
    """Measure in a fresh process, with the virtualenv's Node first on PATH (with
    ``--alarms`` when :data:`WITH_ALARMS` is set)."""
    env = dict(os.environ, **CHILD_ENVIRONMENT)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    command = [sys.executable, __file__, "--child", side, str(model_count)]
    if with_nag:
        command.append("--nag")
    if by_source:
        command.append("--by-source")
    if WITH_ALARMS:
        command.append("--alarms")
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


#: Extra environment of the measured processes (see ``--without-builtin-validation``).
CHILD_ENVIRONMENT: dict[str, str] = {}
#: Whether the measured fleets are watched (``--alarms``).
WITH_ALARMS: list[bool] = []


def _min_median(values: list[float]) -> str:
    return f"{min(values):.2f}/{statistics.median(values):.2f}"


def summary_row(size: int, runs: dict[str, list[dict]], nag: str) -> str:
    """The printed line of one size: seconds of each side (min/median), the ratios public
    / L1 of the back-to-back pairs (min/median), of wall-clock and of CPU seconds, round
    trips and template KiB per model, import seconds and ``nag``."""
    public, l1 = runs["public"], runs["l1"]
    # Runs of one repetition are back to back, under about the same machine load.
    pairs = list(zip(public, l1, strict=True))
    wall = [p["total_s"] / q["total_s"] for p, q in pairs]
    cpu = [p["cpu_s"] / q["cpu_s"] for p, q in pairs if p["cpu_s"] and q["cpu_s"]]
    seconds = {
        side: (
            min(r["total_s"] for r in runs[side]),
            statistics.median(r["total_s"] for r in runs[side]),
        )
        for side in SIDES
    }
    trips = {
        side: (runs[side][0]["build_trips"] + runs[side][0]["synth_trips"]) / size for side in SIDES
    }
    kib = {side: runs[side][0]["template_bytes"] / 1024 / size for side in SIDES}
    imports = {side: statistics.median(r["import_s"] for r in runs[side]) for side in SIDES}
    return (
        f"{size:>6} {seconds['public'][0]:>7.1f}/{seconds['public'][1]:<7.1f} "
        f"{seconds['l1'][0]:>6.1f}/{seconds['l1'][1]:<6.1f} {_min_median(wall):>11} "
        f"{_min_median(cpu) if cpu else '-':>11} "
        f"{trips['public']:>6.1f}/{trips['l1']:<6.1f} {kib['public']:>6.2f}/{kib['l1']:<6.2f} "
        f"{imports['public']:>5.1f}/{imports['l1']:<5.1f} {nag:>6}"
    )


HEADER = (
    f"{'models':>6} {'public_s min/med':>15} {'l1_s min/med':>13} {'ratio min/med':>11} "
    f"{'cpu ratio':>11} {'rt/model':>13} {'KiB/model':>13} {'import_s':>11} {'nag_s':>6}"
)


def by_source_table(size: int) -> str:
    """Round trips per model of each side, by the function of this repository that made
    them (one extra run of each side)."""
    lines = [f"round trips per model at {size} models, by source (build, then synth):"]
    for side in SIDES:
        result = run_child(side, size, with_nag=False, by_source=True)
        lines.append(f"  {side}: {(result['build_trips'] + result['synth_trips']) / size:.2f}")
        for source, count in sorted(result["sources"].items(), key=lambda item: -item[1]):
            lines.append(f"    {count / size:6.2f}  {source}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=list(DEFAULT_SIZES))
    parser.add_argument("--repeats", type=int, default=3, help="runs per side and size")
    parser.add_argument("--no-nag", action="store_true", help="skip the cdk-nag column")
    parser.add_argument(
        "--by-source",
        action="store_true",
        help="also print each side's round trips per model by the function that made them",
    )
    parser.add_argument(
        "--without-builtin-validation",
        action="store_true",
        help="CDK_VALIDATION=false: no aws-cdk-lib template validation in synth (an app "
        "with the cdk-nag packs registered does not run it either)",
    )
    parser.add_argument(
        "--alarms",
        action="store_true",
        help="watch each fleet: a notification topic and a dashboard per stack, an alarm "
        "per model and per endpoint (the L1 side writes the same resources)",
    )
    parser.add_argument("--child", nargs=2, metavar=("SIDE", "MODELS"), help=argparse.SUPPRESS)
    parser.add_argument("--nag", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        side, models = args.child
        print(json.dumps(measure(side, int(models), args.nag, args.by_source, args.alarms)))
        return 0
    if args.alarms:
        WITH_ALARMS.append(True)
    if args.without_builtin_validation:
        CHILD_ENVIRONMENT["CDK_VALIDATION"] = "false"

    print(HEADER, flush=True)
    for size in args.sizes:
        runs: dict[str, list[dict]] = {side: [] for side in SIDES}
        for repeat in range(args.repeats):
            order = SIDES if repeat % 2 == 0 else tuple(reversed(SIDES))
            for side in order:
                result = run_child(side, size, with_nag=False)
                runs[side].append(result)
                print(
                    f"  {size} {side} #{repeat + 1}: {result['total_s']:.1f} s "
                    f"(build {result['build_s']:.1f}, synth {result['synth_s']:.1f}; "
                    f"cpu {result['cpu_s'] or 0:.1f})",
                    file=sys.stderr,
                    flush=True,
                )
        nag = "-" if args.no_nag else f"{run_child('public', size, with_nag=True)['total_s']:.1f}"
        print(summary_row(size, runs, nag), flush=True)
        if args.by_source:
            print(by_source_table(size), flush=True)
    print(
        "(seconds: build + synth in a cold process, imports apart; ratio = public / L1 of "
        "the back-to-back runs of each repetition, min/median, of wall-clock seconds and of "
        "the CPU seconds of Python and its Node.js processes (less sensitive to other load "
        f"on the machine); rt: jsii round trips; {MODELS_PER_ENDPOINT} models per "
        f"{INSTANCE_TYPE} endpoint, {MODELS_PER_STACK} per stack"
        f"{'; watched: topic, dashboard, an alarm per model and endpoint' if args.alarms else ''}"
        f"; {args.repeats} runs per "
        "side, alternating; nag_s: the public fleet with the three cdk-nag packs, one cold "
        "run)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
