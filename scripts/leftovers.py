"""What stays in the account after `cdk destroy` of every stack of a cloud assembly,
computed from the synthesized templates, with the commands that remove it:

- every resource a template retains (``DeletionPolicy: Retain``), by stack, in an order
  that works: a resource before the ones it refers to (a file system before its security
  group, subnet and key; a bucket before the bucket it logs to); attached resources (a
  bucket policy, a security group rule) go with the resource they are attached to;
- the default security group of a retained VPC whose ``Custom::VpcRestrictDefaultSG`` is
  deleted: aws-cdk-lib's handler authorizes the group's default rules again on delete
  (inbound all traffic from the group itself, outbound all traffic to 0.0.0.0/0);
- the log groups the services create and CloudFormation never deletes (SageMaker AI
  developer guide, "Amazon SageMaker AI log groups"; HyperPod's lifecycle logs; Lambda
  developer guide, "Sending Lambda function logs to CloudWatch Logs"):
  ``/aws/sagemaker/Endpoints/<endpoint>``, ``/aws/sagemaker/InferenceComponents/<component>``,
  ``/aws/sagemaker/Clusters/<cluster name>/<cluster id>``, ``/aws/lambda/<function>`` (for a
  function without a log group of its own in ``LoggingConfig``).

Names come from the templates where they are fixed, from a :class:`Deployed` record taken
before the destroy (the stack's physical IDs and outputs), or stay placeholders
``<LogicalId>``. Offline and read-only: no AWS call here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from docs_assembly import Assembly

RETAINED_POLICIES = ("Retain", "RetainExceptOnCreate")
#: Resource types that belong to another resource (the property naming it): they go with it.
ATTACHED_TO = {
    "AWS::S3::BucketPolicy": "Bucket",
    "AWS::EC2::SecurityGroupIngress": "GroupId",
    "AWS::EC2::SecurityGroupEgress": "GroupId",
}
#: How to remove a retained resource, by type; ``{id}`` is its physical ID. A versioned
#: bucket must lose every object version first (boto3 is in the project's virtualenv).
REMOVE = {
    "AWS::FSx::FileSystem": ("aws fsx delete-file-system --file-system-id {id}",),
    "AWS::S3::Bucket": (
        ".venv/bin/python -c \"import boto3; boto3.resource('s3').Bucket('{id}')"
        '.object_versions.delete()"',
        "aws s3api delete-bucket --bucket {id}",
    ),
    "AWS::KMS::Key": ("aws kms schedule-key-deletion --key-id {id} --pending-window-in-days 7",),
    "AWS::Logs::LogGroup": ("aws logs delete-log-group --log-group-name {id}",),
    "AWS::EC2::SecurityGroup": ("aws ec2 delete-security-group --group-id {id}",),
    "AWS::EC2::Subnet": ("aws ec2 delete-subnet --subnet-id {id}",),
    "AWS::EC2::VPC": ("aws ec2 delete-vpc --vpc-id {id}",),
}
#: What to know before running a type's commands.
BEFORE_REMOVING = {
    "AWS::FSx::FileSystem": "back up /fsx first; the deletion takes minutes, and the "
    "subnet and security group can go once the file system is gone",
}
#: Any other type: Cloud Control deletes most resource types by physical ID.
REMOVE_OTHER = ("aws cloudcontrol delete-resource --type-name {type} --identifier {id}",)
#: The log group a service writes for a resource, and the property or attribute naming it.
SERVICE_LOG_GROUPS = {
    "AWS::SageMaker::Endpoint": ("/aws/sagemaker/Endpoints/{name}", "EndpointName"),
    "AWS::SageMaker::InferenceComponent": (
        "/aws/sagemaker/InferenceComponents/{name}",
        "InferenceComponentName",
    ),
    "AWS::Lambda::Function": ("/aws/lambda/{name}", "FunctionName"),
    # The control-plane logs of an EKS cluster (EKS User Guide, "Send control plane logs to
    # CloudWatch Logs"): EKS creates the group, without retention.
    "AWS::EKS::Cluster": ("/aws/eks/{name}/cluster", "Name"),
}
#: Resources whose physical ID (Ref) is the name the log group holds.
NAMED_BY_PHYSICAL_ID = ("AWS::Lambda::Function", "AWS::EKS::Cluster")
DELETE_LOG_GROUP = "aws logs delete-log-group --log-group-name {name}"


@dataclass(frozen=True)
class Deployed:
    """What CloudFormation said about one deployed stack, recorded before destroying it."""

    stack_id: str
    outputs: dict[str, str] = field(default_factory=dict)
    #: logical ID -> physical ID
    resources: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Leftover:
    """One thing that remains: what it is, its name (a placeholder where unknown; empty
    for a resource that goes with another, which ``note`` names) and how to remove it."""

    stack: str
    what: str
    name: str
    commands: tuple[str, ...] = ()
    note: str = ""


class Leftovers:
    """Everything :mod:`leftovers` lists for an assembly; ``deployed`` (stack name ->
    record) fills in names and leaves out the stacks that were not deployed."""

    def __init__(self, assembly: Assembly, deployed: dict[str, Deployed] | None = None):
        self.assembly = assembly
        self.deployed = deployed
        self.stacks = [
            name for name in destroy_order(assembly) if deployed is None or name in deployed
        ]

    def physical_id(self, stack: str, logical_id: str) -> str:
        record = (self.deployed or {}).get(stack)
        if record is not None and logical_id in record.resources:
            return record.resources[logical_id]
        return f"<{logical_id}>"

    def describe(self, stack: str, logical_id: str) -> str:
        resource = self.assembly.stacks[stack].resources[logical_id]
        path = self.assembly.path((stack, logical_id))
        where = f" ({path})" if path != logical_id else ""
        return f"{resource['Type']} {logical_id}{where}"

    def retained(self, stack: str) -> list[Leftover]:
        """The resources ``stack`` retains, each before the ones it refers to."""
        resources = self.assembly.stacks[stack].resources
        kept = [lid for lid, r in resources.items() if r.get("DeletionPolicy") in RETAINED_POLICIES]
        result = []
        for logical_id in removal_order(self.assembly, stack, kept):
            kind = resources[logical_id]["Type"]
            what = self.describe(stack, logical_id)
            name = self.physical_id(stack, logical_id)
            owner_property = ATTACHED_TO.get(kind)
            if owner_property is not None:
                owner = _single_reference(
                    self.assembly, stack, resources[logical_id]["Properties"][owner_property]
                )
                result.append(Leftover(stack, what, "", note=f"goes with {owner}"))
                continue
            commands = REMOVE.get(kind, REMOVE_OTHER)
            filled = tuple(command.format(id=name, type=kind) for command in commands)
            result.append(Leftover(stack, what, name, filled, BEFORE_REMOVING.get(kind, "")))
        return result

    def default_security_groups(self, stack: str) -> list[Leftover]:
        """The default security group of each retained VPC whose rule-stripping custom
        resource the destroy deletes: its default rules come back."""
        resources = self.assembly.stacks[stack].resources
        result = []
        for resource in resources.values():
            if resource["Type"] != "Custom::VpcRestrictDefaultSG":
                continue
            vpc = _single_reference(
                self.assembly, stack, resource["Properties"]["DefaultSecurityGroupId"]
            )
            if resources[vpc].get("DeletionPolicy") not in RETAINED_POLICIES:
                continue
            vpc_id = self.physical_id(stack, vpc)
            group = (
                "aws ec2 describe-security-groups --filters Name=vpc-id,Values="
                f"{vpc_id} Name=group-name,Values=default --query "
                "'SecurityGroups[0].GroupId' --output text"
            )
            commands = (
                f"SG=$({group})",
                "aws ec2 revoke-security-group-ingress --group-id $SG --ip-permissions "
                '"IpProtocol=-1,UserIdGroupPairs=[{GroupId=$SG}]"',
                "aws ec2 revoke-security-group-egress --group-id $SG --ip-permissions "
                '"IpProtocol=-1,IpRanges=[{CidrIp=0.0.0.0/0}]"',
            )
            note = (
                "its default rules are authorized again when Custom::VpcRestrictDefaultSG "
                "is deleted (inbound all traffic from the group itself, outbound all "
                "traffic to 0.0.0.0/0); they go with the VPC, or revoke them"
            )
            what = f"the default security group of {self.describe(stack, vpc)}"
            result.append(Leftover(stack, what, vpc_id, commands, note))
        return result

    def log_groups(self, stack: str) -> list[Leftover]:
        """The log groups the services create for the resources of ``stack``."""
        resources = self.assembly.stacks[stack].resources
        result = []
        for logical_id, resource in resources.items():
            kind = resource["Type"]
            what = self.describe(stack, logical_id)
            if kind == "AWS::SageMaker::Cluster":
                result.append(self._cluster_log_group(stack, logical_id, what))
            elif kind in SERVICE_LOG_GROUPS:
                if "LogGroup" in resource.get("Properties", {}).get("LoggingConfig", {}):
                    continue  # the function writes to a log group of its own template
                pattern, attribute = SERVICE_LOG_GROUPS[kind]
                name = pattern.format(name=self._name(stack, logical_id, attribute))
                command = DELETE_LOG_GROUP.format(name=name)
                result.append(Leftover(stack, what, name, (command,)))
        return result

    def _name(self, stack: str, logical_id: str, attribute: str) -> str:
        """A resource's name: fixed in the template, a recorded output that holds it, its
        physical ID (functions), or a placeholder."""
        resource = self.assembly.stacks[stack].resources[logical_id]
        fixed = resource.get("Properties", {}).get(attribute)
        if isinstance(fixed, str):
            return fixed
        recorded = (self.deployed or {}).get(stack, Deployed("")).outputs
        outputs = self.assembly.stacks[stack].template.get("Outputs", {})
        for key, output in outputs.items():
            if output.get("Value") == {"Fn::GetAtt": [logical_id, attribute]} and key in recorded:
                return recorded[key]
        if resource["Type"] in NAMED_BY_PHYSICAL_ID:
            return self.physical_id(stack, logical_id)
        return f"<{attribute} of {logical_id}>"

    def _cluster_log_group(self, stack: str, logical_id: str, what: str) -> Leftover:
        """HyperPod's log group ``/aws/sagemaker/Clusters/<name>/<id>``: found by the
        cluster ID (the last part of its ARN, the physical ID)."""
        physical = self.physical_id(stack, logical_id)
        cluster_id = physical.rsplit("/", 1)[-1] if physical.startswith("arn:") else physical
        name = f"/aws/sagemaker/Clusters/<cluster name>/{cluster_id}"
        find = (
            "aws logs describe-log-groups --log-group-name-prefix /aws/sagemaker/Clusters/ "
            f"--query \"logGroups[?ends_with(logGroupName, '/{cluster_id}')].logGroupName\" "
            "--output text"
        )
        delete = DELETE_LOG_GROUP.format(name=f"$({find})")
        return Leftover(stack, what, name, (delete,))


def destroy_order(assembly: Assembly) -> list[str]:
    """The stacks in the order `cdk destroy --all` deletes them: every stack before the
    stacks it depends on."""
    ordered: list[str] = []

    def visit(name: str) -> None:
        if name in ordered:
            return
        for dependency in assembly.stacks[name].depends_on:
            if dependency in assembly.stacks:
                visit(dependency)
        ordered.append(name)

    for name in assembly.stacks:
        visit(name)
    return ordered[::-1]


def removal_order(assembly: Assembly, stack: str, logical_ids: list[str]) -> list[str]:
    """``logical_ids`` (resources of ``stack``) with every resource before the ones it
    refers to (properties or DependsOn), otherwise in template order."""
    resources = assembly.stacks[stack].resources
    needs = {}
    for logical_id in logical_ids:
        resource = resources[logical_id]
        depends_on = resource.get("DependsOn", [])
        referred = {key[1] for key in assembly.references(stack, resource.get("Properties"))}
        referred |= {depends_on} if isinstance(depends_on, str) else set(depends_on)
        needs[logical_id] = referred & set(logical_ids) - {logical_id}
    ordered: list[str] = []
    while len(ordered) < len(logical_ids):
        # Next: the first resource no remaining resource refers to (the first remaining
        # one if they refer to each other in a cycle).
        remaining = [lid for lid in logical_ids if lid not in ordered]
        referred_by_remaining = set().union(*(needs[lid] for lid in remaining))
        free = [lid for lid in remaining if lid not in referred_by_remaining]
        ordered.append((free or remaining)[0])
    return ordered


def _single_reference(assembly: Assembly, stack: str, value: Any) -> str:
    ((_, logical_id),) = set(assembly.references(stack, value))
    return logical_id


def render(leftovers: Leftovers) -> str:
    """The listing as text: per stack, the retained resources in removal order, the
    default security groups, then the service log groups, with their commands."""
    if not leftovers.stacks:
        return "Nothing of this app was deployed: nothing remains.\n"
    lines = [f"What remains after destroying {', '.join(leftovers.stacks)}:"]
    sections = [
        ("kept by DeletionPolicy Retain; remove them in this order", leftovers.retained),
        ("the VPC's default security group", leftovers.default_security_groups),
        ("log groups the services create (if they wrote logs)", leftovers.log_groups),
    ]
    for stack in leftovers.stacks:
        for title, pick in sections:
            items = pick(stack)
            if not items:
                continue
            region = leftovers.assembly.stacks[stack].region
            where = f" (region {region}: run the commands with --region {region})" if region else ""
            lines += ["", f"{stack}{where}: {title}"]
            for item in items:
                lines.append(f"  - {item.what}: {item.name}" if item.name else f"  - {item.what}")
                if item.note:
                    lines.append(f"      {item.note}")
                lines += [f"      {command}" for command in item.commands]
    lines += [
        "",
        "A <LogicalId> stands for the resource's physical ID: for 90 days after the "
        "destroy, `aws cloudformation list-stack-resources --stack-name <stack ID>` lists "
        "them (the stack IDs: `aws cloudformation list-stacks --stack-status-filter "
        "DELETE_COMPLETE`).",
        "Shared with every CDK app of the account and region: the bootstrap stack "
        "CDKToolkit and the assets this app uploaded to its bucket; `npx cdk gc "
        "--unstable=gc` deletes the assets no stack uses any more.",
    ]
    return "\n".join(lines) + "\n"
