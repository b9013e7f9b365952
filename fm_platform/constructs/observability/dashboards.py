"""CloudWatch dashboards written from generated sections (see
:mod:`~fm_platform.constructs.observability.layout`): as many ``AWS::CloudWatch::Dashboard``
resources as the limits require, named after the stack and its region (dashboards are
global to an account, so the region keeps two deployments of one stack apart).

A body is written as JSON text in Python, each CDK token in it replaced by a ``${tN}``
variable of one ``Fn::Sub``: a fleet stack's body holds thousands of metric lines, and
handing them to the CDK runtime as a structure to walk costs seconds of synth.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from aws_cdk import Aws, Fn, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from constructs import Construct

from fm_platform.constructs.observability.layout import Limits, Section, page_body, paginate


def metric_entry(
    namespace: str, name: str, dimensions: Sequence[tuple[str, str]], **rendering: Any
) -> list[Any]:
    """One entry of a metric widget's ``metrics``: namespace, name, each dimension's name
    and value, then the rendering properties (label, stat, period...)."""
    entry: list[Any] = [namespace, name]
    for dimension, value in dimensions:
        entry += [dimension, value]
    if rendering:
        entry.append(rendering)
    return entry


# How a CDK string token reads in Python (aws-cdk-lib core/lib/private/encoding.ts).
_TOKEN = re.compile(r"\$\{Token\[[^\]]+\]\}")


def substituted_json(value: Any) -> tuple[str, dict[str, str]]:
    """``value`` as JSON text for ``Fn::Sub``: each distinct CDK string token in it becomes
    a ``${tN}`` variable (returned with the token it stands for), and a literal ``${`` is
    escaped as ``${!``."""
    text = json.dumps(value, separators=(",", ":"))
    variables: dict[str, str] = {}
    names: dict[str, str] = {}

    def variable(match: re.Match[str]) -> str:
        token = match.group(0)
        if token not in names:
            names[token] = f"t{len(names)}"
            variables[names[token]] = token
        return "\0" + names[token] + "\1"

    text = _TOKEN.sub(variable, text).replace("${", "${!")
    return text.replace("\0", "${").replace("\1", "}"), variables


class Dashboards(Construct):
    """The dashboards of ``sections``: the first ``Dashboard`` (named
    ``<stack>-<region>``), then ``Dashboard2``... (``<stack>-<region>-2``...) when the
    sections need more room than one holds. Each starts with the status of the alarms of
    its sections.

    The body is written through one ``Fn::Sub`` (see :func:`substituted_json`); with
    ``substitute=False`` it is left to CDK (``Fn::Join``), which writes any reference, one
    to another stack's output included: for small bodies holding such references.

    Attributes: ``dashboards`` (the ``CfnDashboard`` resources, in order), ``pages`` (what
    each holds).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        sections: Sequence[Section],
        title: str,
        limits: Limits = Limits(),  # noqa: B008 - frozen, so safe to share
        substitute: bool = True,
    ) -> None:
        """Write ``sections`` onto dashboards titled ``title`` (in their alarm widgets)."""
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        self.pages = paginate(sections, limits)
        self.dashboards: list[cloudwatch.CfnDashboard] = []
        for number, page in enumerate(self.pages, start=1):
            suffix = "" if number == 1 else f"-{number}"
            body = page_body(page, title, limits)
            self.dashboards.append(
                cloudwatch.CfnDashboard(
                    self,
                    f"Dashboard{suffix.lstrip('-')}",
                    dashboard_name=Fn.join(
                        "", [stack.stack_name, "-", Aws.REGION, *([suffix] if suffix else [])]
                    ),
                    dashboard_body=(
                        Fn.sub(*substituted_json(body))
                        if substitute
                        else stack.to_json_string(body)
                    ),
                )
            )
