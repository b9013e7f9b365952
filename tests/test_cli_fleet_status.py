"""`fmp fleet status PLAN` against stubbed CloudFormation and CloudWatch: a handful of
batched calls whatever the catalog size."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest
from botocore.stub import ANY

from fm_platform.cli.fleet_status import _rows
from fm_platform.fleet.outputs.plan import EndpointPlan, Placement, Plan, PoolPlan, read_plan
from fm_platform.rules.replacement import component_endpoint_key
from tests.cli_support import StubbedClients, hermetic_aws_env, run, stack_response

NOW = datetime.datetime(2026, 12, 1, 12, 0, 30, tzinfo=datetime.timezone.utc)
END = NOW.replace(second=0)


@pytest.fixture(autouse=True)
def _aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    hermetic_aws_env(monkeypatch, tmp_path)
    monkeypatch.setattr("fm_platform.cli.cloudwatch.utc_now", lambda: NOW)


def _plan(tmp_path) -> str:
    plan = Plan(catalog="teams", region="us-east-1")
    plan.endpoints["ic-g6e-001"] = EndpointPlan(
        name="ic-g6e-001",
        kind="inference-components",
        instance_type="ml.g6e.xlarge",
        stack="teams-01",
        group="ml.g6e.xlarge",
        models=["chat-8b"],
        min_instances=1,
        max_instances=4,
    )
    plan.endpoints["sme-intent"] = EndpointPlan(
        name="sme-intent",
        kind="single-model",
        instance_type="ml.c6i.xlarge",
        stack="teams-01",
        group="dedicated",
        models=["intent"],
        min_instances=1,
        max_instances=3,
    )
    plan.endpoints["ic-g5-001"] = EndpointPlan(
        name="ic-g5-001",
        kind="inference-components",
        instance_type="ml.g5.xlarge",
        stack="teams-02",
        group="ml.g5.xlarge",
        models=["late"],
    )
    plan.placements["chat-8b"] = Placement(
        name="chat-8b", endpoint="ic-g6e-001", min_copies=1, max_copies=6, adapters=["ft-a"]
    )
    plan.placements["intent"] = Placement(name="intent", endpoint="sme-intent")
    plan.placements["late"] = Placement(name="late", endpoint="ic-g5-001")
    path = tmp_path / "teams.plan.json"
    plan.write(path)
    return str(path)


def _results(ids_values: dict[str, list[float]]) -> dict[str, Any]:
    return {
        "MetricDataResults": [
            {
                "Id": i,
                "Label": i,
                "Timestamps": [END] * len(v),
                "Values": v,
                "StatusCode": "Complete",
            }
            for i, v in ids_values.items()
        ]
    }


def test_one_table_of_every_model_from_batched_calls(tmp_path, capsys):
    clients = StubbedClients()
    cfn = clients.stub("cloudformation")
    cfn.add_response(
        "describe_stacks",
        stack_response(
            "teams-01",
            {"EndpointIcG6e001": "ic-g6e-001-AbC", "EndpointSmeIntent": "sme-intent-XyZ"},
        ),
        {"StackName": "teams-01"},
    )
    cfn.add_client_error(
        "describe_stacks",
        service_error_code="ValidationError",
        service_message="Stack with id teams-02 does not exist",
        expected_params={"StackName": "teams-02"},
    )
    cw = clients.stub("cloudwatch")
    cw.add_response(
        "get_metric_data",
        _results({"q1": [950.0], "q2": [3.0], "q4": [120.0], "q5": [0.0]}),
        {
            "MetricDataQueries": ANY,
            "StartTime": END - datetime.timedelta(hours=1),
            "EndTime": END,
            "ScanBy": "TimestampDescending",
        },
    )
    cw.add_response(
        "get_metric_data",
        _results({"q0": [2.0, 2.0], "q1": [1.0]}),
        {
            "MetricDataQueries": ANY,
            "StartTime": END - datetime.timedelta(minutes=5),
            "EndTime": END,
            "ScanBy": "TimestampDescending",
        },
    )
    for stack, alarms in (
        (
            "teams-01",
            [("teams-01-chat-8b-424d77b4-health", "ALARM"), ("teams-01-sme-intent-health", "OK")],
        ),
        ("teams-02", []),
    ):
        cw.add_response(
            "describe_alarms",
            {
                "MetricAlarms": [
                    {"AlarmName": name, "StateValue": state} for name, state in alarms
                ],
                "CompositeAlarms": [],
            },
            {"AlarmNamePrefix": f"{stack}-", "AlarmTypes": ["MetricAlarm", "CompositeAlarm"]},
        )
    code, out, _ = run(["fleet", "status", _plan(tmp_path)], clients, capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == [
        "MODEL", "ENDPOINT", "KIND", "NOW", "PLANNED", "INVOCATIONS", "1H", "5XX", "1H", "ALARM"
    ]  # fmt: skip
    assert lines[1].split() == [
        "chat-8b", "(+1", "adapters)", "ic-g6e-001-AbC", "inference-components", "2", "copies",
        "1-6", "950", "3", "ALARM",
    ]  # fmt: skip
    assert lines[2].split() == [
        "intent", "sme-intent-XyZ", "single-model", "1", "instances", "1-3", "120", "0", "OK"
    ]  # fmt: skip
    assert lines[3].split()[:3] == ["late", "ic-g5-001", "(not"]
    assert "3 models of catalog teams in 2 stacks; 1 alarms firing; not deployed: ic-g5-001." in out
    clients.assert_done()


def test_json_lists_the_same_rows(tmp_path, capsys):
    clients = StubbedClients()
    for stack in ("teams-01", "teams-02"):
        clients.stub("cloudformation").add_response(
            "describe_stacks", stack_response(stack, {}), {"StackName": stack}
        )
    cw = clients.stub("cloudwatch")
    for stack in ("teams-01", "teams-02"):
        cw.add_response(
            "describe_alarms",
            {"MetricAlarms": [], "CompositeAlarms": []},
            {"AlarmNamePrefix": f"{stack}-", "AlarmTypes": ["MetricAlarm", "CompositeAlarm"]},
        )
    code, out, _ = run(["fleet", "status", _plan(tmp_path), "--json"], clients, capsys)
    assert code == 0
    data = json.loads(out)
    assert [r["Model"] for r in data["Models"]] == ["chat-8b", "intent", "late"]
    assert data["Models"][0]["Component"] == "teams-01-chat-8b-424d77b4"
    assert data["NotDeployed"] == ["ic-g5-001", "ic-g6e-001", "sme-intent"]


def test_a_missing_plan_file_is_a_clear_error(tmp_path, capsys):
    code, _, err = run(["fleet", "status", str(tmp_path / "none.json")], StubbedClients(), capsys)
    assert code != 0 and "no plan file" in err


def test_a_moved_model_is_shown_under_the_name_the_fleet_stacks_give_it(tmp_path):
    # A model moved between endpoints of one key is named after its new endpoint.
    plan = read_plan(_plan(tmp_path))
    assert plan is not None
    plan.placements["chat-8b"].moved_from = "ic-g6e-000"
    [row] = [r for r in _rows(plan, {}) if r["Model"] == "chat-8b"]
    assert row["Component"].startswith("teams-01-chat-8b-")
    assert row["Component"].endswith("-ic-g6e-001")
    assert row["Alarm"] == f"{row['Component']}-health"


def test_an_endpoint_with_fallback_pools_names_its_components_with_their_key(tmp_path):
    # The fleet stacks pass the pools' types on; they are part of the endpoint's key.
    plan = read_plan(_plan(tmp_path))
    assert plan is not None
    plan.endpoints["ic-g6e-001"].pools = [PoolPlan(instance_type="ml.g5.xlarge", priority=2)]
    key = component_endpoint_key(
        instance_type="ml.g6e.xlarge", variant_name="AllTraffic", pool_types=["ml.g5.xlarge"]
    )
    [row] = [r for r in _rows(plan, {}) if r["Model"] == "chat-8b"]
    assert row["Component"] == f"teams-01-chat-8b-{key}"
