"""What a change does to running things, read from two sets of synthesized templates (the
base and the working tree's) and the services' documented behaviour: nodes of a HyperPod
cluster created or terminated, lifecycle scripts that reach only new nodes, settings a
cluster takes only at creation, file-system and accounting-database changes, endpoints
replaced (and the output that names the new one), inference components whose copies are
reset, models moved between endpoints, alarms and notifications removed.

CloudFormation's diff says which resources change; this says what SageMaker, HyperPod and
FSx then do with them. Each :class:`Impact` names the resource, what happens, and the
source it rests on; one the services refuse (``refused``) comes with the steps to take
instead, and makes ``make diff`` fail. Pure Python over the templates' JSON: no CDK, no AWS
calls. Create-only properties come from cfn-lint's bundled CloudFormation resource schemas.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import cfnlint  # type: ignore[import-untyped]  # its bundled resource schemas (a dev dependency)

Template = Mapping[str, Any]

CLUSTER = "AWS::SageMaker::Cluster"
FILE_SYSTEM = "AWS::FSx::FileSystem"
DATABASE = "AWS::RDS::DBCluster"
ENDPOINT = "AWS::SageMaker::Endpoint"
ENDPOINT_CONFIG = "AWS::SageMaker::EndpointConfig"
COMPONENT = "AWS::SageMaker::InferenceComponent"
MODEL = "AWS::SageMaker::Model"
UPLOAD = "Custom::CDKBucketDeployment"
#: Resources whose removal silences a notification.
NOTIFIERS = {
    "AWS::CloudWatch::Alarm": "alarm",
    "AWS::Events::Rule": "EventBridge rule",
    "AWS::SNS::Topic": "notification topic",
    "AWS::SNS::Subscription": "topic subscription",
}

# Sources, named once: each line of the report cites one.
SCHEMA = "CloudFormation resource schema of {type} (cfn-lint), createOnlyProperties"
UPDATE_CLUSTER = (
    "SageMaker API, UpdateCluster (botocore): InstanceGroups, InstanceGroupsToDelete; "
    "InstanceCount is the number of instances of the group"
)
GROUP_NAME = (
    "SageMaker API, ClusterInstanceGroupSpecification (botocore): a group is named by "
    "InstanceGroupName; UpdateCluster has no rename, only InstanceGroupsToDelete"
)
GROUP_TYPE = (
    "SageMaker API, UpdateCluster (botocore) documents adding instances and deleting groups, "
    "no change of a group's instance type"
)
LIFECYCLE = (
    "AWS::SageMaker::Cluster schema, ClusterLifeCycleConfig: HyperPod runs OnCreate / "
    "OnInitComplete when it creates a node"
)
PROVISIONING = (
    "SageMaker HyperPod developer guide, 'Continuous provisioning for enhanced cluster "
    "operations with Slurm' (clusters created with the previous scaling model cannot move "
    "to continuous provisioning); README, node_provisioning"
)
ACCOUNTING = (
    "SageMaker HyperPod developer guide, 'Using an external accounting database with "
    "SageMaker HyperPod Slurm clusters': a cluster cannot go back to the controller's "
    "database"
)
FSX_STORAGE = (
    "Amazon FSx for Lustre User Guide, 'Managing storage capacity': capacity can only be "
    "increased, at most once every six hours; the file system stays available"
)
FSX_THROUGHPUT = (
    "Amazon FSx for Lustre User Guide, 'Managing throughput capacity': the file system "
    "stays available; the update takes from minutes to a few hours"
)
ENDPOINT_NAME = (
    "CloudFormation schema of AWS::SageMaker::Endpoint: EndpointName is create-only; a "
    "generated name changes with the resource"
)
ENDPOINT_UPDATE = (
    "SageMaker API, UpdateEndpoint (botocore): the configuration is deployed 'to a new fleet "
    "of instances', traffic shifts to them, then the old instances are deleted; Developer "
    "Guide, 'Blue/Green Deployments' (the green fleet runs beside the blue one until the "
    "baking period ends) and RollingUpdatePolicy (batches of the variant's instances)"
)
#: What the report adds to an update or replacement that provisions instances.
FLEET_QUOTA = (
    "SageMaker's per-type account quota '<type> for endpoint usage' counts both fleets "
    "(ResourceLimitExceeded names it, e.g. aws/amazon-sagemaker-examples #307)"
)
IC_INSTANCE_TYPE = (
    "SageMaker: 'Cannot update endpoint with a different instance type for endpoints to "
    "which you plan to deploy Inference Components' (aws-samples/sample-auto-extract-ai-"
    "ocr-app PR #66)"
)
COPY_COUNT = (
    "CloudFormation schema of AWS::SageMaker::InferenceComponent: RuntimeConfig.CopyCount "
    "is write-only, so an update sends it again (README, 'What an update of FmpInference "
    "does to running models')"
)
COMPONENT_UPDATE = (
    "AWS Machine Learning Blog, 'Enhance deployment guardrails with inference component "
    "rolling updates for Amazon SageMaker AI inference' (2025-03-26): a blue/green update "
    "provisions the new copies beside the current ones; InferenceComponentRollingUpdatePolicy "
    "(botocore): each step provisions a batch on the new fleet before the old one's ends"
)
COMPONENT_NAME = (
    "SageMaker: inference component names are unique per account and Region; EndpointName "
    "of AWS::SageMaker::InferenceComponent cannot change in place"
)
EKS_ONE_TO_ONE = (
    "SageMaker developer guide, 'Orchestrating SageMaker HyperPod clusters with Amazon EKS': "
    "a 1-to-1 mapping between an EKS cluster and a HyperPod cluster; Amazon EKS User Guide, "
    "'View Amazon EKS networking requirements': a cluster's VPC cannot change after creation"
)
TEMPLATES = "the base and working-tree templates"


@dataclass(frozen=True)
class Impact:
    """One thing a change does to something running."""

    stack: str
    resource: str  # the construct path, else the logical ID
    what: str
    source: str
    refused: bool = False
    steps: str = ""

    def describe(self) -> str:
        head = f"{self.stack}: {self.resource}: {self.what}"
        if self.refused:
            head = f"REFUSED {head}\n      what to do: {self.steps}"
        return f"{head}\n      source: {self.source}"


@cache
def create_only(resource_type: str) -> tuple[tuple[str, ...], ...]:
    """The create-only property paths of ``resource_type`` in cfn-lint's bundled schemas
    (``("VpcConfig",)``, ``("Orchestrator", "Eks")``); none when it has no schema."""
    schemas = Path(cfnlint.__file__).parent / "data" / "schemas"
    names = json.loads((schemas / "providers" / "us-east-1.json").read_text())
    if resource_type not in names:
        return ()
    schema = json.loads((schemas / "resources" / f"{names[resource_type]}.json").read_text())
    return tuple(
        tuple(p.removeprefix("/properties/").split("/"))
        for p in schema.get("createOnlyProperties", [])
    )


def _at(properties: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = properties
    for key in path:
        if not isinstance(value, Mapping) or key not in value:
            return None
        value = value[key]
    return value


def _resources(templates: Mapping[str, Template], kind: str) -> dict[tuple[str, str], dict]:
    return {
        (stack, logical_id): resource
        for stack, template in templates.items()
        for logical_id, resource in template.get("Resources", {}).items()
        if resource.get("Type") == kind
    }


def _name(resource: Mapping[str, Any], logical_id: str) -> str:
    return resource.get("Metadata", {}).get("aws:cdk:path", logical_id)


def _props(resource: Mapping[str, Any]) -> dict[str, Any]:
    return dict(resource.get("Properties", {}))


def _refers_to(value: Any, logical_id: str) -> bool:
    """Whether ``value`` holds a Ref or GetAtt of ``logical_id``."""
    if isinstance(value, Mapping):
        if value.get("Ref") == logical_id:
            return True
        attribute = value.get("Fn::GetAtt")
        if isinstance(attribute, list) and attribute and attribute[0] == logical_id:
            return True
        return any(_refers_to(v, logical_id) for v in value.values())
    if isinstance(value, list):
        return any(_refers_to(v, logical_id) for v in value)
    return False


# --- HyperPod clusters ---------------------------------------------------------------


def _groups(properties: Mapping[str, Any]) -> dict[str, dict]:
    return {g.get("InstanceGroupName"): g for g in properties.get("InstanceGroups", [])}


def _node_type(group: Mapping[str, Any]) -> str | None:
    return _at(group, ("SlurmConfig", "NodeType"))


def _nodes(group: Mapping[str, Any]) -> str:
    return f"{group.get('InstanceCount', 0)} x {group.get('InstanceType')}"


def _renames(removed: list[str], added: list[str], base: dict, head: dict) -> list[tuple]:
    """Removed and added groups of the same node type, paired in order: a rename."""
    pairs = []
    for old in list(removed):
        match = next((new for new in added if _node_type(head[new]) == _node_type(base[old])), None)
        if match is not None:
            pairs.append((old, match))
            removed.remove(old)
            added.remove(match)
    return pairs


Sides = tuple[Mapping[str, Template], Mapping[str, Template]]


def _replaced(
    kind: str, base: Mapping[str, Any], head: Mapping[str, Any], templates: Sides = ({}, {})
) -> list[str]:
    """The create-only properties of a ``kind`` resource that differ, or that name a
    resource CloudFormation replaces (a subnet of ``VpcConfig`` or ``SubnetIds``: the value
    reads the same, the physical ID changes)."""
    found = []
    for path in create_only(kind):
        if _at(base, path) != _at(head, path):
            found.append("/".join(path))
        elif templates[1] and (names := replaced_references(_at(head, path), *templates)):
            found.append(f"{'/'.join(path)} ({', '.join(names)} replaced)")
    return found


def _referenced_ids(value: Any) -> set[str]:
    """Logical IDs ``value`` refers to: Ref, GetAtt, or a CDK export name
    (``<stack>:ExportsOutputRef<LogicalId><hash>``)."""
    found: set[str] = set()
    if isinstance(value, Mapping):
        if isinstance(value.get("Ref"), str):
            found.add(value["Ref"])
        attribute = value.get("Fn::GetAtt")
        if isinstance(attribute, list) and attribute:
            found.add(attribute[0])
        export = value.get("Fn::ImportValue")
        if isinstance(export, str):
            found.add(export)
        for item in value.values():
            found |= _referenced_ids(item)
    elif isinstance(value, list):
        for item in value:
            found |= _referenced_ids(item)
    return found


def replaced_references(
    value: Any, base: Mapping[str, Template], head: Mapping[str, Template]
) -> list[str]:
    """The resources ``value`` refers to (in any stack, also through exports) that
    CloudFormation replaces: their physical IDs change though ``value`` reads the same."""
    names = _referenced_ids(value)
    found = []
    for stack, template in head.items():
        for logical_id, resource in template.get("Resources", {}).items():
            if not any(n == logical_id or logical_id in n for n in names):
                continue
            old = base.get(stack, {}).get("Resources", {}).get(logical_id)
            if old is not None and _replaced(resource["Type"], _props(old), _props(resource)):
                found.append(_name(resource, logical_id))
    return found


def cluster_impacts(
    stack: str, where: str, base: dict, head: dict, templates: Sides = ({}, {})
) -> Iterator[Impact]:
    """What an update of one cluster does to its nodes (``base`` and ``head`` are its
    properties; ``templates`` both sides' templates, see :func:`_replaced`)."""
    replaced = _replaced(CLUSTER, base, head, templates)
    groups_before, groups_after = _groups(base), _groups(head)
    if replaced:
        nodes = ", ".join(f"{n}: {_nodes(g)}" for n, g in groups_before.items())
        eks = _at(head, ("Orchestrator", "Eks")) is not None
        state = "pods" if eks else "Slurm state"
        what = (
            f"{', '.join(replaced)} changed: CloudFormation replaces the cluster: every node "
            f"({nodes}) is terminated with its jobs and {state}, and a new cluster (new "
            "ARN and ID) is created"
        )
        # The new cluster is created before the old one is deleted: on the same EKS cluster
        # HyperPod refuses it (one HyperPod cluster per EKS cluster), and an EKS cluster
        # cannot follow its subnets into another VPC. Only a new EKS cluster (its create-only
        # settings changed) takes the new HyperPod cluster, with the chart installed first.
        if eks and not any(r.startswith("Orchestrator/Eks") for r in replaced):
            yield Impact(
                stack, where, what + " on the same EKS cluster, whose one HyperPod cluster is "
                "the old one (and whose VPC cannot change)",
                SCHEMA.format(type=CLUSTER) + "; " + EKS_ONE_TO_ONE, refused=True,
                steps="keep the nodes' subnet, their security group and the VPC as deployed; "
                f"to move the cluster anyway: make destroy STACKS={stack} (the HyperPod and "
                "EKS clusters go, their jobs end; the data stack and its file system stay), "
                "then deploy the change",
            )  # fmt: skip
        elif isinstance(head.get("ClusterName"), str) and head.get("ClusterName") == base.get(
            "ClusterName"
        ):
            yield Impact(
                stack, where, what + "; with a fixed ClusterName the new one cannot be created",
                SCHEMA.format(type=CLUSTER), refused=True,
                steps="give the cluster a new cluster_name (or none) for the replacement, or "
                "keep the create-only settings as deployed",
            )  # fmt: skip
        else:
            yield Impact(stack, where, what, SCHEMA.format(type=CLUSTER))
        return
    if base.get("NodeProvisioningMode") != head.get("NodeProvisioningMode"):
        yield Impact(
            stack, where,
            f"node provisioning {base.get('NodeProvisioningMode') or 'standard'} -> "
            f"{head.get('NodeProvisioningMode') or 'standard'}: the mode is chosen when the "
            "cluster is created",
            PROVISIONING, refused=True,
            steps="keep node_provisioning as deployed (and with it slurm_accounting and "
            "min_count), or create a new cluster (a new cluster_name or training stack) "
            "with the mode and move the work to it",
        )  # fmt: skip
    accounting = ("Orchestrator", "Slurm", "AccountingDatabase")
    before, after = _at(base, accounting), _at(head, accounting)
    if before is not None and after is None:
        yield Impact(
            stack, where, "the external accounting database is detached", ACCOUNTING,
            refused=True,
            steps="keep slurm_accounting on for this cluster; a cluster without it needs a new "
            "cluster",
        )  # fmt: skip
    elif before is None and after is not None:
        yield Impact(
            stack,
            where,
            "slurmdbd moves to the external accounting database; the history kept on the "
            "controller's own database is not carried over",
            ACCOUNTING,
        )
    yield from _group_impacts(stack, where, groups_before, groups_after)


def _group_impacts(stack: str, where: str, base: dict, head: dict) -> Iterator[Impact]:
    removed = [n for n in base if n not in head]
    added = [n for n in head if n not in base]
    for old, new in _renames(removed, added, base, head):
        yield Impact(
            stack, where,
            f"instance group {old} -> {new}: a new name is a new group: the {_nodes(base[old])} "
            f"nodes of {old} are terminated (with the jobs on them) and {_nodes(head[new])} "
            f"nodes of {new} are created",
            GROUP_NAME,
        )  # fmt: skip
    for name in removed:
        yield Impact(
            stack, where,
            f"instance group {name} removed: its {_nodes(base[name])} nodes are terminated, "
            "with the jobs on them",
            UPDATE_CLUSTER,
        )  # fmt: skip
    for name in added:
        yield Impact(
            stack, where,
            f"instance group {name} added: {_nodes(head[name])} nodes are created (billed "
            "from their start)",
            UPDATE_CLUSTER,
        )  # fmt: skip
    for name in base.keys() & head.keys():
        before, after = base[name], head[name]
        if before.get("InstanceType") != after.get("InstanceType"):
            yield Impact(
                stack, where,
                f"instance group {name}: instance type {before.get('InstanceType')} -> "
                f"{after.get('InstanceType')} on a running group",
                GROUP_TYPE, refused=True,
                steps=f"add a group with the new type under a new name (its nodes are "
                f"created), move the jobs, then remove {name} (its nodes are terminated)",
            )  # fmt: skip
            continue
        count_before, count_after = before.get("InstanceCount", 0), after.get("InstanceCount", 0)
        if count_after > count_before:
            yield Impact(
                stack, where,
                f"instance group {name}: {count_before} -> {count_after}: "
                f"{count_after - count_before} {after.get('InstanceType')} nodes are created",
                UPDATE_CLUSTER,
            )  # fmt: skip
        elif count_after < count_before:
            yield Impact(
                stack, where,
                f"instance group {name}: {count_before} -> {count_after}: "
                f"{count_before - count_after} nodes are terminated, chosen by HyperPod (jobs "
                "on them end); to choose them, drain and delete them first with "
                "`aws sagemaker batch-delete-cluster-nodes`",
                UPDATE_CLUSTER,
            )  # fmt: skip
        if before.get("LifeCycleConfig") != after.get("LifeCycleConfig"):
            yield _lifecycle_impact(stack, where, f"instance group {name}'s lifecycle settings")


def _lifecycle_impact(stack: str, where: str, what: str) -> Impact:
    return Impact(
        stack, where,
        f"{what} changed: they apply only to nodes created from now on (added, replaced or "
        "in new groups); running nodes keep the setup they had",
        LIFECYCLE,
    )  # fmt: skip


def _running_nodes(groups: Iterable[Mapping[str, Any]]) -> int:
    return sum(int(g.get("InstanceCount", 0) or 0) for g in groups)


# --- file systems and the accounting database ----------------------------------------


def file_system_impacts(
    stack: str, where: str, base: dict, head: dict, templates: Sides = ({}, {})
) -> Iterator[Impact]:
    """What an update of the shared file system does to it and its data."""
    replaced = _replaced(FILE_SYSTEM, base, head, templates)
    if replaced:
        yield Impact(
            stack, where,
            f"{', '.join(replaced)} changed: CloudFormation replaces the file system: the new "
            "one is empty; the old one (retained) keeps the data, and running nodes keep "
            "their mount of it",
            SCHEMA.format(type=FILE_SYSTEM),
        )  # fmt: skip
        return
    before, after = base.get("StorageCapacity"), head.get("StorageCapacity")
    if isinstance(before, int) and isinstance(after, int) and before != after:
        if after < before:
            yield Impact(
                stack, where, f"storage {before} -> {after} GiB: FSx cannot shrink", FSX_STORAGE,
                refused=True,
                steps=f"keep storage_capacity_gib at {before} or more; for a smaller one, "
                "create a new file system and copy the data",
            )  # fmt: skip
        else:
            yield Impact(
                stack, where,
                f"storage {before} -> {after} GiB: grows in place, available throughout; FSx "
                "then rebalances data in the background, and another increase must wait six "
                "hours",
                FSX_STORAGE,
            )  # fmt: skip
    throughput = ("LustreConfiguration", "PerUnitStorageThroughput")
    if _at(base, throughput) != _at(head, throughput):
        yield Impact(
            stack, where,
            f"throughput {_at(base, throughput)} -> {_at(head, throughput)} MB/s/TiB: changes "
            "in place, available throughout, taking minutes to a few hours",
            FSX_THROUGHPUT,
        )  # fmt: skip


def database_impacts(
    stack: str, where: str, base: dict, head: dict, templates: Sides = ({}, {})
) -> Iterator[Impact]:
    """What an update of the accounting database does to it."""
    replaced = _replaced(DATABASE, base, head, templates)
    if replaced:
        yield Impact(
            stack, where,
            f"{', '.join(replaced)} changed: CloudFormation replaces the accounting database: "
            "the new one is empty (sacct history stays in the retained old one)",
            SCHEMA.format(type=DATABASE),
        )  # fmt: skip
    scaling = "ServerlessV2ScalingConfiguration"
    if base.get(scaling) != head.get(scaling):
        yield Impact(
            stack,
            where,
            f"capacity {base.get(scaling)} -> {head.get(scaling)} ACU: changes in place, "
            "slurmdbd stays connected",
            "Amazon Aurora User Guide, 'Aurora Serverless v2 capacity': the range can be "
            "modified at any time",
        )


# --- endpoints and components ----------------------------------------------------------


def _outputs_naming(template: Template, logical_id: str) -> list[str]:
    return sorted(
        key
        for key, output in template.get("Outputs", {}).items()
        # one endpoint's own output, not a list of names joined
        if _refers_to(output.get("Value"), logical_id) and "Fn::Join" not in output.get("Value", {})
    )


def _variants(template: Template, endpoint: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The production variants of the endpoint config ``endpoint`` uses in ``template``."""
    config = endpoint.get("Properties", {}).get("EndpointConfigName")
    for logical_id, resource in template.get("Resources", {}).items():
        if resource.get("Type") == ENDPOINT_CONFIG and _refers_to(config, logical_id):
            return list(resource.get("Properties", {}).get("ProductionVariants", []))
    return []


def _variant_types(template: Template, endpoint: Mapping[str, Any]) -> set[str]:
    return {str(v["InstanceType"]) for v in _variants(template, endpoint) if v.get("InstanceType")}


def _fleet(variant: Mapping[str, Any]) -> tuple[int, int]:
    """The instances a variant starts with and the most it may grow to while it takes the
    endpoint's models (managed instance scaling's maximum, on an Inference Components
    endpoint); (0, 0) for a serverless variant or counts known only at deploy time."""
    start = variant.get("InitialInstanceCount")
    if not isinstance(start, int):
        return 0, 0
    scaling = variant.get("ManagedInstanceScaling") or {}
    most = scaling.get("MaxInstanceCount") if scaling.get("Status") == "ENABLED" else None
    return start, max(start, most) if isinstance(most, int) else start


def _batch(policy: Mapping[str, Any], instances: int) -> int | None:
    """The instances one step of a rolling update provisions (its MaximumBatchSize of
    ``instances``), or None when the size is known only at deploy time."""
    size = policy.get("MaximumBatchSize") or {}
    value = size.get("Value")
    if not isinstance(value, int):
        return None
    if size.get("Type") == "CAPACITY_PERCENT":
        return max(1, -(-value * instances // 100))
    return min(value, instances)


def _instance_types(variant: Mapping[str, Any]) -> tuple[str, list[str]]:
    """A variant's instance type and its fallback types: its ``InstancePools`` by priority
    stand for its ``InstanceType`` when it has pools."""
    pools = sorted(variant.get("InstancePools", []), key=lambda pool: pool.get("Priority", 0))
    listed = [str(pool.get("InstanceType")) for pool in pools]
    kind = str(variant.get("InstanceType") or (listed[0] if listed else "instance"))
    return kind, [t for t in listed if t != kind]


def new_instances(template: Template, endpoint: Mapping[str, Any], *, rolling: bool) -> str:
    """What the new fleet of ``endpoint`` (as ``template`` has it) needs beside the running
    one while an update or replacement runs: each variant's instances and type, and the
    quotas that must leave room for them; empty for a serverless endpoint. ``rolling``: an
    in-place update, where the endpoint's RollingUpdatePolicy (one variant only: Developer
    Guide, 'Exclusions') provisions a batch at a time."""
    variants = _variants(template, endpoint)
    policy = _at(_props(endpoint), ("DeploymentConfig", "RollingUpdatePolicy"))
    parts, types = [], []
    for variant in variants:
        start, most = _fleet(variant)
        if not most:
            continue
        kind, fallbacks = _instance_types(variant)
        types.append(kind)
        on = f"{kind} (or of its fallback types {', '.join(fallbacks)})" if fallbacks else kind
        batch = _batch(policy, most) if rolling and policy and len(variants) == 1 else None
        if batch is not None:
            parts.append(f"{batch} more {on} at a time (its rolling update's batch of {most})")
        elif most > start:
            parts.append(
                f"{start} to {most} more {on} (managed instance scaling adds instances up to "
                "its maximum as the components' copies are placed)"
            )
        else:
            parts.append(f"{most} more {on}")
    if not parts:
        return ""
    quotas = ", ".join(f"'{kind} for endpoint usage'" for kind in dict.fromkeys(types))
    return (
        f"; while it runs, the new instances run beside the old ones: {' and '.join(parts)}; "
        f"the account's quota {quotas} must have room for them beside the running ones, or "
        "the deploy fails and rolls back"
    )


def _has_components(template: Template, endpoint_id: str) -> bool:
    return any(
        r.get("Type") == COMPONENT and _refers_to(r.get("Properties", {}).get("EndpointName"),
                                                  endpoint_id)
        for r in template.get("Resources", {}).values()
    )  # fmt: skip


def endpoint_impacts(
    base: Mapping[str, Template], head: Mapping[str, Template]
) -> Iterator[Impact]:
    before, after = _resources(base, ENDPOINT), _resources(head, ENDPOINT)
    for (stack, logical_id), resource in before.items():
        where = _name(resource, logical_id)
        if (stack, logical_id) not in after:
            if stack not in head:
                continue  # a removed stack: `cdk deploy` leaves it as it is
            # The project's endpoints carry their replacement key in the last construct ID
            # (``.../Endpoint/Endpoint<key>``): an added endpoint under the same parent path
            # is this one's replacement; any other added endpoint is another endpoint.
            successors = [
                (lid, r)
                for (s, lid), r in after.items()
                if s == stack
                and (s, lid) not in before
                and _endpoint_parent(_name(r, lid)) == _endpoint_parent(where)
            ]
            if not successors:
                yield Impact(
                    stack, where,
                    "endpoint removed: callers using its name get errors once it is deleted",
                    ENDPOINT_NAME,
                )  # fmt: skip
                continue
            lid, successor = successors[0]
            fixed = _props(resource).get("EndpointName")
            if isinstance(fixed, str) and fixed == _props(successor).get("EndpointName"):
                yield Impact(
                    stack, where,
                    f"endpoint replaced by {_name(successor, lid)} under the same endpoint name "
                    f"{fixed} (an explicit endpoint_name): the new endpoint cannot be created "
                    "while the old one exists",
                    ENDPOINT_NAME, refused=True,
                    steps="change endpoint_name together with the instance type or variant (or "
                    "drop it and read the generated name from the stack's outputs)",
                )  # fmt: skip
                continue
            outputs = _outputs_naming(head[stack], lid)
            types = _variant_types(base[stack], resource), _variant_types(head[stack], successor)
            why = (
                f" (instance type {', '.join(sorted(types[0]))} -> {', '.join(sorted(types[1]))})"
                if types[0] != types[1]
                else ""
            )
            yield Impact(
                stack, where,
                f"endpoint replaced by {_name(successor, lid)}{why}: its name changes for every "
                "caller once the old one is deleted"
                + (f"; the new name is in the output {', '.join(outputs)}" if outputs else "")
                + new_instances(head[stack], successor, rolling=False),
                _with_quota(ENDPOINT_NAME, head[stack], successor),
            )  # fmt: skip
            continue
        old, new_props = _props(resource), _props(after[(stack, logical_id)])
        if old.get("EndpointName") != new_props.get("EndpointName"):
            outputs = _outputs_naming(head[stack], logical_id)
            new = after[(stack, logical_id)]
            yield Impact(
                stack, where,
                "endpoint replaced: its name changes for every caller"
                + (f"; the new name is in the output {', '.join(outputs)}" if outputs else "")
                + new_instances(head[stack], new, rolling=False),
                _with_quota(ENDPOINT_NAME, head[stack], new),
            )  # fmt: skip
            continue
        types_before = _variant_types(base[stack], resource)
        types_after = _variant_types(head[stack], after[(stack, logical_id)])
        if types_before != types_after and _has_components(head[stack], logical_id):
            yield Impact(
                stack, where,
                f"instance type {', '.join(sorted(types_before))} -> "
                f"{', '.join(sorted(types_after))} on an endpoint with inference components",
                IC_INSTANCE_TYPE, refused=True,
                steps="give the endpoint a new construct ID (the project's endpoints put the "
                "instance type in it), so that a new endpoint and new components are made",
            )  # fmt: skip
        elif _config_changed(base, head, stack, resource, after[(stack, logical_id)]):
            new = after[(stack, logical_id)]
            yield Impact(
                stack,
                where,
                "endpoint updated in place: new instances are provisioned and traffic moves "
                "to them; its name stays" + new_instances(head[stack], new, rolling=True),
                _with_quota(ENDPOINT_UPDATE, head[stack], new),
            )


def _with_quota(source: str, template: Template, endpoint: Mapping[str, Any]) -> str:
    """``source``, and the quota's when the endpoint's new fleet has instances."""
    fleet = any(_fleet(v)[1] for v in _variants(template, endpoint))
    return f"{source}; {FLEET_QUOTA}" if fleet else source


def _endpoint_parent(path: str) -> str:
    """The construct path above an endpoint's own ID (which may carry a replacement key)."""
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _config_changed(
    base: Mapping[str, Template],
    head: Mapping[str, Template],
    stack: str,
    old: Mapping,
    new: Mapping,
) -> bool:
    """Whether the endpoint gets a new endpoint config: its config changed, or a resource
    the config names is replaced (a model's container is create-only: a new model, so a
    new config, whose ``ModelName`` reads the same in the template)."""

    def config(template: Template, endpoint: Mapping) -> Any:
        ref = endpoint.get("Properties", {}).get("EndpointConfigName")
        for logical_id, resource in template.get("Resources", {}).items():
            if resource.get("Type") == ENDPOINT_CONFIG and _refers_to(ref, logical_id):
                return logical_id, resource.get("Properties")
        return ref

    before, after = config(base[stack], old), config(head[stack], new)
    return before != after or (
        isinstance(after, tuple) and bool(replaced_references(after[1], base, head))
    )


def _component_name(resource: Mapping[str, Any]) -> str:
    return json.dumps(resource.get("Properties", {}).get("InferenceComponentName"))


def _endpoint_of(stack: str, resource: Mapping[str, Any]) -> str:
    return f"{stack}:{json.dumps(resource.get('Properties', {}).get('EndpointName'))}"


def _model_path(path: str) -> str:
    """The construct path of a component's model (``.../Model-<name>``), which names the
    model whatever endpoint or replacement key its component has."""
    return path.rsplit("/", 1)[0].rsplit("/", 1)[-1]


def _endpoint_path(path: str) -> str:
    """The construct path of the endpoint a component's model sits under."""
    return path.rsplit("/", 2)[0]


def _same_model(
    stack: str, resource: Mapping[str, Any], added: Mapping[tuple[str, str], dict]
) -> tuple[tuple[str, str], dict] | None:
    """The added component in ``stack`` of the model ``resource`` serves (a new endpoint
    key or another endpoint: the project's components carry the endpoint's key), or None."""
    model = _model_path(_name(resource, ""))
    for key, candidate in added.items():
        if key[0] == stack and _model_path(_name(candidate, key[1])) == model:
            return key, candidate
    return None


def component_impacts(
    base: Mapping[str, Template], head: Mapping[str, Template]
) -> Iterator[Impact]:
    before, after = _resources(base, COMPONENT), _resources(head, COMPONENT)
    by_name = {_component_name(r): key for key, r in after.items()}
    added = {key: r for key, r in after.items() if key not in before}
    for key, resource in before.items():
        stack, logical_id = key
        where = _name(resource, logical_id)
        moved_to = by_name.get(_component_name(resource))
        if moved_to is not None and _endpoint_of(moved_to[0], after[moved_to]) != _endpoint_of(
            stack, resource
        ):
            target = _name(after[moved_to], moved_to[1])
            name = resource.get("Properties", {}).get("InferenceComponentName")
            if isinstance(name, str) and _endpoint_path(target) == _endpoint_path(where):
                yield Impact(
                    stack, where,
                    f"component replaced by {moved_to[0]}: {target} under the same component "
                    f"name {name} (an explicit component_name): the new component cannot be "
                    "created while the old one exists",
                    COMPONENT_NAME, refused=True,
                    steps="give the model a new component_name together with the new instance "
                    "type or variant (or drop it: the default name carries the endpoint's key)",
                )  # fmt: skip
            elif isinstance(name, str):
                yield Impact(
                    stack, where,
                    f"model moves to {moved_to[0]}: {target} under the same component name "
                    f"{name}: the new component cannot be created while the old one exists",
                    COMPONENT_NAME, refused=True,
                    steps="give the moved model a name of its own: re-plan a catalog with fmp "
                    "plan (the plan file records the move and names the component after its "
                    "new endpoint), or set the model's name_suffix (or a new component_name) "
                    "in the configuration; else deploy twice: first with the model removed "
                    "from its old endpoint, then with it on the new one",
                )  # fmt: skip
            else:
                yield Impact(
                    stack, where,
                    f"model moves to {moved_to[0]}: {target}: a new component is created "
                    "there and this one deleted; callers that name the component change",
                    COMPONENT_NAME,
                )  # fmt: skip
            continue
        if key not in after:
            replacement = _same_model(stack, resource, added)
            if replacement is not None:
                new_key, new_resource = replacement
                target = _name(new_resource, new_key[1])
                moved = _endpoint_path(_name(new_resource, new_key[1])) != _endpoint_path(where)
                yield Impact(
                    stack, where,
                    (f"model moves to {target}" if moved else f"component replaced by {target}")
                    + f": {_new_component(head[new_key[0]], new_resource)}",
                    COMPONENT_NAME,
                )  # fmt: skip
            continue
        if _props(resource) != _props(after[key]) or _model_changed(base, head, stack, resource):
            copies = _at(_props(after[key]), ("RuntimeConfig", "CopyCount"))
            yield Impact(
                stack,
                where,
                f"component updated: its running copies are set to {copies} (its initial "
                "count) and autoscaling moves on from there" + _new_copies(_props(after[key])),
                f"{COPY_COUNT}; {COMPONENT_UPDATE}",
            )


def _new_copies(component: Mapping[str, Any]) -> str:
    """Where an updated component's new copies run while the update runs: beside the old
    ones, all at once or a rolling update's batch at a time."""
    copies = _at(component, ("RuntimeConfig", "CopyCount"))
    devices = _at(
        component,
        ("Specification", "ComputeResourceRequirements", "NumberOfAcceleratorDevicesRequired"),
    )
    if not isinstance(copies, int) or not copies:
        return ""
    batch = _at(component, ("DeploymentConfig", "RollingUpdatePolicy", "MaximumBatchSize"))
    if isinstance(batch, Mapping) and isinstance(batch.get("Value"), int):
        copy_count = " copy" if batch["Value"] == 1 else " copies"
        unit = copy_count if batch.get("Type") == "COPY_COUNT" else "% of its copies"
        count = f"{batch['Value']}{unit} at a time (its rolling update's batch)"
    else:
        count = f"all {copies} at once (blue/green)"
    plural = "s" if devices != 1 else ""
    each = f" of {devices} accelerator{plural} each" if isinstance(devices, int) and devices else ""
    return (
        f"; its new copies{each} start beside the old ones, {count}: they need free room on "
        "the endpoint's instances, else managed instance scaling adds instances (up to its "
        "maximum, within the account's quota for the type) while the update runs"
    )


def _new_component(template: Template, component: Mapping[str, Any]) -> str:
    """What creating ``component`` beside the one it replaces does: its name, the outputs
    that give it, the copies it starts with."""
    name = _props(component).get("InferenceComponentName")
    named = f" {name}" if isinstance(name, str) else ""
    outputs = sorted(
        key
        for key, output in template.get("Outputs", {}).items()
        if isinstance(name, str)
        and isinstance(output.get("Value"), str)
        and name in output["Value"].split(",")
    )
    where = f" (in the output {', '.join(outputs)})" if outputs else ""
    copies = _at(_props(component), ("RuntimeConfig", "CopyCount"))
    if copies is None:  # an adapter component has no copies of its own
        start = "it runs in its base's copies"
    else:
        start = (
            f"its copies start at {copies} (its initial count) and autoscaling moves on from there"
        )
    return (
        f"a new component{named} is created under a new name and this one deleted once it is "
        f"in service; callers that name the component read the new name{where}; {start}"
    )


def _model_changed(
    base: Mapping[str, Template], head: Mapping[str, Template], stack: str, component: Mapping
) -> bool:
    model = _at(component.get("Properties", {}), ("Specification", "ModelName"))
    for logical_id, resource in base[stack].get("Resources", {}).items():
        if resource.get("Type") == MODEL and _refers_to(model, logical_id):
            new = head.get(stack, {}).get("Resources", {}).get(logical_id)
            return new is None or _props(new) != _props(resource)
    return False


# --- notifications and lifecycle scripts ---------------------------------------------


def notification_impacts(
    base: Mapping[str, Template], head: Mapping[str, Template]
) -> Iterator[Impact]:
    for kind, word in NOTIFIERS.items():
        before, after = _resources(base, kind), _resources(head, kind)
        names_after = {json.dumps(_props(r).get("AlarmName")) for r in after.values()}
        for (stack, logical_id), resource in before.items():
            if (stack, logical_id) in after or stack not in head:
                continue
            name = _props(resource).get("AlarmName")
            if name is not None and json.dumps(name) in names_after:
                continue  # the same alarm under another construct ID
            told = _props(resource).get("AlarmDescription") or _props(resource).get(
                "Description", ""
            )
            about = f" ({str(told).split(':')[-1].strip()[:90]})" if isinstance(told, str) else ""
            yield Impact(
                stack,
                _name(resource, logical_id),
                f"{word} removed: nobody is told any more{about}",
                TEMPLATES,
            )


def lifecycle_upload_impacts(
    base: Mapping[str, Template], head: Mapping[str, Template]
) -> Iterator[Impact]:
    before, after = _resources(base, UPLOAD), _resources(head, UPLOAD)
    for key, resource in after.items():
        old = before.get(key)
        if old is None:
            continue
        keys = ("SourceObjectKeys", "DestinationBucketKeyPrefix")
        if any(_props(old).get(k) != _props(resource).get(k) for k in keys):
            stack = key[0]
            clusters = _resources({stack: base[stack]}, CLUSTER)
            nodes = sum(
                _running_nodes(_props(c).get("InstanceGroups", [])) for c in clusters.values()
            )
            running = f" ({nodes} running nodes keep what they ran)" if nodes else ""
            yield _lifecycle_impact(
                stack, _name(resource, key[1]), "the lifecycle scripts" + running
            )


# --- all of it -----------------------------------------------------------------------


def change_impacts(base: Mapping[str, Template], head: Mapping[str, Template]) -> list[Impact]:
    """Every impact of going from the ``base`` templates to the ``head`` ones (each a
    mapping of stack name to template)."""
    impacts: list[Impact] = []
    for kind, analyse in (
        (CLUSTER, cluster_impacts),
        (FILE_SYSTEM, file_system_impacts),
        (DATABASE, database_impacts),
    ):
        before, after = _resources(base, kind), _resources(head, kind)
        for key, resource in before.items():
            if key in after:
                where = _name(after[key], key[1])
                old, new = _props(resource), _props(after[key])
                impacts += analyse(key[0], where, old, new, (base, head))
            elif kind == CLUSTER and key[0] in head:
                groups = _props(resource).get("InstanceGroups", [])
                impacts.append(
                    Impact(
                        key[0],
                        _name(resource, key[1]),
                        f"cluster removed: its {_running_nodes(groups)} nodes are terminated "
                        "with their jobs",
                        TEMPLATES,
                    )  # fmt: skip
                )
    impacts += lifecycle_upload_impacts(base, head)
    impacts += endpoint_impacts(base, head)
    impacts += component_impacts(base, head)
    impacts += notification_impacts(base, head)
    return impacts


def report_lines(impacts: list[Impact]) -> list[str]:
    """The terminal section: every impact, the refused ones first."""
    ordered = sorted(impacts, key=lambda i: not i.refused)
    return [f"  {impact.describe()}" for impact in ordered] or ["  nothing running changes"]


def markdown_lines(impacts: list[Impact]) -> list[str]:
    """The pull-request section, as a list."""
    lines = ["", "**What happens to running things**", ""]
    if not impacts:
        return [*lines, "Nothing running changes."]
    for impact in sorted(impacts, key=lambda i: not i.refused):
        mark = "**Refused** " if impact.refused else ""
        lines.append(
            f"- {mark}`{impact.stack}` `{impact.resource}`: {impact.what} ({impact.source})"
        )
        if impact.refused:
            lines.append(f"  - What to do: {impact.steps}")
    return lines
