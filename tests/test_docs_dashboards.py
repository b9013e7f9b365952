"""The dashboard pictures (scripts/docs_dashboards.py) are drawn from the synthesized
dashboard bodies: checked on the Graphviz source, so no Graphviz is needed here."""

from __future__ import annotations

import re
import sys

from tests.support import ROOT

sys.path.insert(0, str(ROOT / "scripts"))

from docs_dashboards import body_text, caption, dashboards, dot, picture_name  # noqa: E402


def test_every_stack_dashboard_of_the_default_app_is_read(default_assembly):
    for stack in ("FmpInference", "FmpTraining"):
        [(_, widgets)] = dashboards(default_assembly.templates[stack])
        assert widgets and all({"x", "y", "width", "height"} <= set(w) for w in widgets)
    assert dashboards(default_assembly.templates["FmpInferenceArtifacts"]) == []


def test_the_inference_picture_has_a_box_per_widget_with_its_title(default_assembly):
    [(_, widgets)] = dashboards(default_assembly.templates["FmpInference"])
    source = dot(widgets, "FmpInference: dashboard 1")
    assert len(re.findall(r"^  w\d+ \[pos=", source, re.M)) == len(widgets)
    assert caption(widgets[0]) == ("FmpInference: alarms", "7 alarms")
    assert "Copies per model" in source
    assert "Queue: backlog and oldest request (seconds)" in source
    assert "${" not in source  # every reference was replaced by the resource it names


def test_references_are_shown_by_the_resource_they_name():
    body = {"Fn::Sub": ['{"a":"${t0}","r":"${AWS::Region}","l":"${!x}"}', {"t0": {"Ref": "Ep"}}]}
    assert body_text(body) == '{"a":"Ep","r":"AWS-Region","l":"${x}"}'
    joined = {"Fn::Join": ["", ['{"a":"', {"Fn::GetAtt": ["Cluster", "Arn"]}, '"}']]}
    assert body_text(joined) == '{"a":"Cluster"}'


def test_pictures_are_named_after_the_stack():
    assert picture_name("FmpInference", 1) == "inference-dashboard"
    assert picture_name("fleet-03", 2) == "fleet-03-dashboard-2"
