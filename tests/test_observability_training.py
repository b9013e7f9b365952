"""What a training deployment adds to be watched: the cluster's events routed to the data
stack's topic, the file system's free capacity, errors in the lifecycle scripts' log, and
the cluster's dashboard; the AWS SDK custom resource function's reserved concurrency
option."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from aws_cdk.assertions import Template

from fm_platform.config import load_config
from fm_platform.config.training import DEFAULT_INSTANCE_GROUPS, TrainingConfig
from fm_platform.constructs.observability.cluster_events import (
    EVENT_SOURCE,
    NODE_HEALTH,
    STATE_CHANGE,
    cluster_event_pattern,
)
from fm_platform.constructs.observability.training_alarms import (
    FREE_CAPACITY_METRIC,
    LIFECYCLE_ERROR_PATTERN,
    LIFECYCLE_ERRORS_METRIC,
    SDK_FUNCTION_ID,
    free_capacity_threshold_bytes,
)
from fm_platform.constructs.training.instance_groups import ScheduledUpdate
from fm_platform.rules.problems import ValidationError
from fm_platform.stacks import TrainingStack
from tests.support import nag_findings, new_app


def of_type(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {k: r for k, r in template["Resources"].items() if r["Type"] == kind}


@pytest.fixture(scope="module")
def cluster(default_assembly) -> dict[str, Any]:
    return default_assembly.templates["FmpTraining"]


@pytest.fixture(scope="module")
def data(default_assembly) -> dict[str, Any]:
    return default_assembly.templates["FmpTrainingData"]


def is_topic_import(value: Any, data: dict[str, Any]) -> bool:
    """Whether ``value`` is the cluster stack's read of the data stack's topic (its
    export)."""
    [topic_id] = of_type(data, "AWS::SNS::Topic")
    export = value.get("Fn::ImportValue", "") if isinstance(value, dict) else ""
    return export.startswith(f"FmpTrainingData:ExportsOutputRef{topic_id}")


def test_the_event_pattern_names_hyperpods_node_health_and_state_change_events():
    assert EVENT_SOURCE == "aws.sagemaker"
    assert NODE_HEALTH == "SageMaker HyperPod Cluster Node Health Event"
    assert STATE_CHANGE == "SageMaker HyperPod Cluster State Change"
    assert cluster_event_pattern("arn:c") == {
        "source": ["aws.sagemaker"],
        "detail-type": [NODE_HEALTH, STATE_CHANGE],
        "detail": {"ClusterArn": ["arn:c"]},
    }


def test_the_clusters_events_go_to_the_data_stacks_topic(cluster, data):
    [rule] = of_type(cluster, "AWS::Events::Rule").values()
    [cluster_id] = of_type(cluster, "AWS::SageMaker::Cluster")
    pattern = rule["Properties"]["EventPattern"]
    assert pattern["source"] == [EVENT_SOURCE]
    assert pattern["detail-type"] == [NODE_HEALTH, STATE_CHANGE]
    assert pattern["detail"] == {"ClusterArn": [{"Fn::GetAtt": [cluster_id, "ClusterArn"]}]}
    [target] = rule["Properties"]["Targets"]
    assert is_topic_import(target["Arn"], data)
    assert rule["Properties"]["State"] == "ENABLED"


def test_the_file_system_alarm_fires_below_ten_percent_free(data):
    config = TrainingConfig()
    [alarm] = [
        a["Properties"]
        for a in of_type(data, "AWS::CloudWatch::Alarm").values()
        if a["Properties"].get("MetricName") == FREE_CAPACITY_METRIC
    ]
    [fs_id] = [
        k
        for k, r in of_type(data, "AWS::FSx::FileSystem").items()
        if r["Properties"]["FileSystemType"] == "LUSTRE"
    ]
    assert config.fsx_free_capacity_percent == 10.0
    assert alarm["Namespace"] == "AWS/FSx"
    assert alarm["Dimensions"] == [{"Name": "FileSystemId", "Value": {"Ref": fs_id}}]
    assert alarm["Statistic"] == "Sum"
    assert alarm["Threshold"] == free_capacity_threshold_bytes(config.storage_capacity_gib, 10)
    assert alarm["Threshold"] == config.storage_capacity_gib * 1024**3 / 10
    assert alarm["ComparisonOperator"] == "LessThanThreshold"
    assert alarm["TreatMissingData"] == "notBreaching"
    [topic_id] = of_type(data, "AWS::SNS::Topic")
    assert alarm["AlarmActions"] == [{"Ref": topic_id}]
    assert "has less than 10% of its 1200 GiB free" in json.dumps(alarm["AlarmDescription"])


def test_lifecycle_errors_are_counted_by_a_metric_filter_and_alarmed_on(cluster, data):
    [metric_filter] = of_type(cluster, "AWS::Logs::MetricFilter").values()
    properties = metric_filter["Properties"]
    assert properties["FilterPattern"] == LIFECYCLE_ERROR_PATTERN == '"ERROR:"'
    [transformation] = properties["MetricTransformations"]
    assert transformation["MetricName"] == LIFECYCLE_ERRORS_METRIC
    assert transformation["MetricNamespace"] == "fm_platform/FmpTraining"
    assert transformation["MetricValue"] == "1" and transformation["DefaultValue"] == 0
    # The log group HyperPod writes: /aws/sagemaker/Clusters/<name>/<id>.
    assert "/aws/sagemaker/Clusters/" in json.dumps(properties["LogGroupName"])
    [alarm] = [
        a["Properties"]
        for a in of_type(cluster, "AWS::CloudWatch::Alarm").values()
        if a["Properties"].get("MetricName") == LIFECYCLE_ERRORS_METRIC
    ]
    assert alarm["Namespace"] == "fm_platform/FmpTraining"
    assert alarm["Threshold"] == 1
    assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
    assert alarm["TreatMissingData"] == "notBreaching"
    [action] = alarm["AlarmActions"]
    assert is_topic_import(action, data)


def test_the_training_dashboard_shows_groups_file_system_and_lifecycle_errors(cluster):
    [dashboard] = of_type(cluster, "AWS::CloudWatch::Dashboard").values()
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    for expected in ("FreeDataStorageCapacity", LIFECYCLE_ERRORS_METRIC, "alarm"):
        assert expected in body


def test_the_rollback_alarms_rule_notifies_once_and_the_events_rule_skips_its_events():
    controller, workers = DEFAULT_INSTANCE_GROUPS
    update = ScheduledUpdate(cron="cron(0 3 ? * SUN *)")
    config = TrainingConfig(
        instance_groups=(controller, dataclasses.replace(workers, scheduled_update=update))
    )
    stack = TrainingStack(new_app(), "Updates", config=config)
    template = Template.from_stack(stack).to_json()
    rules = of_type(template, "AWS::Events::Rule")
    [health] = [r for r in rules.values() if r["Properties"].get("Name")]
    [events] = [r for r in rules.values() if not r["Properties"].get("Name")]
    [health_target] = health["Properties"]["Targets"]
    [events_target] = events["Properties"]["Targets"]
    assert health_target["Arn"] == events_target["Arn"]
    # Unhealthy nodes come through the rollback alarm's rule; the events rule takes the rest.
    [arn] = health["Properties"]["EventPattern"]["detail"]["ClusterArn"]
    assert events["Properties"]["EventPattern"] == cluster_event_pattern(arn, unhealthy_nodes=False)


def test_without_unhealthy_nodes_the_pattern_keeps_state_changes_and_recoveries():
    pattern = cluster_event_pattern("arn:c", unhealthy_nodes=False)
    state, health = pattern["$or"]
    assert state == {"detail-type": [STATE_CHANGE], "detail": {"ClusterArn": ["arn:c"]}}
    assert health["detail-type"] == [NODE_HEALTH]
    assert health["detail"]["HealthSummary"] == {"HealthStatus": [{"anything-but": ["Unhealthy"]}]}


def _sdk_function(template: dict[str, Any]) -> dict[str, Any]:
    (function,) = [
        r
        for key, r in of_type(template, "AWS::Lambda::Function").items()
        if key.startswith(SDK_FUNCTION_ID)
    ]
    return function


def test_the_sdk_function_reserves_no_concurrency_and_has_no_dead_letter_queue(cluster):
    # Both stated as acknowledged findings beside the function (the packs run clean).
    properties = _sdk_function(cluster)["Properties"]
    assert "ReservedConcurrentExecutions" not in properties
    assert "DeadLetterConfig" not in properties


@pytest.mark.slow  # synthesizes the training stacks again, with the compliance packs
def test_sdk_function_reserved_concurrency_reaches_the_function():
    config = load_config(
        {
            "training": {
                "availability_zone_id": "use1-az4",
                "sdk_function_reserved_concurrency": 2,
            },
            "deploy_inference": False,
        }
    )
    app = new_app()
    stack = TrainingStack(app, "FmpTraining", config=config.training)
    function = _sdk_function(Template.from_stack(stack).to_json())
    assert function["Properties"]["ReservedConcurrentExecutions"] == 2
    # The concurrency findings are met, not acknowledged; nothing is left open.
    assert nag_findings(app) == []


@pytest.mark.parametrize("value", [0, -1])
def test_sdk_function_reserved_concurrency_below_one_is_refused(value):
    with pytest.raises(ValidationError) as error:
        load_config({"training": {"sdk_function_reserved_concurrency": value}})
    assert error.value.problems == (
        f"training.sdk_function_reserved_concurrency={value}: must be at least 1 (0 stops "
        "every invocation, and the stack operation that calls the function fails); leave it "
        "unset to reserve none",
    )
