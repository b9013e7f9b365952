"""What a SageMaker execution role has been granted, collected per role: image pulls,
artifact reads and key decrypts (:func:`role_grants_of`, :func:`add_model_artifacts`).

A grant that continues a statement, and an acknowledgement, costs no call into the CDK
runtime when it is made; what a role collected is added in one call per statement and one
for its acknowledgements, by an aspect of the role that runs before aws-cdk-lib's own
(among them the role's splitting of an oversized policy into managed policies).

Why collected rather than added with aws-cdk-lib's ``add_to_policy`` one grant at a time:
measured with ``make bench`` (``scripts/bench_synth.py``, 1,000 models, 20 per endpoint
role), the grants added one at a time cost 21 more jsii round trips per model (46 against
25) and about a third more CPU time; and a listing statement per prefix (statements with
different conditions never merge) halves the models one role's policies hold within IAM's
default quota of 10 managed policies (about 140 against 250).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Sequence
from typing import Protocol

import jsii
from aws_cdk import Annotations, Aspects, IAspect, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import IConstruct

from fm_platform.core.compliance import Acknowledgements, nag_rendered
from fm_platform.core.tokens import is_unresolved

# s3://<bucket>/<key>; the bucket may be a token (e.g. a bucket created in the same stack).
_S3_URL = re.compile(r"^s3://(?P<bucket>[^/]+)/(?P<key>.*)$")
_PULL_ACTIONS = (
    "ecr:BatchCheckLayerAvailability",
    "ecr:BatchGetImage",
    "ecr:GetDownloadUrlForLayer",
)


class ImageRepository(Protocol):
    """What a pull grant needs from an image (``ContainerImage`` fits): the ARN of its ECR
    repository, or None when it is not known at synth."""

    def repository_arn(self, scope: IConstruct, partition: str) -> str | None: ...


def add_model_artifacts(role: iam.IRole, model_data_url: str, key: kms.IKey | None) -> None:
    """Add read of ``model_data_url`` (object, or prefix ending in ``/`` with listing of
    that prefix) to ``role``, and decrypt with ``key`` when given.

    The bucket may be a token (e.g. a bucket created in the same stack); when the URL is not
    an ``s3://`` URI with a literal key, no read is granted and a warning asks for an
    explicit grant (e.g. ``bucket.grant_read(role)``) instead. Every object and prefix a
    role reads sits in one ``s3:GetObject`` statement, and every prefix of a bucket in one
    ``s3:ListBucket`` statement (a new one once a statement holds
    :data:`STATEMENT_BUDGET` characters of ARNs or prefixes). An object or prefix that
    continues a statement, and the acknowledgement of a prefix's wildcard, reach the role
    when the app is synthesized, before aws-cdk-lib splits an oversized policy.
    """
    grants = role_grants_of(role)
    if key is not None:
        grants.decrypt(key)
    match = _S3_URL.match(model_data_url)
    if match is None or is_unresolved(match["key"]):
        Annotations.of(role).add_warning_v2(
            "fm_platform:artifactGrantSkipped",
            f"model artifacts {model_data_url!r} are not an s3:// URI with a literal key, so "
            "no read grant was added; grant read on them to the execution role yourself.",
        )
        return
    bucket, key_path = match["bucket"], match["key"]
    if not key_path.endswith("/"):
        grants.read(bucket, key_path)
        return
    grants.read(bucket, f"{key_path}*")
    if grants.list_prefix(bucket, f"{key_path}*"):
        # A bucket known at deploy time only would put a token's text, which changes with
        # what the app built before, into the reason: name the prefix in the bucket then.
        where = f"{key_path} of the model bucket" if is_unresolved(bucket) else model_data_url
        grants.acknowledge_wildcard(
            f"uncompressed model artifacts are every object under the prefix "
            f"{where}; read is limited to that prefix.",
            bucket,
            f"{key_path}*",
        )


#: Characters of resource ARNs (or ``s3:prefix`` values) after which a grant starts a new
#: statement: CDK's policy minimisation merges statements only up to about 2000 characters,
#: so that an oversized policy can still be split into managed policies.
STATEMENT_BUDGET = 1500

#: Priority of the aspect that adds what a role collected: before every aspect aws-cdk-lib
#: adds to a role, whatever the app's flags. aws-cdk-lib's ``AspectPriority`` is MUTATING
#: 200, DEFAULT 500, READONLY 1000; a role splits an oversized policy into managed policies
#: in an aspect of priority MUTATING (flag ``@aws-cdk/core:aspectPrioritiesMutating``) or
#: DEFAULT (without it). With or without ``@aws-cdk/core:aspectStabilization`` aspects run
#: in order of priority on each construct.
COLLECTED_GRANTS_PRIORITY = 100


class _Statement:
    """A policy statement of a role that later grants extend instead of adding their own:
    ``values`` are its resources (``condition`` None) or the values of its ``condition``
    (operator, key), ``size`` their characters; the statement holds the first ``added``
    of them, the others wait for :meth:`add_collected`."""

    def __init__(
        self, statement: iam.PolicyStatement, value: str, condition: tuple[str, str] | None
    ) -> None:
        self.statement = statement
        self.values = [value]
        self.size = len(value)
        self.condition = condition
        self.added = 1

    def has_room_for(self, value: str) -> bool:
        return self.size + len(value) <= STATEMENT_BUDGET

    def add(self, value: str) -> None:
        self.values.append(value)
        self.size += len(value)

    def add_collected(self) -> None:
        """Add the values collected since the last call to the statement, in one call."""
        if self.added == len(self.values):
            return
        if self.condition is None:
            self.statement.add_resources(*self.values[self.added :])
        else:
            operator, key = self.condition
            self.statement.add_condition(operator, {key: list(self.values)})
        self.added = len(self.values)


class RoleGrants:
    """What this module has granted one role: each image, key, object and prefix once,
    objects and prefixes collected in shared statements, and the acknowledgements of the
    wildcards granted. A statement is added to the role when it is started, so that the
    policy keeps its order; what continues it, and every acknowledgement, waits for
    :meth:`add_collected`, which an aspect of the role calls (see
    :data:`COLLECTED_GRANTS_PRIORITY`)."""

    def __init__(self, role: iam.IRole) -> None:
        self.role = role
        self.stack = Stack.of(role)
        self.partition = self.stack.partition
        self.granted: set[tuple[str, str]] = set()
        self.keys: list[kms.IKey] = []
        self.bucket_arns: dict[str, str] = {}
        self.rendered_bucket_arns: dict[str, str] = {}
        self.statements: dict[tuple[str, str], _Statement] = {}
        self.continued: list[_Statement] = []
        self.acknowledgements = Acknowledgements(role)
        Aspects.of(role).add(_AddCollectedGrants(self), priority=COLLECTED_GRANTS_PRIORITY)

    def _first_time(self, kind: str, value: str) -> bool:
        if (kind, value) in self.granted:
            return False
        self.granted.add((kind, value))
        return True

    def pull(self, image: str, container_image: ImageRepository) -> None:
        if not self._first_time("image", image):
            return
        repository = container_image.repository_arn(self.role, self.partition)
        if repository is None:
            repository = self.stack.format_arn(
                service="ecr", resource="repository", resource_name="*"
            )
            self.acknowledgements.acknowledge_wildcard_resource(
                f"the image URI {image!r} names its account or repository only at deploy "
                "time (e.g. a CDK image asset), so its repository cannot be named: pulls are "
                "limited to this account's and region's repositories.",
                repository,
            )
        if self._first_time("repository", repository):
            self._add_resource("pull", _PULL_ACTIONS, repository)

    def decrypt(self, key: kms.IKey) -> None:
        if any(known is key for known in self.keys):
            return
        self.keys.append(key)
        key.grant_decrypt(self.role)

    def bucket_arn(self, bucket: str) -> str:
        arn = self.bucket_arns.get(bucket)
        if arn is None:
            arn = self.bucket_arns[bucket] = f"arn:{self.partition}:s3:::{bucket}"
        return arn

    def read(self, bucket: str, key_pattern: str) -> None:
        arn = f"{self.bucket_arn(bucket)}/{key_pattern}"
        if self._first_time("object", arn):
            self._add_resource("read", ("s3:GetObject",), arn)

    def list_prefix(self, bucket: str, prefix: str) -> bool:
        """Let the role list ``prefix`` in ``bucket``; False when it already could."""
        if not self._first_time(f"prefix of {bucket}", prefix):
            return False
        current = self.statements.get(("list", bucket))
        if current is not None and current.has_room_for(prefix):
            self._continue(current, prefix)
            return True
        statement = iam.PolicyStatement(
            actions=["s3:ListBucket"],
            resources=[self.bucket_arn(bucket)],
            conditions={"StringLike": {"s3:prefix": prefix}},
        )
        self._add_statement(statement)
        self.statements["list", bucket] = _Statement(statement, prefix, ("StringLike", "s3:prefix"))
        return True

    def acknowledge_wildcard(self, reason: str, bucket: str, key_pattern: str) -> None:
        """Collect the acknowledgement of the ``AwsSolutions-IAM5`` finding of the objects
        ``key_pattern`` in ``bucket`` (the bucket ARN is rendered once per bucket)."""
        rendered = self.rendered_bucket_arns.get(bucket)
        if rendered is None:
            rendered = nag_rendered(self.role, self.bucket_arn(bucket))
            self.rendered_bucket_arns[bucket] = rendered
        finding = rendered + nag_rendered(self.role, f"/{key_pattern}")
        self.acknowledgements.acknowledge_rendered(reason, finding)

    def add_collected(self) -> None:
        """Add what was collected since the last call: one call per continued statement,
        one for the acknowledgements."""
        for statement in self.continued:
            statement.add_collected()
        self.continued = []
        self.acknowledgements.add_collected()

    def _add_resource(self, kind: str, actions: Sequence[str], arn: str) -> None:
        current = self.statements.get((kind, ""))
        if current is not None and current.has_room_for(arn):
            self._continue(current, arn)
            return
        statement = iam.PolicyStatement(actions=list(actions), resources=[arn])
        self._add_statement(statement)
        self.statements[kind, ""] = _Statement(statement, arn, None)

    def _continue(self, statement: _Statement, value: str) -> None:
        if statement.added == len(statement.values):
            self.continued.append(statement)
        statement.add(value)

    def _add_statement(self, statement: iam.PolicyStatement) -> None:
        # Role.add_to_policy returns a boolean; add_to_principal_policy (all an imported
        # role has) a struct that costs two more calls.
        if isinstance(self.role, iam.Role):
            self.role.add_to_policy(statement)
        else:
            self.role.add_to_principal_policy(statement)


@jsii.implements(IAspect)
class _AddCollectedGrants:
    """The aspect of a role that adds what its :class:`RoleGrants` collected (when it
    visits the role, before the role's own aspects; a no-op on the role's children)."""

    def __init__(self, grants: RoleGrants) -> None:
        self._grants = grants

    def visit(self, node: IConstruct) -> None:
        self._grants.add_collected()


_GRANTS: weakref.WeakKeyDictionary[iam.IRole, RoleGrants] = weakref.WeakKeyDictionary()


def role_grants_of(role: iam.IRole) -> RoleGrants:
    """What has been granted ``role`` (collected once per role)."""
    grants = _GRANTS.get(role)
    if grants is None:
        grants = _GRANTS[role] = RoleGrants(role)
    return grants
