"""Promotion: a CDK Pipelines pipeline deploying the environments in their order.

The pipeline (``aws_cdk.pipelines.CodePipeline``) lives in the tools account and region the
configuration's ``pipeline`` names. Its source is the repository behind an AWS
CodeConnections connection (``connection_arn``: no lookup at synth), cloned with its git
history so that the review step can compare commits. Its synth step runs ``make synth`` with
the same configuration file; then it updates itself and deploys each environment's stage
in the configuration's order (dev, staging, production). An environment named in
``approval_before`` (by default the last one) is preceded by a review step, which runs
``make diff ENV=<name>`` against the previous commit and keeps the report
(``review/<name>.md``) as an artifact, and by a manual approval that points to it.

Cross-account deployment: the pipeline assumes the CDK bootstrap roles of each target
account and region (``cdk-hnb659fds-deploy-role-*`` and ``cdk-hnb659fds-file-publishing-
role-*``), which trust the tools account when that account was bootstrapped with
``cdk bootstrap --trust <tools account> --cloudformation-execution-policies <policy ARN>
aws://<account>/<region>`` (docs/environments.md). ``cross_account_keys`` gives the
artifact buckets a customer-managed KMS key (rotated) those roles are granted.
"""

from __future__ import annotations

import aws_cdk as cdk
import jsii
from aws_cdk import aws_codebuild as codebuild
from aws_cdk import aws_codepipeline as codepipeline
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from aws_cdk import pipelines
from constructs import Construct, IValidation

from fm_platform.config.environments import EnvironmentsConfig
from fm_platform.core.compliance import acknowledge, nag_rendered
from fm_platform.fleet.models.catalog import Catalog
from fm_platform.fleet.outputs.plan import Plan
from fm_platform.stacks.environment import EnvironmentStage

#: The CodeBuild image the steps run in: Amazon Linux 2023 standard 5.0 (Python, make, git)
#: (AWS CodeBuild User Guide, "Docker images provided by CodeBuild").
BUILD_IMAGE = codebuild.LinuxBuildImage.AMAZON_LINUX_2023_5


class PipelineStack(cdk.Stack):
    """The pipeline and, as its stages, every environment (``stages``, by name).

    config_file: the configuration file the synth step passes (``-c config=FILE``, a path
        in the repository); by default the one ``cdk.json`` names.
    """

    def __init__(
        self,
        scope: Construct,
        environments: EnvironmentsConfig,
        plans: dict[str, tuple[Plan, Catalog]],
        *,
        config_file: str | None = None,
    ) -> None:
        config = environments.pipeline
        if config is None:
            raise ValueError("PipelineStack needs a configuration with a pipeline")
        super().__init__(
            scope,
            config.stack_name,
            env=cdk.Environment(account=config.account, region=config.region),
            description="fm_platform: CDK Pipelines pipeline promoting the environments "
            + ", ".join(e.name for e in environments.environments),
        )
        args = f' ARGS="-c config={config_file}"' if config_file else ""
        source = pipelines.CodePipelineSource.connection(
            config.repository,
            config.branch,
            connection_arn=config.connection_arn,
            code_build_clone_output=True,
        )
        self.pipeline = pipelines.CodePipeline(
            self,
            "Pipeline",
            pipeline_type=codepipeline.PipelineType.V2,
            # The artifact bucket and each other region's replication bucket get a
            # customer-managed key, which the target accounts' roles are granted.
            cross_account_keys=True,
            enable_key_rotation=True,
            synth=pipelines.ShellStep("Synth", input=source, commands=[f"make synth{args}"]),
            code_build_defaults=pipelines.CodeBuildOptions(
                build_environment=codebuild.BuildEnvironment(build_image=BUILD_IMAGE),
            ),
        )
        approvals = config.approvals(tuple(e.name for e in environments.environments))
        self.stages: dict[str, EnvironmentStage] = {}
        for environment in environments.environments:
            stage = EnvironmentStage(self, environment, fleet=plans.get(environment.name))
            self.stages[environment.name] = stage
            pre = _review(source, environment.name, args) if environment.name in approvals else []
            self.pipeline.add_stage(stage, pre=pre)
        self.pipeline.build_pipeline()
        _acknowledge(self.pipeline)
        # CodePipeline's resource depends on its role, which its RoleArn (Fn::GetAtt)
        # orders already (cfn-lint W3005): keep only the role's policy.
        code_pipeline = self.pipeline.pipeline
        policy = code_pipeline.role.node.find_child("DefaultPolicy").node.default_child
        if isinstance(code_pipeline.node.default_child, cdk.CfnResource) and isinstance(
            policy, cdk.CfnResource
        ):
            code_pipeline.node.default_child.add_override(
                "DependsOn", [self.get_logical_id(policy)]
            )


def _review(source: pipelines.CodePipelineSource, name: str, args: str) -> list[pipelines.Step]:
    """The review step (``make diff`` of the environment against the previous commit, its
    report kept as the step's output) and the manual approval after it."""
    review = pipelines.ShellStep(
        f"Review-{name}",
        input=source,
        commands=[
            "mkdir -p review",
            f"make diff ENV={name} BASE=HEAD~1 MARKDOWN=review/{name}.md{args}",
        ],
        primary_output_directory="review",
    )
    approval = pipelines.ManualApprovalStep(
        f"Approve-{name}",
        comment=f"Read the Review-{name} action's report (review/{name}.md in its output "
        f"artifact: what this commit changes in {name}'s stacks, replacements and IAM "
        "first), then approve the deployment.",
    )
    approval.add_step_dependency(review)
    return [review, approval]


def _acknowledge(pipeline: pipelines.CodePipeline) -> None:
    """The findings of the resources CDK Pipelines generates, acknowledged on each of them
    with why (its roles, its CodeBuild projects, the replication bucket of each other
    region's support stack)."""
    for construct in pipeline.node.find_all():
        if isinstance(construct, iam.CfnPolicy):
            acknowledge(construct, _ROLE_REASON, *_ROLE_RULES)
            construct.node.add_validation(_WildcardGrants(construct))
        elif isinstance(construct, codebuild.CfnProject):
            acknowledge(
                construct,
                "The project's source is the pipeline's artifact (type CODEPIPELINE) fetched "
                "through the CodeConnections connection: no repository URL, so no credential "
                "in one.",
                "HIPAA.Security-CodeBuildProjectSourceRepoUrl",
                "NIST.800.53.R5-CodeBuildProjectSourceRepoUrl",
            )
    buckets = {"the tools region": pipeline.pipeline.artifact_bucket}
    for region, support in pipeline.pipeline.cross_region_support.items():
        buckets[region] = support.replication_bucket
    for region, bucket in buckets.items():
        resource = bucket.node.default_child
        if isinstance(resource, s3.CfnBucket):
            resource.versioning_configuration = s3.CfnBucket.VersioningConfigurationProperty(
                status="Enabled"
            )
        acknowledge(
            bucket,
            f"CDK Pipelines' artifact bucket for the actions in {region}: it holds the "
            "pipeline's own build outputs (source snapshot, synthesized templates and "
            "assets, review reports), reproducible from the repository, encrypted with the "
            "pipeline's KMS key and versioned; only the pipeline's roles read and write it "
            "(recorded by CloudTrail), so no access log or replica is kept.",
            "AwsSolutions-S1",
            "HIPAA.Security-S3BucketLoggingEnabled",
            "HIPAA.Security-S3BucketReplicationEnabled",
            "NIST.800.53.R5-S3BucketLoggingEnabled",
            "NIST.800.53.R5-S3BucketReplicationEnabled",
        )


_ROLE_REASON = (
    "A role CDK Pipelines generates for one pipeline action or CodeBuild project: its "
    "grants are the pipeline's own artifact bucket and key (object and KMS action "
    "wildcards of the grant methods), its own CodeBuild log groups and report groups, and, "
    "for the self-mutation and asset steps, the CDK bootstrap roles (cdk-hnb659fds-*) it "
    "assumes in the target accounts; the policy belongs to this role alone."
)
_ROLE_RULES = (
    "HIPAA.Security-IAMNoInlinePolicy",
    "NIST.800.53.R5-IAMNoInlinePolicy",
)


@jsii.implements(IValidation)
class _WildcardGrants:
    """Acknowledges the ``AwsSolutions-IAM5`` findings of a generated policy's wildcard
    actions and resources (each finding as cdk-nag names it) when the tree is validated,
    after every grant was added and before the compliance packs run; finds nothing
    itself."""

    def __init__(self, policy: iam.CfnPolicy) -> None:
        self._policy = policy

    def validate(self) -> list[str]:
        document = cdk.Stack.of(self._policy).resolve(self._policy.policy_document)
        findings: dict[str, None] = {}
        for statement in document.get("Statement", []):
            actions = statement.get("Action", [])
            for action in [actions] if isinstance(actions, str) else actions:
                if "*" in action:
                    findings[f"AwsSolutions-IAM5[Action::{action}]"] = None
            resources = statement.get("Resource", [])
            for resource in resources if isinstance(resources, list) else [resources]:
                rendered = nag_rendered(self._policy, resource)
                if "*" in rendered:
                    findings[f"AwsSolutions-IAM5[Resource::{rendered}]"] = None
        if findings:
            acknowledge(self._policy, _ROLE_REASON, *findings)
        return []
