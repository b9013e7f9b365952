"""`fmp alarms` against stubbed CloudFormation and CloudWatch."""

from __future__ import annotations

import datetime
import json
from typing import Any

import boto3
import pytest

from tests.cli_support import LAUNCHED, REGION, StubbedClients, hermetic_aws_env, run

ACCOUNT = "arn:aws:cloudwatch:us-east-1:111122223333:alarm"
# Every stack status CloudFormation's API knows except DELETE_COMPLETE.
LIVE_STATUSES = [
    s
    for s in boto3.client("cloudformation", region_name=REGION)
    .meta.service_model.shape_for("StackStatus")
    .enum
    if s != "DELETE_COMPLETE"
]


@pytest.fixture(autouse=True)
def _aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    hermetic_aws_env(monkeypatch, tmp_path)


def at(hour: int, minute: int) -> datetime.datetime:
    return datetime.datetime(2024, 5, 1, hour, minute, tzinfo=datetime.timezone.utc)


def stack(name: str, description: str | None) -> dict[str, Any]:
    summary = {"StackName": name, "CreationTime": LAUNCHED, "StackStatus": "UPDATE_COMPLETE"}
    if description is not None:
        summary["TemplateDescription"] = description
    return summary


def resource(logical: str, kind: str, physical: str | None) -> dict[str, Any]:
    summary = {
        "LogicalResourceId": logical,
        "ResourceType": kind,
        "LastUpdatedTimestamp": LAUNCHED,
        "ResourceStatus": "CREATE_COMPLETE",
    }
    if physical is not None:
        summary["PhysicalResourceId"] = physical
    return summary


def alarm(name: str, state: str, since: datetime.datetime, reason: str) -> dict[str, Any]:
    return {
        "AlarmName": name,
        "AlarmArn": f"{ACCOUNT}:{name}",
        "StateValue": state,
        "StateReason": reason,
        "StateUpdatedTimestamp": since + datetime.timedelta(minutes=5),
        "StateTransitionedTimestamp": since,
    }


def stub_project(clients: StubbedClients) -> None:
    """Two project stacks (one found on the second page) next to a stranger's stack."""
    cfn = clients.stub("cloudformation")
    cfn.add_response(
        "list_stacks",
        {
            "StackSummaries": [
                stack("FmpInference", "fm_platform: SageMaker endpoints for foundation models"),
                stack("billing", "the billing service"),
                stack("no-description", None),
            ],
            "NextToken": "more",
        },
        {"StackStatusFilter": LIVE_STATUSES},
    )
    cfn.add_response(
        "list_stacks",
        {"StackSummaries": [stack("FleetA0", "fm_platform fleet saas: stack FleetA0 of 2")]},
        {"StackStatusFilter": LIVE_STATUSES, "NextToken": "more"},
    )
    cfn.add_response(
        "list_stack_resources",
        {
            "StackResourceSummaries": [
                resource("Latency", "AWS::CloudWatch::Alarm", "FmpInference-llama-latency"),
                resource("Endpoint", "AWS::SageMaker::Endpoint", "shared-g5"),
            ],
            "NextToken": "page2",
        },
        {"StackName": "FmpInference"},
    )
    cfn.add_response(
        "list_stack_resources",
        {
            "StackResourceSummaries": [
                resource("Errors", "AWS::CloudWatch::Alarm", "FmpInference-5xx"),
                resource("Creating", "AWS::CloudWatch::Alarm", None),
            ]
        },
        {"StackName": "FmpInference", "NextToken": "page2"},
    )
    cfn.add_response(
        "list_stack_resources",
        {"StackResourceSummaries": [resource("Wake", "AWS::CloudWatch::Alarm", "FleetA0-wake")]},
        {"StackName": "FleetA0"},
    )


NAMES = ["FleetA0-wake", "FmpInference-5xx", "FmpInference-llama-latency"]


def test_alarms_lists_what_is_firing_in_the_project_stacks_oldest_first(capsys: Any) -> None:
    clients = StubbedClients()
    stub_project(clients)
    clients.stub("cloudwatch").add_response(
        "describe_alarms",
        {
            "MetricAlarms": [
                alarm("FmpInference-5xx", "ALARM", at(12, 40), "Threshold Crossed: 5 > 1"),
                alarm("FleetA0-wake", "ALARM", at(12, 10), "Threshold Crossed: 3 > 0"),
            ]
        },
        {"AlarmNames": NAMES, "StateValue": "ALARM"},
    )
    code, out, err = run(["alarms"], clients, capsys)
    assert (code, err) == (0, "")
    clients.assert_done()
    lines = out.splitlines()
    assert lines[0].split() == ["ALARM", "STATE", "SINCE", "STACK", "REASON"]
    assert lines[1].split() == [
        "FleetA0-wake",
        "ALARM",
        "2024-05-01T12:10:00+00:00",
        "FleetA0",
        "Threshold",
        "Crossed:",
        "3",
        ">",
        "0",
    ]
    assert lines[2].split()[:4] == ["FmpInference-5xx", "ALARM", "2024-05-01T12:40:00+00:00"] + [
        "FmpInference"
    ]
    assert lines[-1] == "2 firing of 3 alarms in 2 stacks (FmpInference, FleetA0)."


def test_nothing_firing(capsys: Any) -> None:
    clients = StubbedClients()
    stub_project(clients)
    clients.stub("cloudwatch").add_response(
        "describe_alarms", {"MetricAlarms": []}, {"AlarmNames": NAMES, "StateValue": "ALARM"}
    )
    code, out, _ = run(["alarms"], clients, capsys)
    assert code == 0
    assert out == "No alarm is firing: 3 alarms in 2 stacks (FmpInference, FleetA0).\n"


def test_all_lists_every_state_of_the_named_stacks_as_json(capsys: Any) -> None:
    clients = StubbedClients()
    clients.stub("cloudformation").add_response(
        "list_stack_resources",
        {"StackResourceSummaries": [resource("Wake", "AWS::CloudWatch::Alarm", "MyModels-wake")]},
        {"StackName": "MyModels"},
    )
    clients.stub("cloudwatch").add_response(
        "describe_alarms",
        {"MetricAlarms": [alarm("MyModels-wake", "OK", at(9, 0), "Threshold Crossed: 0 <= 0")]},
        {"AlarmNames": ["MyModels-wake"]},
    )
    code, out, _ = run(["alarms", "--stack", "MyModels", "--all", "--json"], clients, capsys)
    assert code == 0
    clients.assert_done()
    assert json.loads(out) == {
        "Stacks": ["MyModels"],
        "AlarmsChecked": 1,
        "Alarms": [
            {
                "AlarmName": "MyModels-wake",
                "StateValue": "OK",
                "Since": "2024-05-01T09:00:00+00:00",
                "Stack": "MyModels",
                "StateReason": "Threshold Crossed: 0 <= 0",
            }
        ],
    }


def test_alarm_names_are_asked_for_100_at_a_time(capsys: Any) -> None:
    names = [f"FleetA0-alarm-{i:03d}" for i in range(101)]
    clients = StubbedClients()
    clients.stub("cloudformation").add_response(
        "list_stack_resources",
        {
            "StackResourceSummaries": [
                resource(f"A{i}", "AWS::CloudWatch::Alarm", name) for i, name in enumerate(names)
            ]
        },
        {"StackName": "FleetA0"},
    )
    cloudwatch = clients.stub("cloudwatch")
    cloudwatch.add_response(
        "describe_alarms",
        {"MetricAlarms": [alarm(names[0], "ALARM", at(8, 0), "r")], "NextToken": "n"},
        {"AlarmNames": names[:100], "StateValue": "ALARM"},
    )
    cloudwatch.add_response(
        "describe_alarms",
        {"MetricAlarms": []},
        {"AlarmNames": names[:100], "StateValue": "ALARM", "NextToken": "n"},
    )
    cloudwatch.add_response(
        "describe_alarms",
        {"MetricAlarms": [alarm(names[100], "ALARM", at(7, 0), "r")]},
        {"AlarmNames": names[100:], "StateValue": "ALARM"},
    )
    code, out, _ = run(["alarms", "--stack", "FleetA0"], clients, capsys)
    assert code == 0
    clients.assert_done()
    assert [line.split()[0] for line in out.splitlines()[1:3]] == [names[100], names[0]]


def test_no_project_stack_is_one_error_line(capsys: Any) -> None:
    clients = StubbedClients(region="eu-west-1")
    clients.stub("cloudformation").add_response(
        "list_stacks",
        {"StackSummaries": [stack("billing", "the billing service")]},
        {"StackStatusFilter": LIVE_STATUSES},
    )
    code, out, err = run(["alarms"], clients, capsys)
    assert (code, out) == (1, "")
    assert err == (
        "fmp: error: no stack with a description starting 'fm_platform' in region eu-west-1: "
        "check --region/--profile, or name the stacks with --stack\n"
    )


def test_a_stack_without_alarms_asks_cloudwatch_nothing(capsys: Any) -> None:
    clients = StubbedClients()
    clients.stub("cloudformation").add_response(
        "list_stack_resources",
        {"StackResourceSummaries": [resource("Endpoint", "AWS::SageMaker::Endpoint", "e")]},
        {"StackName": "MyModels"},
    )
    clients.stub("cloudwatch")  # no response queued: a DescribeAlarms call would fail
    code, out, _ = run(["alarms", "--stack", "MyModels", "--all"], clients, capsys)
    assert (code, out) == (0, "No alarms: 0 alarms in 1 stack (MyModels).\n")


def test_since_falls_back_to_the_last_state_update(capsys: Any) -> None:
    older = alarm("MyModels-wake", "ALARM", at(9, 0), "r")
    del older["StateTransitionedTimestamp"]
    clients = StubbedClients()
    clients.stub("cloudformation").add_response(
        "list_stack_resources",
        {"StackResourceSummaries": [resource("Wake", "AWS::CloudWatch::Alarm", "MyModels-wake")]},
        {"StackName": "MyModels"},
    )
    clients.stub("cloudwatch").add_response(
        "describe_alarms",
        {"MetricAlarms": [older]},
        {"AlarmNames": ["MyModels-wake"], "StateValue": "ALARM"},
    )
    code, out, _ = run(["alarms", "--stack", "MyModels", "--json"], clients, capsys)
    assert code == 0
    assert json.loads(out)["Alarms"][0]["Since"] == "2024-05-01T09:05:00+00:00"
