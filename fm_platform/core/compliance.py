"""cdk-nag 3 rule packs and acknowledgements.

The default app runs AwsSolutions, HIPAA Security and NIST 800-53 R5 on every synth; an
unacknowledged finding fails ``app.synth()``. Each acknowledgement sits next to the resource
it concerns, with a reason specific to that resource; :func:`acknowledge_wildcard_resource`
builds ``AwsSolutions-IAM5[Resource::...]`` ids from the granted ARNs themselves, rendered
by :func:`nag_rendered` as cdk-nag prints them. :class:`Acknowledgements` collects many
acknowledgements of one construct (one per model placed on an endpoint) and adds them in one
call. :func:`suppress_scanner_findings` writes the same kind of acknowledgement where
checkov and cfn_nag read it, in the template.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import jsii
from aws_cdk import Acknowledgment, App, CfnResource, Stack, Validations
from cdk_nag import AwsSolutionsChecks, HIPAASecurityChecks, NIST80053R5Checks
from constructs import IConstruct, IValidation

from fm_platform.core.tokens import is_unresolved

# Rule id prefix -> the pack name cdk-nag 3 expects before "::" in an acknowledgement id.
_PACK_OF_RULE_PREFIX = {
    "AwsSolutions-": "AwsSolutions",
    "HIPAA.Security-": "HIPAA.Security",
    "NIST.800.53.R5-": "NIST.800.53.R5",
}


def apply_compliance_packs(app: App) -> None:
    """Run the AwsSolutions, HIPAA Security and NIST 800-53 R5 packs on ``app``."""
    Validations.of(app).add_plugins(
        AwsSolutionsChecks(app), HIPAASecurityChecks(app), NIST80053R5Checks(app)
    )


def acknowledge(construct: IConstruct, reason: str, *rules: str) -> None:
    """Acknowledge findings of ``rules`` on ``construct`` for ``reason``.

    Rules are written as cdk-nag reports them, e.g. ``"AwsSolutions-S1"`` or
    ``"AwsSolutions-IAM5[Action::s3:List*]"``; the pack prefix is added here.
    """
    Validations.of(construct).acknowledge(*acknowledgments(reason, *rules))


def acknowledgments(reason: str, *rules: str) -> list[Acknowledgment]:
    """The acknowledgements :func:`acknowledge` adds, for callers that keep a construct's
    ``Validations`` to acknowledge many findings on it."""
    result = []
    for rule in rules:
        pack = next(
            (name for prefix, name in _PACK_OF_RULE_PREFIX.items() if rule.startswith(prefix)),
            None,
        )
        if pack is None:
            raise ValueError(f"rule {rule!r} belongs to no pack this project runs")
        result.append(Acknowledgment(id=f"{pack}::{rule}", reason=reason))
    return result


def acknowledge_wildcard_resource(
    construct: IConstruct, reason: str, *resources: str, after_references: bool = False
) -> None:
    """Acknowledge the ``AwsSolutions-IAM5`` findings that ``resources`` (ARNs with a
    wildcard, as granted in ``construct``'s policies; tokens allowed) raise on
    ``construct``, for ``reason``.

    By default the finding IDs are rendered at once. With ``after_references`` they are
    rendered when the app is validated, after references between stacks have been resolved:
    an ARN from another stack then reads as the reference the template holds
    (``Fn::GetStackOutput`` or an import); use it for ARNs that may come from another stack.
    """
    if after_references:
        construct.node.add_validation(_LateWildcardAcknowledgement(construct, reason, resources))
        return
    acknowledge(construct, reason, *_wildcard_findings(construct, resources))


def _wildcard_findings(construct: IConstruct, resources: Sequence[str]) -> list[str]:
    return [f"AwsSolutions-IAM5[Resource::{arn}]" for arn in nag_rendered_all(construct, resources)]


class Acknowledgements:
    """Acknowledgements of findings on one construct, collected and added together: the
    many acknowledgements a construct gathers (one per model placed on an endpoint) cost one
    call into the CDK runtime (:meth:`add_collected`) instead of one each. The owner calls
    :meth:`add_collected` before the compliance packs run (they run when the app is
    validated, after its aspects)."""

    def __init__(self, construct: IConstruct) -> None:
        self.construct = construct
        self._collected: list[Acknowledgment] = []
        self._validations: Validations | None = None

    def acknowledge(self, reason: str, *rules: str) -> None:
        """Collect what :func:`acknowledge` adds for ``rules`` and ``reason``."""
        self._collected += acknowledgments(reason, *rules)

    def acknowledge_wildcard_resource(self, reason: str, *resources: str) -> None:
        """Collect what :func:`acknowledge_wildcard_resource` adds for ``resources`` (IDs
        rendered at once)."""
        self.acknowledge(reason, *_wildcard_findings(self.construct, resources))

    def acknowledge_rendered(self, reason: str, *rendered: str) -> None:
        """Collect the ``AwsSolutions-IAM5`` acknowledgements of resources already rendered
        with :func:`nag_rendered`."""
        self.acknowledge(reason, *(f"AwsSolutions-IAM5[Resource::{r}]" for r in rendered))

    def add_collected(self) -> None:
        """Add everything collected since the last call to the construct, in one call."""
        if not self._collected:
            return
        if self._validations is None:
            self._validations = Validations.of(self.construct)
        self._validations.acknowledge(*self._collected)
        self._collected = []


@jsii.implements(IValidation)
class _LateWildcardAcknowledgement:
    """Adds the acknowledgements when the tree is validated (after cross-stack references
    are resolved, before the compliance packs run) and finds nothing itself."""

    def __init__(self, construct: IConstruct, reason: str, resources: tuple[str, ...]) -> None:
        self._construct = construct
        self._reason = reason
        self._resources = resources

    def validate(self) -> list[str]:
        acknowledge_wildcard_resource(self._construct, self._reason, *self._resources)
        return []


def nag_rendered(scope: IConstruct, value: Any) -> str:
    """``value`` (e.g. an ARN holding tokens) as cdk-nag prints it inside a finding id,
    resolved in ``scope``'s stack: ``Ref`` as ``<Name>``, ``Fn::GetAtt`` as
    ``<Logical.Attribute>``, joins concatenated, ``${...}`` of ``Fn::Sub`` as ``<...>``.
    A string without tokens resolves to itself and is flattened without resolving."""
    if isinstance(value, str) and not is_unresolved(value):
        return _flattened(value)
    return _flattened(Stack.of(scope).resolve(value))


def nag_rendered_all(scope: IConstruct, values: Sequence[Any]) -> list[str]:
    """:func:`nag_rendered` of each of ``values``, resolving the ones holding tokens
    together."""
    tokens = [value for value in values if not isinstance(value, str) or is_unresolved(value)]
    resolved = iter(Stack.of(scope).resolve(tokens) if tokens else ())
    return [
        _flattened(value if isinstance(value, str) and not is_unresolved(value) else next(resolved))
        for value in values
    ]


def _flattened(node: Any) -> str:
    """cdk-nag 3's flattening of a resolved CloudFormation value."""
    if node is None:
        return ""
    if isinstance(node, str):
        return node.replace("${", "<").replace("}", ">")
    if isinstance(node, dict):
        if node.get("Fn::Join"):
            delimiter, items = node["Fn::Join"]
            return str(delimiter).join(_flattened(item) for item in items)
        if node.get("Fn::Sub"):
            return _flattened(node["Fn::Sub"])
        if node.get("Fn::GetAtt"):
            resource, attribute = node["Fn::GetAtt"]
            return f"<{_flattened(resource)}.{_flattened(attribute)}>"
        if node.get("Fn::ImportValue"):
            return _flattened(node["Fn::ImportValue"])
        if node.get("Ref"):
            return f"<{_flattened(node['Ref'])}>"
    return json.dumps(node, separators=(",", ":"), ensure_ascii=False)


def suppress_scanner_findings(
    resource: CfnResource,
    *,
    checkov: Mapping[str, str] | None = None,
    cfn_nag: Mapping[str, str] | None = None,
) -> None:
    """Record, in ``resource``'s template metadata, the findings of third-party IaC scanners
    that are acknowledged, rule ID -> reason: checkov reads ``Metadata.checkov.skip``
    (``[{id, comment}]``) and cfn_nag ``Metadata.cfn_nag.rules_to_suppress``
    (``[{id, reason}]``). Adds to what earlier calls recorded."""
    for scanner, key, text, rules in (
        ("checkov", "skip", "comment", checkov),
        ("cfn_nag", "rules_to_suppress", "reason", cfn_nag),
    ):
        if not rules:
            continue
        entry = resource.get_metadata(scanner) or {}
        listed = list(entry.get(key, []))
        listed += [{"id": rule, text: reason} for rule, reason in rules.items()]
        resource.add_metadata(scanner, {**entry, key: listed})
