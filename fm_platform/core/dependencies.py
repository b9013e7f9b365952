"""Template hygiene for dependencies that aws-cdk-lib declares twice."""

from __future__ import annotations

from aws_cdk import CfnResource


def drop_redundant_depends_on(resource: CfnResource) -> None:
    """Remove ``resource``'s ``DependsOn``, for resources whose every ``DependsOn`` entry
    repeats a ``Ref``/``Fn::GetAtt`` its properties already make: CloudFormation orders
    them by those references anyway, and cfn-lint reports the repetition (W3005)."""
    resource.add_deletion_override("DependsOn")
