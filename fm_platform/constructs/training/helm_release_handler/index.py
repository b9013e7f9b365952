"""The custom resource handler of a Helm release on the EKS cluster: each Create, Update or
Delete starts one build of the release's CodeBuild project (install or upgrade; uninstall)
and waits for it. Runs under aws-cdk-lib's custom resource provider framework:
``on_event`` starts the build, ``is_complete`` is polled until it ends."""

from __future__ import annotations

import base64
import json
from typing import Any

import boto3

#: Build states that end a build without success (CodeBuild API, Build.buildStatus).
_FAILED = ("FAILED", "FAULT", "TIMED_OUT", "STOPPED")
#: Resource properties passed to the build as environment variables, by variable name.
_VARIABLES = {
    "CLUSTER_NAME": "ClusterName",
    "RELEASE": "Release",
    "NAMESPACE": "Namespace",
    "CHART_REPOSITORY": "ChartRepository",
    "CHART_COMMIT": "ChartCommit",
    "CHART_PATH": "ChartPath",
}


def _encoded(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def build_variables(request: str, properties: dict[str, Any]) -> list[dict[str, str]]:
    """The build's environment variable overrides for a ``request`` on a release with
    ``properties``: the action, the release's coordinates, and the values and manifests
    base64-encoded (JSON, which Helm reads as YAML)."""
    variables = {name: str(properties.get(key, "")) for name, key in _VARIABLES.items()}
    variables["ACTION"] = "uninstall" if request == "Delete" else "install"
    variables["VALUES"] = _encoded(properties.get("Values") or "{}")
    manifests = json.loads(properties.get("Manifests") or "[]")
    variables["MANIFESTS"] = _encoded("\n---\n".join(json.dumps(m) for m in manifests))
    return [{"name": k, "value": v, "type": "PLAINTEXT"} for k, v in sorted(variables.items())]


def physical_id(properties: dict[str, Any]) -> str:
    """One release on one cluster: another cluster, namespace or release name is a new
    resource, and CloudFormation deletes (uninstalls) the old one after."""
    return "/".join(properties[k] for k in ("ClusterName", "Namespace", "Release"))


def on_event(event: dict[str, Any], _context: object) -> dict[str, Any]:
    """Start the build for this request."""
    request = event["RequestType"]
    properties = event["ResourceProperties"]
    resource_id = event.get("PhysicalResourceId") or physical_id(properties)
    if request != "Delete":
        resource_id = physical_id(properties)
    build = boto3.client("codebuild").start_build(
        projectName=properties["ProjectName"],
        environmentVariablesOverride=build_variables(request, properties),
    )
    return {"PhysicalResourceId": resource_id, "Data": {"BuildId": build["build"]["id"]}}


def is_complete(event: dict[str, Any], _context: object) -> dict[str, Any]:
    """Whether the build ended; a failed build fails the request with its log's link."""
    build_id = event["Data"]["BuildId"]
    (build,) = boto3.client("codebuild").batch_get_builds(ids=[build_id])["builds"]
    status = build["buildStatus"]
    if status in _FAILED:
        logs = build.get("logs", {})
        raise RuntimeError(
            f"Helm build {build_id} ended {status}; its log: {logs.get('deepLink', '')} "
            f"(log group {logs.get('groupName', '')}, stream {logs.get('streamName', '')})"
        )
    return {"IsComplete": status == "SUCCEEDED"}
