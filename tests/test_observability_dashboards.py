"""The dashboards: what an inference stack's shows per endpoint and per model, and the
split into several dashboards when the sections outgrow one."""

from __future__ import annotations

import json
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from fm_platform.constructs.observability.dashboards import Dashboards, substituted_json
from fm_platform.constructs.observability.layout import Limits, Section, Widget
from tests.support import new_app
from tests.test_observability_alarms import MAPPING, Built


@pytest.fixture(scope="module")
def built() -> Built:
    return Built(MAPPING)


def body(built: Built) -> dict[str, Any]:
    """The stack's one dashboard body, its ``Fn::Sub`` variables put back as their
    CloudFormation values (rendered as JSON text)."""
    [dashboard] = [r for r in built.resources.values() if r["Type"] == "AWS::CloudWatch::Dashboard"]
    template, variables = dashboard["Properties"]["DashboardBody"]["Fn::Sub"]
    text = template
    for name, value in variables.items():
        text = text.replace("${" + name + "}", json.dumps(value).replace('"', "'"))
    return json.loads(text)


def titles(body: dict[str, Any]) -> list[str]:
    return [
        w["properties"].get("title") or w["properties"].get("markdown") for w in body["widgets"]
    ]


def test_the_inference_dashboard_has_a_section_per_endpoint_and_the_alarms_first(built):
    dashboard = body(built)
    first = dashboard["widgets"][0]
    assert first["type"] == "alarm" and first["y"] == 0
    assert len(first["properties"]["alarms"]) == 3 + 3 + 2  # every health alarm
    headings = [w["properties"]["markdown"] for w in dashboard["widgets"] if w["type"] == "text"]
    assert [h.split(" (")[0] for h in headings] == [
        "### Inference Components endpoint shared",
        "### Single-model endpoint single",
        "### Multi-model endpoint multi",
        "### Asynchronous endpoint queue",
        "### Asynchronous endpoint backfill",
    ]


def test_models_share_the_widgets_of_their_endpoint_one_line_each(built):
    dashboard = body(built)
    by_title = {w["properties"].get("title"): w for w in dashboard["widgets"]}
    copies = by_title["Copies per model"]["properties"]["metrics"]
    assert [m[-1]["label"] for m in copies] == ["chat", "sleepy", "custom", "silent"]
    assert {m[1] for m in copies} == {"CPUUtilizationNormalized"}
    accelerators = by_title["Accelerator / accelerator memory utilisation per model (%)"]
    assert {m[1] for m in accelerators["properties"]["metrics"]} == {
        "GPUUtilizationNormalized",
        "GPUMemoryUtilizationNormalized",
    }
    for title in (
        "Invocations per model",
        "Model latency p50 / p90 (microseconds)",
        "Invocations per copy",
        "Requests that found no copy per model",
    ):
        assert title in by_title


def test_an_asynchronous_endpoint_shows_its_queue(built):
    queue = [
        w
        for w in body(built)["widgets"]
        if w["properties"].get("title") == "Queue: backlog and oldest request (seconds)"
    ]
    assert len(queue) == 2
    assert [m[1] for m in queue[0]["properties"]["metrics"]] == [
        "ApproximateBacklogSize",
        "ApproximateAgeOfOldestRequest",
    ]


def test_without_dashboards_none_is_made():
    plain = Built({**MAPPING, "dashboards": False})
    assert plain.stack.observability.dashboards is None
    plain.template.resource_count_is("AWS::CloudWatch::Dashboard", 0)


def test_sections_outgrowing_one_dashboard_go_on_several_named_after_the_stack():
    stack = cdk.Stack(new_app(), "Big")
    sections = [
        Section(tuple(Widget("metric", {"title": f"{s}-{w}"}, metrics=1) for w in range(4)))
        for s in range(10)
    ]
    dashboards = Dashboards(
        stack, "Dashboards", sections=sections, title="Big", limits=Limits(widgets=9)
    )
    assert len(dashboards.dashboards) == 5  # two sections of four widgets per page
    resources = Template.from_stack(stack).find_resources("AWS::CloudWatch::Dashboard")
    names = sorted(json.dumps(r["Properties"]["DashboardName"]) for r in resources.values())
    assert len(names) == 5
    assert sum('"-2"' in name for name in names) == 1
    assert sum('"-5"' in name for name in names) == 1


def test_tokens_become_substitution_variables_and_literal_dollars_are_escaped():
    stack = cdk.Stack(new_app(), "Tokens")
    value = {"a": stack.account, "b": "${literal}", "c": [stack.account, stack.region]}
    text, variables = substituted_json(value)
    assert text == '{"a":"${t0}","b":"${!literal}","c":["${t0}","${t1}"]}'
    assert set(variables) == {"t0", "t1"}
