"""The Helm release custom resource's handler (shipped as a Lambda asset): the build each
request starts, and how a failed build fails the request."""

from __future__ import annotations

import base64
import importlib.util
import json
from types import ModuleType
from typing import Any

import pytest

from tests.support import ROOT

HANDLER = ROOT / "fm_platform" / "constructs" / "training" / "helm_release_handler" / "index.py"
PROPERTIES = {
    "ProjectName": "helm-builds",
    "ClusterName": "Eks-abc",
    "Release": "hyperpod-dependencies",
    "Namespace": "kube-system",
    "Values": json.dumps({"cert-manager": {"enabled": False}}),
    "ChartRepository": "https://github.com/aws/sagemaker-hyperpod-cli.git",
    "ChartCommit": "a" * 40,
    "ChartPath": "helm_chart/HyperPodHelmChart",
}


@pytest.fixture
def handler() -> ModuleType:
    spec = importlib.util.spec_from_file_location("helm_release_handler", HANDLER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class FakeCodeBuild:
    def __init__(self, status: str = "SUCCEEDED") -> None:
        self.started: list[dict[str, Any]] = []
        self.status = status

    def start_build(self, **kwargs: Any) -> dict[str, Any]:
        self.started.append(kwargs)
        return {"build": {"id": "helm-builds:1"}}

    def batch_get_builds(self, ids: list[str]) -> dict[str, Any]:
        logs = {"deepLink": "https://console/logs", "groupName": "g", "streamName": "s"}
        return {"builds": [{"id": ids[0], "buildStatus": self.status, "logs": logs}]}


def _variables(started: dict[str, Any]) -> dict[str, str]:
    return {v["name"]: v["value"] for v in started["environmentVariablesOverride"]}


def test_create_and_update_install_the_release(handler, monkeypatch):
    fake = FakeCodeBuild()
    monkeypatch.setattr(handler.boto3, "client", lambda service: fake)
    for request in ("Create", "Update"):
        event = {"RequestType": request, "ResourceProperties": PROPERTIES}
        if request == "Update":
            event["PhysicalResourceId"] = "Eks-abc/kube-system/hyperpod-dependencies"
        result = handler.on_event(event, None)
        assert result == {
            "PhysicalResourceId": "Eks-abc/kube-system/hyperpod-dependencies",
            "Data": {"BuildId": "helm-builds:1"},
        }
    variables = _variables(fake.started[-1])
    assert fake.started[-1]["projectName"] == "helm-builds"
    assert variables["ACTION"] == "install"
    assert variables["CHART_COMMIT"] == "a" * 40
    assert json.loads(base64.b64decode(variables["VALUES"])) == {"cert-manager": {"enabled": False}}


def test_delete_uninstalls_what_the_physical_id_names(handler, monkeypatch):
    fake = FakeCodeBuild()
    monkeypatch.setattr(handler.boto3, "client", lambda service: fake)
    event = {
        "RequestType": "Delete",
        "PhysicalResourceId": "Eks-old/kube-system/hyperpod-dependencies",
        "ResourceProperties": PROPERTIES,
    }
    result = handler.on_event(event, None)
    assert result["PhysicalResourceId"] == "Eks-old/kube-system/hyperpod-dependencies"
    assert _variables(fake.started[0])["ACTION"] == "uninstall"


def test_manifests_become_one_yaml_stream(handler):
    manifests = [{"kind": "PersistentVolume"}, {"kind": "PersistentVolumeClaim"}]
    properties = {**PROPERTIES, "ChartCommit": "", "Manifests": json.dumps(manifests)}
    variables = {v["name"]: v["value"] for v in handler.build_variables("Create", properties)}
    text = base64.b64decode(variables["MANIFESTS"]).decode()
    assert [json.loads(part) for part in text.split("\n---\n")] == manifests


@pytest.mark.parametrize(("status", "complete"), [("IN_PROGRESS", False), ("SUCCEEDED", True)])
def test_is_complete_follows_the_build(handler, monkeypatch, status, complete):
    monkeypatch.setattr(handler.boto3, "client", lambda service: FakeCodeBuild(status))
    event = {"Data": {"BuildId": "helm-builds:1"}}
    assert handler.is_complete(event, None) == {"IsComplete": complete}


@pytest.mark.parametrize("status", ["FAILED", "FAULT", "TIMED_OUT", "STOPPED"])
def test_a_failed_build_fails_with_its_log(handler, monkeypatch, status):
    monkeypatch.setattr(handler.boto3, "client", lambda service: FakeCodeBuild(status))
    with pytest.raises(RuntimeError) as error:
        handler.is_complete({"Data": {"BuildId": "helm-builds:1"}}, None)
    assert f"ended {status}" in str(error.value)
    assert "https://console/logs" in str(error.value)
    assert "log group g" in str(error.value)
