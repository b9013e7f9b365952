"""The inference components on an endpoint, and finding one by its model's name."""

from __future__ import annotations

from typing import Any

from fm_platform.cli.context import Context
from fm_platform.cli.errors import CliError


def component_summaries(ctx: Context, endpoint: str) -> list[dict[str, Any]]:
    """ListInferenceComponents for `endpoint`, every page."""
    pages = (
        ctx.clients.client("sagemaker")
        .get_paginator("list_inference_components")
        .paginate(EndpointNameEquals=endpoint)
    )
    return [summary for page in pages for summary in page.get("InferenceComponents", [])]


def list_components(ctx: Context, endpoint: str) -> list[dict[str, Any]]:
    """Every inference component on `endpoint`, described (all pages)."""
    sagemaker = ctx.clients.client("sagemaker")
    components = []
    for summary in component_summaries(ctx, endpoint):
        name = summary["InferenceComponentName"]
        ic = sagemaker.describe_inference_component(InferenceComponentName=name)
        runtime = ic.get("RuntimeConfig", {})
        components.append(
            {
                "InferenceComponentName": name,
                "VariantName": ic.get("VariantName"),
                "Status": ic.get("InferenceComponentStatus"),
                "CurrentCopyCount": runtime.get("CurrentCopyCount"),
                "DesiredCopyCount": runtime.get("DesiredCopyCount"),
                "FailureReason": ic.get("FailureReason"),
            }
        )
    return components


def resolve_component(names: list[str], model: str, stack: str, endpoint: str) -> str:
    """The component in `names` that serves `model`.

    `model` is taken as given when it is a component name; otherwise it is a model name,
    and the stacks name components `<stack>-<model>` (or, when that is longer than the
    63-character limit, `<stack prefix>-<hash>-<model>`): `<stack>-<model>` is chosen when
    present, else the one name ending in `-<model>`.
    """
    if model in names:
        return model
    if f"{stack}-{model}" in names:
        return f"{stack}-{model}"
    matches = [name for name in names if name.endswith(f"-{model}")]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise CliError(
            f"model {model} matches {len(matches)} inference components on endpoint "
            f"{endpoint} ({', '.join(sorted(matches))}): pass the component name"
        )
    listed = ", ".join(sorted(names)) if names else "none"
    raise CliError(
        f"no inference component for model {model} on endpoint {endpoint} "
        f"(its components: {listed}): pass a model name or a component name"
    )
