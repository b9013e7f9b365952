"""cdk-nag 3 rule packs and acknowledgements.

The default app runs AwsSolutions, HIPAA Security and NIST 800-53 R5 on every synth; an
unacknowledged finding fails ``app.synth()``. Each acknowledgement sits next to the resource
it concerns, with a reason specific to that resource.
"""

from __future__ import annotations

from aws_cdk import Acknowledgment, App, Validations
from cdk_nag import AwsSolutionsChecks, HIPAASecurityChecks, NIST80053R5Checks
from constructs import IConstruct

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
    acknowledgments = []
    for rule in rules:
        pack = next(
            (name for prefix, name in _PACK_OF_RULE_PREFIX.items() if rule.startswith(prefix)),
            None,
        )
        if pack is None:
            raise ValueError(f"rule {rule!r} belongs to no pack this project runs")
        acknowledgments.append(Acknowledgment(id=f"{pack}::{rule}", reason=reason))
    Validations.of(construct).acknowledge(*acknowledgments)
