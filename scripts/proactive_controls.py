"""AWS Control Tower proactive controls for S3, Lambda and KMS, evaluated offline over a
synthesized cloud assembly (``cdk.out``): which resource of which stack a hook would block.

Each check follows the rule specification that the AWS Control Tower Controls Reference
Guide publishes with the control ("Amazon S3 controls", "AWS Lambda controls", "AWS KMS
controls"; CloudFormation Guard rules): the same properties, the same PASS and FAIL
scenarios. The controls run as CloudFormation hooks, which see a resource's properties with
the intrinsic functions resolved, so here a reference (``Ref``, ``Fn::GetAtt``,
``Fn::ImportValue``, ...) counts as the non-empty value it resolves to. Controls of other
services are not evaluated.

Usage: ``python scripts/proactive_controls.py cdk.out [more assemblies] [--list]``: the
findings per control (and, with ``--list``, each resource's construct path)."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from docs_assembly import Assembly

Properties = dict[str, Any]


@dataclass(frozen=True)
class Control:
    """One proactive control: its ID, title, the resource type it reports on, and whether
    a resource's properties pass it."""

    id: str
    title: str
    resource_type: str
    passes: Callable[[Properties], bool]


@dataclass(frozen=True, order=True)
class Finding:
    """A resource that fails a control: the control's ID, the stack, the resource's
    construct path below the stack (its logical ID where the template has no path)."""

    control: str
    stack: str
    path: str


def _is_reference(value: Any) -> bool:
    """A CloudFormation intrinsic function (resolved by the time a hook sees it)."""
    return isinstance(value, dict) and len(value) == 1 and _intrinsic(next(iter(value)))


def _intrinsic(key: str) -> bool:
    return key == "Ref" or key.startswith("Fn::")


def _present(value: Any) -> bool:
    """A non-empty string, or a reference (Guard's check_is_string_and_not_empty, or a
    valid reference)."""
    return (isinstance(value, str) and value.strip() != "") or _is_reference(value)


def _struct(value: Any) -> dict[str, Any] | None:
    """``value`` when it is a struct (a mapping that is not an intrinsic function)."""
    return value if isinstance(value, dict) and not _is_reference(value) else None


def _items(value: Any) -> list[Any]:
    """``value`` as a list (Guard's ``[*]`` takes a scalar as a list of one)."""
    return value if isinstance(value, list) else [value]


def _non_empty_list(value: Any) -> TypeGuard[list[Any]]:
    return isinstance(value, list) and len(value) > 0


# --- Amazon S3 ---------------------------------------------------------------------------


def _block_public_access(bucket: Properties) -> bool:
    """CT.S3.PR.1: all four Block Public Access settings are true."""
    block = _struct(bucket.get("PublicAccessBlockConfiguration"))
    names = ("BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets")
    return block is not None and all(block.get(name) is True for name in names)


def _access_logging(bucket: Properties) -> bool:
    """CT.S3.PR.2: a LoggingConfiguration; its destination, when given, is not empty."""
    logging = _struct(bucket.get("LoggingConfiguration"))
    if logging is None:
        return False
    return "DestinationBucketName" not in logging or _present(logging["DestinationBucketName"])


def _versioned(bucket: Properties) -> bool:
    """CT.S3.PR.11: versioning Enabled."""
    versioning = _struct(bucket.get("VersioningConfiguration"))
    return versioning is not None and versioning.get("Status") == "Enabled"


def _active_lifecycle_rule(bucket: Properties) -> bool:
    """CT.S3.PR.6: at least one lifecycle rule with Status Enabled."""
    lifecycle = _struct(bucket.get("LifecycleConfiguration"))
    rules = lifecycle.get("Rules") if lifecycle is not None else None
    return _non_empty_list(rules) and any(
        isinstance(rule, dict) and rule.get("Status") == "Enabled" for rule in rules
    )


def _versioned_with_lifecycle(bucket: Properties) -> bool:
    """CT.S3.PR.3: a versioned bucket has an active lifecycle rule (others are skipped)."""
    return not _versioned(bucket) or _active_lifecycle_rule(bucket)


def _event_notifications(bucket: Properties) -> bool:
    """CT.S3.PR.4: EventBridge delivery on, or at least one Lambda, queue or topic
    notification."""
    notifications = _struct(bucket.get("NotificationConfiguration"))
    if notifications is None:
        return False
    event_bridge = _struct(notifications.get("EventBridgeConfiguration"))
    if event_bridge is not None and event_bridge.get("EventBridgeEnabled") is True:
        return True
    kinds = ("LambdaConfigurations", "QueueConfigurations", "TopicConfigurations")
    return any(_non_empty_list(notifications.get(kind)) for kind in kinds)


def _object_lock(bucket: Properties) -> bool:
    """CT.S3.PR.9: ObjectLockEnabled is true."""
    return bucket.get("ObjectLockEnabled") is True


def _kms_default_encryption(bucket: Properties) -> bool:
    """CT.S3.PR.10: every default encryption rule uses aws:kms or aws:kms:dsse."""
    encryption = _struct(bucket.get("BucketEncryption"))
    rules = encryption.get("ServerSideEncryptionConfiguration") if encryption else None
    if not _non_empty_list(rules):
        return False
    for rule in rules:
        default = _struct(rule.get("ServerSideEncryptionByDefault")) if rule else None
        if default is None or default.get("SSEAlgorithm") not in ("aws:kms", "aws:kms:dsse"):
            return False
    return True


def _denies_insecure_transport(policy: Properties) -> bool:
    """CT.S3.PR.8: a statement denies every principal all S3 actions on the bucket and its
    objects when ``aws:SecureTransport`` is false."""
    document = _struct(policy.get("PolicyDocument"))
    statements = document.get("Statement") if document else None
    return any(_tls_only_statement(statement) for statement in _items(statements or []))


def _tls_only_statement(statement: Any) -> bool:
    if not isinstance(statement, dict):
        return False
    if any(key not in statement for key in ("Effect", "Action", "Principal", "Condition")):
        return False
    if "Resource" not in statement or statement["Effect"] != "Deny":
        return False
    if not all(action in ("s3:*", "*") for action in _items(statement["Action"])):
        return False
    principal = statement["Principal"]
    if principal != "*" and not (isinstance(principal, dict) and principal.get("AWS") == "*"):
        return False
    resources = _items(statement["Resource"])
    everything = all(resource == "*" for resource in resources)
    # The bucket's ARN and its objects' (``<arn>/*``), as references or literal ARNs.
    objects = [r for r in resources if isinstance(r, str) and r.endswith("/*")]
    joined = [r for r in resources if isinstance(r, dict) and "Fn::Join" in r]
    bucket_and_objects = len(resources) >= 2 and bool(objects or joined)
    condition = statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    return (everything or bucket_and_objects) and condition


# --- AWS Lambda ---------------------------------------------------------------------------


def _in_vpc(function: Properties) -> bool:
    """CT.LAMBDA.PR.3: VpcConfig with at least one subnet and one security group."""
    vpc = _struct(function.get("VpcConfig"))
    if vpc is None:
        return False
    return all(
        _non_empty_list(vpc.get(key)) and all(_present(item) for item in vpc[key])
        for key in ("SubnetIds", "SecurityGroupIds")
    )


def _not_public(permission: Properties) -> bool:
    """CT.LAMBDA.PR.2: no function URL without authentication; a wildcard principal needs
    a source account, source ARN or organization, a service principal a source account or
    source ARN (an account ID or IAM ARN needs neither)."""
    if permission.get("FunctionUrlAuthType") == "NONE":
        return False
    principal = permission.get("Principal")
    scoped = _present(permission.get("SourceAccount")) or _present(permission.get("SourceArn"))
    if principal == "*":
        return scoped or _present(permission.get("PrincipalOrgID"))
    if isinstance(principal, str) and not (
        principal.isdigit() or principal.startswith("arn:aws") and ":iam::" in principal
    ):
        return scoped
    return True


# --- AWS KMS ------------------------------------------------------------------------------


def _symmetric(key: Properties) -> bool:
    return key.get("KeySpec", "SYMMETRIC_DEFAULT") == "SYMMETRIC_DEFAULT"


def _rotation(key: Properties) -> bool:
    """CT.KMS.PR.1: a symmetric key rotates (other key specs are skipped)."""
    return not _symmetric(key) or key.get("EnableKeyRotation") is True


def _rsa_length(key: Properties) -> bool:
    """CT.KMS.PR.2: an RSA encryption key is longer than 2048 bits."""
    spec = key.get("KeySpec", "")
    encryption = key.get("KeyUsage", "ENCRYPT_DECRYPT") == "ENCRYPT_DECRYPT"
    return not (encryption and isinstance(spec, str) and spec.startswith("RSA_")) or (
        spec != "RSA_2048"
    )


_GRANT_CONDITION_KEYS = ("kms:grantisforawsresource", "aws:principalisawsservice")


def _grants_for_services_only(key: Properties) -> bool:
    """CT.KMS.PR.3: a key policy statement denies ``kms:CreateGrant`` to every principal
    unless the request comes through an AWS service (``BoolIfExists``
    ``kms:GrantIsForAWSResource`` and ``aws:PrincipalIsAWSService`` both "false")."""
    policy = _struct(key.get("KeyPolicy"))
    statements = policy.get("Statement") if policy else None
    return _non_empty_list(statements) and any(_grant_deny(s) for s in statements)


def _grant_deny(statement: Any) -> bool:
    if not isinstance(statement, dict) or statement.get("Effect") != "Deny":
        return False
    if any(key not in statement for key in ("Action", "Principal", "Condition", "Resource")):
        return False
    if not all(action == "kms:CreateGrant" for action in _items(statement["Action"])):
        return False
    principal = statement["Principal"]
    if principal != "*" and not (isinstance(principal, dict) and principal.get("AWS") == "*"):
        return False
    if not all(resource == "*" for resource in _items(statement["Resource"])):
        return False
    condition = statement["Condition"]
    if not isinstance(condition, dict) or set(condition) != {"BoolIfExists"}:
        return False
    keys = {key.lower(): value for key, value in condition["BoolIfExists"].items()}
    return set(keys) == set(_GRANT_CONDITION_KEYS) and all(v == "false" for v in keys.values())


CONTROLS: tuple[Control, ...] = (
    Control(
        "CT.S3.PR.1",
        "S3 bucket has block public access settings",
        "AWS::S3::Bucket",
        _block_public_access,
    ),
    Control(
        "CT.S3.PR.2",
        "S3 bucket has server access logging",
        "AWS::S3::Bucket",
        _access_logging,
    ),
    Control(
        "CT.S3.PR.3",
        "S3 versioned bucket has a lifecycle policy",
        "AWS::S3::Bucket",
        _versioned_with_lifecycle,
    ),
    Control(
        "CT.S3.PR.4",
        "S3 bucket has event notifications",
        "AWS::S3::Bucket",
        _event_notifications,
    ),
    Control(
        "CT.S3.PR.6",
        "S3 bucket has lifecycle policies",
        "AWS::S3::Bucket",
        _active_lifecycle_rule,
    ),
    Control(
        "CT.S3.PR.8",
        "S3 bucket policy requires SSL",
        "AWS::S3::BucketPolicy",
        _denies_insecure_transport,
    ),
    Control(
        "CT.S3.PR.9",
        "S3 bucket has Object Lock",
        "AWS::S3::Bucket",
        _object_lock,
    ),
    Control(
        "CT.S3.PR.10",
        "S3 bucket encrypts with an AWS KMS key",
        "AWS::S3::Bucket",
        _kms_default_encryption,
    ),
    Control(
        "CT.S3.PR.11",
        "S3 bucket has versioning enabled",
        "AWS::S3::Bucket",
        _versioned,
    ),
    Control(
        "CT.LAMBDA.PR.2",
        "Lambda function policy prohibits public access",
        "AWS::Lambda::Permission",
        _not_public,
    ),
    Control(
        "CT.LAMBDA.PR.3",
        "Lambda function is in a customer-managed VPC",
        "AWS::Lambda::Function",
        _in_vpc,
    ),
    Control(
        "CT.KMS.PR.1",
        "KMS key has rotation",
        "AWS::KMS::Key",
        _rotation,
    ),
    Control(
        "CT.KMS.PR.2",
        "KMS RSA encryption key is longer than 2048 bits",
        "AWS::KMS::Key",
        _rsa_length,
    ),
    Control(
        "CT.KMS.PR.3",
        "KMS key policy limits grants to AWS services",
        "AWS::KMS::Key",
        _grants_for_services_only,
    ),
)


def findings(assembly: Assembly, controls: Iterable[Control] = CONTROLS) -> list[Finding]:
    """Every resource of ``assembly`` that fails one of ``controls``, sorted."""
    found = []
    checks = list(controls)
    for stack in assembly.stacks.values():
        for logical_id, resource in stack.resources.items():
            properties = resource.get("Properties", {})
            for control in checks:
                if resource.get("Type") == control.resource_type and not control.passes(properties):
                    path = stack.paths.get(logical_id, logical_id)
                    found.append(Finding(control.id, stack.name, path))
    return sorted(found)


def per_control(found: Iterable[Finding]) -> Counter[str]:
    """How many findings each control has."""
    return Counter(finding.control for finding in found)


def report(found: list[Finding], *, listing: bool) -> str:
    """Findings per control, in CONTROLS order (every control, zero included), with their
    total; ``listing`` adds each resource under its control."""
    counts = per_control(found)
    lines = []
    for control in CONTROLS:
        lines.append(f"{control.id:<15} {counts[control.id]:>3}  {control.title}")
        if listing:
            lines += [f"    {f.stack}/{f.path}" for f in found if f.control == control.id]
    in_controls = sum(1 for count in counts.values() if count)
    lines.append(f"{'total':<15} {len(found):>3}  in {in_controls} controls")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("assemblies", nargs="+", type=Path, help="cdk.out directories")
    parser.add_argument("--list", action="store_true", help="name each resource")
    arguments = parser.parse_args(argv)
    found = [f for d in arguments.assemblies for f in findings(Assembly.load(d))]
    print(report(sorted(found), listing=arguments.list))
    return 0


if __name__ == "__main__":
    sys.exit(main())
