#!/usr/bin/env python3
"""Draw an architecture diagram of every group of stacks in a synthesized cloud assembly.

    python scripts/docs_diagrams.py cdk.out docs/diagrams

Stacks that refer to each other (exports, dependencies) share one picture, named
``training.png`` when it holds a HyperPod cluster (``training-eks.png`` when EKS orchestrates
it: the EKS box of ``docs_eks``), ``inference.png`` when it holds SageMaker endpoints, else
after its stacks. Everything drawn is read from the templates (resource
types, properties and references), so a picture changes when the stacks do. Rendered by the
project's pinned Graphviz (``docs_graphviz``: WebAssembly builds from npm)."""

from __future__ import annotations

import argparse
import ipaddress
import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from docs_assembly import Assembly, Key, literal  # noqa: E402
from docs_eks import EKS_DRAWN, EksDrawing  # noqa: E402
from docs_graphviz import render_png  # noqa: E402
from docs_labels import table  # noqa: E402

FONT = "DejaVu Sans"
COLORS = {
    "vpc": "#e8f1fb",
    "az": "#f5f9ff",
    "private": "#e6f4ea",
    "public": "#fdf3e1",
    "cluster": "#ffffff",
    "endpoint": "#f3eefb",
}
#: Resource types a picture draws; the others are counted in its caption.
DRAWN = {
    "AWS::EC2::VPC",
    "AWS::EC2::Subnet",
    "AWS::EC2::NatGateway",
    "AWS::EC2::InternetGateway",
    "AWS::EC2::VPCEndpoint",
    "AWS::EC2::SecurityGroup",
    "AWS::EC2::SecurityGroupIngress",
    "AWS::EC2::SecurityGroupEgress",
    "AWS::EC2::FlowLog",
    "AWS::Logs::LogGroup",
    "AWS::FSx::FileSystem",
    "AWS::FSx::DataRepositoryAssociation",
    "AWS::S3::Bucket",
    "AWS::SageMaker::Cluster",
    "AWS::SageMaker::Endpoint",
    "AWS::SageMaker::EndpointConfig",
    "AWS::SageMaker::Model",
    "AWS::SageMaker::InferenceComponent",
    "AWS::ApplicationAutoScaling::ScalableTarget",
    "AWS::ApplicationAutoScaling::ScalingPolicy",
    "AWS::CloudWatch::Alarm",
    "AWS::SNS::Topic",
    "AWS::RDS::DBCluster",
}
#: Glue that exists only to wire the drawn resources together; not counted in the caption.
GLUE = {
    "AWS::EC2::RouteTable",
    "AWS::EC2::SubnetRouteTableAssociation",
    "AWS::EC2::Route",
    "AWS::EC2::EIP",
    "AWS::EC2::VPCGatewayAttachment",
    "AWS::S3::BucketPolicy",
    "AWS::SNS::TopicPolicy",
    "AWS::CDK::Metadata",
}


def node_id(key: Key) -> str:
    return f'"{key[0]}.{key[1]}"'


def words(identifier: str) -> str:
    """``SageMakerVariantInvocationsPerInstance`` -> ``invocations per instance``."""
    for prefix in ("SageMaker", "InferenceComponent", "Variant"):
        identifier = identifier.removeprefix(prefix)
    return " ".join(re.findall(r"[A-Z][a-z0-9]*|[a-z0-9]+", identifier)).lower()


def short_image(value: Any) -> str:
    """The repository:tag part of a container image URI, tokens dropped."""
    image = joined_literal(value)
    return image.rsplit("/", 1)[-1] if image else "(image from a token)"


def joined_literal(value: Any) -> str:
    """The literal parts of a string or an ``Fn::Join`` of strings and tokens."""
    if isinstance(value, dict) and "Fn::Join" in value:
        return "".join(part for part in value["Fn::Join"][1] if isinstance(part, str))
    return value if isinstance(value, str) else ""


def s3_suffix(value: Any) -> str:
    """The key prefix of an ``s3://bucket/prefix`` value built with Fn::Join."""
    if isinstance(value, dict) and "Fn::Join" in value:
        parts = value["Fn::Join"][1]
        if parts and isinstance(parts[-1], str):
            return parts[-1]
    return ""


@dataclass
class Graph:
    """A Graphviz digraph under construction."""

    lines: list[str] = field(default_factory=list)
    drawn: set[Key] = field(default_factory=set)

    def node(self, key: Key, label: str, **attributes: str) -> None:
        extra = "".join(f', {name}="{value}"' for name, value in attributes.items())
        self.lines.append(f"{node_id(key)} [label={label}{extra}]")
        self.drawn.add(key)

    def edge(self, tail: str, head: str, label: str = "", **attributes: str) -> None:
        attrs = dict(attributes)
        if label:
            attrs["label"] = label
        body = ", ".join(f'{name}="{value}"' for name, value in attrs.items())
        self.lines.append(f"{tail} -> {head} [{body}]")

    def open(self, name: str, label: str, fill: str, style: str = "rounded,filled") -> None:
        self.lines.append(f'subgraph "cluster_{name}" {{')
        self.lines.append(f'label={label}; style="{style}"; fillcolor="{fill}"; color="#7a8ca5"')

    def close(self) -> None:
        self.lines.append("}")


class Picture:
    """The diagram of one group of stacks."""

    def __init__(self, assembly: Assembly, stacks: list[str]) -> None:
        self.assembly = assembly
        self.stacks = stacks
        self.graph = Graph()
        self.placed: dict[Key, Key] = {}  # resource -> subnet it is drawn in
        self.vpc_anchor: dict[Key, Key] = {}  # VPC -> a node drawn inside it

    def where(self, key: Key) -> str:
        """The construct path of ``key``, after its stack's name when the picture has
        several stacks."""
        path = self.assembly.path(key)
        return f"{key[0]}: {path}" if len(self.stacks) > 1 else path

    def of_type(self, resource_type: str) -> list[Key]:
        return self.assembly.of_type(self.stacks, resource_type)

    def props(self, key: Key) -> dict[str, Any]:
        properties: dict[str, Any] = self.assembly.resource(key).get("Properties", {})
        return properties

    def refs(self, key: Key, value: Any) -> list[Key]:
        return list(dict.fromkeys(self.assembly.references(key[0], value)))

    @property
    def name(self) -> str:
        clusters = self.of_type("AWS::SageMaker::Cluster")
        if any("Eks" in self.props(c).get("Orchestrator", {}) for c in clusters):
            return "training-eks"
        if clusters:
            return "training"
        if self.of_type("AWS::SageMaker::Endpoint"):
            return "inference"
        return "-".join(self.stacks).lower()

    # -- the whole picture ------------------------------------------------------------------

    def dot(self) -> str:
        self._network()
        self._buckets()
        self._endpoints()
        EksDrawing(self, DRAWN | GLUE).draw()
        self._edges()
        g = self.graph
        caption = self._caption()
        # A network reads best top-down; columns of endpoints read best left to right.
        direction = "TB" if self.of_type("AWS::EC2::VPC") else "LR"
        header = [
            "digraph architecture {",
            f'graph [fontname="{FONT}", fontsize=12, rankdir={direction}, compound=true, '
            "newrank=true, nodesep=0.35, ranksep=0.7, pad=0.3, labelloc=t, labeljust=l, "
            f"label={caption}]",
            f'node [fontname="{FONT}", fontsize=11, shape=box, style="rounded,filled", '
            'fillcolor="#ffffff", color="#5b6b82", margin="0.15,0.08"]',
            f'edge [fontname="{FONT}", fontsize=10, color="#4a5a70", fontcolor="#2f3b4c"]',
        ]
        return "\n".join([*header, *g.lines, "}"]) + "\n"

    def _caption(self) -> str:
        undrawn = Counter(
            resource["Type"].split("::", 1)[-1]
            for name in self.stacks
            for logical_id, resource in self.assembly.stacks[name].resources.items()
            if resource["Type"] not in DRAWN | GLUE | EKS_DRAWN
            and (name, logical_id) not in self.graph.drawn
        )
        title = f"Stacks {' + '.join(self.stacks)}"
        also = ", ".join(f"{count} {kind}" for kind, count in sorted(undrawn.items()))
        lines = ["Generated from the synthesized templates by scripts/docs_diagrams.py."]
        if also:
            lines.append(f"Not drawn: {also}.")
        return table(title, lines, size=15)

    # -- network: VPC > AZ > subnets with what runs in them --------------------------------

    def _network(self) -> None:
        for vpc in self.of_type("AWS::EC2::VPC"):
            subnets = [
                s
                for s in self.of_type("AWS::EC2::Subnet")
                if self.refs(s, self.props(s).get("VpcId")) == [vpc]
            ]
            cidr = literal(self.props(vpc).get("CidrBlock")) or "CIDR from a token"
            self.graph.open(vpc[1], table(f"VPC {cidr}", [self.where(vpc)]), COLORS["vpc"])
            for attachment in self.of_type("AWS::EC2::VPCGatewayAttachment"):
                props = self.props(attachment)
                if self.refs(attachment, props.get("VpcId")) == [vpc]:
                    for gateway in self.refs(attachment, props.get("InternetGatewayId")):
                        self.graph.node(gateway, table("Internet gateway", []), fillcolor="#fdf3e1")
            for endpoint in self.of_type("AWS::EC2::VPCEndpoint"):
                if self.refs(endpoint, self.props(endpoint).get("VpcId")) == [vpc]:
                    self._vpc_endpoint(endpoint)
            zones: dict[str, list[Key]] = {}
            for subnet in subnets:
                props = self.props(subnet)
                zone = literal(props.get("AvailabilityZoneId")) or literal(
                    props.get("AvailabilityZone")
                )
                zones.setdefault(zone or "AZ from a token", []).append(subnet)
            if subnets:
                self.vpc_anchor[vpc] = (subnets[0][0], f"{subnets[0][1]}.routes")
            for zone, members in zones.items():
                kind = (
                    "AZ ID" if any("AvailabilityZoneId" in self.props(s) for s in members) else "AZ"
                )
                self.graph.open(
                    f"{vpc[1]}-{zone}",
                    table(f"Availability zone {zone} ({kind})", []),
                    COLORS["az"],
                )
                for subnet in members:
                    self._subnet(subnet)
                self.graph.close()
            for sg in self.of_type("AWS::EC2::SecurityGroup"):
                if sg not in self.graph.drawn and self.refs(sg, self.props(sg).get("VpcId")) == [
                    vpc
                ]:
                    self._security_group(sg)
            self.graph.close()

    def _vpc_endpoint(self, endpoint: Key) -> None:
        props = self.props(endpoint)
        service = joined_literal(props.get("ServiceName"))
        name = service.rsplit(".", 1)[-1].upper() if service else "service"
        kind = literal(props.get("VpcEndpointType")) or "Gateway"
        self.graph.node(
            endpoint,
            table(f"{name} {kind.lower()} endpoint", ["on the private route table"]),
            fillcolor="#e8f1fb",
        )

    def _is_public(self, subnet: Key) -> bool:
        for route in self._routes(subnet):
            for target in self.refs(route, self.props(route).get("GatewayId")):
                if self.assembly.resource(target)["Type"] == "AWS::EC2::InternetGateway":
                    return True
        return False

    def _route_tables(self, subnet: Key) -> list[Key]:
        tables: list[Key] = []
        for association in self.of_type("AWS::EC2::SubnetRouteTableAssociation"):
            props = self.props(association)
            if self.refs(association, props.get("SubnetId")) == [subnet]:
                tables += self.refs(association, props.get("RouteTableId"))
        return tables

    def _routes(self, subnet: Key) -> list[Key]:
        tables = self._route_tables(subnet)
        return [
            route
            for route in self.of_type("AWS::EC2::Route")
            if set(self.refs(route, self.props(route).get("RouteTableId"))) & set(tables)
        ]

    def _subnet(self, subnet: Key) -> None:
        props = self.props(subnet)
        cidr = literal(props.get("CidrBlock")) or "CIDR from a token"
        public = self._is_public(subnet)
        usable = ""
        if cidr[0].isdigit():
            usable = f"{ipaddress.ip_network(cidr).num_addresses - 5:,} usable addresses"
        title = f"{'public' if public else 'private'} subnet {cidr}"
        self.graph.open(
            subnet[1], table(title, [usable]), COLORS["public" if public else "private"]
        )
        routes = [f"{r}" for r in self._route_lines(subnet)]
        self.graph.node(
            (subnet[0], f"{subnet[1]}.routes"),
            table("route table", routes, size=9),
            shape="note",
            fillcolor="#ffffff",
        )
        for gateway in self.of_type("AWS::EC2::NatGateway"):
            if self.refs(gateway, self.props(gateway).get("SubnetId")) == [subnet]:
                self.graph.node(
                    gateway,
                    table("NAT gateway", ["outbound for package installs"]),
                    fillcolor="#fdf3e1",
                )
        members = self._members(subnet)
        sgs = dict.fromkeys(sg for key in members for sg in self._security_groups(key))
        for sg in sgs:
            self._security_group(sg)
        for key in members:
            self._placed_resource(key)
            self.placed[key] = subnet
        self.graph.close()

    def _route_lines(self, subnet: Key) -> list[str]:
        lines = []
        tables = self._route_tables(subnet)
        for route in self._routes(subnet):
            props = self.props(route)
            destination = literal(props.get("DestinationCidrBlock")) or "?"
            for target in self.refs(route, props):
                if target not in tables:
                    kind = self.assembly.resource(target)["Type"].split("::")[-1]
                    lines.append(f"{destination} -> {words(kind)}")
        for endpoint in self.of_type("AWS::EC2::VPCEndpoint"):
            tables = self.refs(endpoint, self.props(endpoint).get("RouteTableIds"))
            if set(tables) & set(self._route_tables(subnet)):
                service = joined_literal(self.props(endpoint).get("ServiceName")).rsplit(".", 1)[-1]
                lines.append(f"{service.upper()} prefix list -> gateway endpoint")
        return lines

    def _members(self, subnet: Key) -> list[Key]:
        """Resources placed in ``subnet`` (FSx, HyperPod clusters, databases, ...); a
        database is drawn in the first subnet of its subnet group."""
        members = []
        for resource_type, prop in (
            ("AWS::FSx::FileSystem", "SubnetIds"),
            ("AWS::SageMaker::Cluster", "VpcConfig"),
        ):
            for key in self.of_type(resource_type):
                if subnet in self.refs(key, self.props(key).get(prop)):
                    members.append(key)
        for database in self.of_type("AWS::RDS::DBCluster"):
            for group in self.refs(database, self.props(database).get("DBSubnetGroupName")):
                subnets = self.refs(group, self.props(group).get("SubnetIds"))
                if subnets[:1] == [subnet]:
                    members.append(database)
        return members

    def _security_groups(self, key: Key) -> list[Key]:
        props = self.props(key)
        value = (
            props.get("SecurityGroupIds")
            or props.get("VpcSecurityGroupIds")
            or props.get("VpcConfig", {}).get("SecurityGroupIds")
        )
        return [
            k
            for k in self.refs(key, value)
            if self.assembly.resource(k)["Type"] == "AWS::EC2::SecurityGroup"
        ]

    def _security_group(self, sg: Key) -> None:
        if sg in self.graph.drawn:
            return
        self_rules: list[str] = []
        for rule_type, direction, peer in (
            ("AWS::EC2::SecurityGroupIngress", "in", "SourceSecurityGroupId"),
            ("AWS::EC2::SecurityGroupEgress", "out", "DestinationSecurityGroupId"),
        ):
            for rule in self.of_type(rule_type):
                props = self.props(rule)
                if self.refs(rule, props.get("GroupId")) == [sg] and self.refs(
                    rule, props.get(peer)
                ) == [sg]:
                    self_rules.append(f"{direction}: {self._ports(props)}")
        self_rules = sorted(set(self_rules))
        description = literal(self.props(sg).get("GroupDescription")) or ""
        self.graph.node(
            sg, table("security group", [self.where(sg), description]), fillcolor="#fff7d6"
        )
        if self_rules:
            label = "\\n".join(["self-referencing rules", *self_rules])
            self.graph.edge(node_id(sg), node_id(sg), label, dir="both", color="#b07d00")

    @staticmethod
    def _ports(props: dict[str, Any]) -> str:
        protocol = str(props.get("IpProtocol"))
        if protocol == "-1":
            return "all traffic"
        low, high = props.get("FromPort"), props.get("ToPort")
        return f"{protocol.upper()} {low}" if low == high else f"{protocol.upper()} {low}-{high}"

    def _placed_resource(self, key: Key) -> None:
        resource_type = self.assembly.resource(key)["Type"]
        if resource_type == "AWS::FSx::FileSystem":
            self._file_system(key)
        elif resource_type == "AWS::SageMaker::Cluster":
            self._hyperpod(key)
        elif resource_type == "AWS::RDS::DBCluster":
            self._database(key)

    def _database(self, key: Key) -> None:
        props = self.props(key)
        scaling = props.get("ServerlessV2ScalingConfiguration", {})
        lines = [
            f"{props.get('Engine')} {props.get('EngineVersion', '')}".strip(),
            f"Serverless v2, {scaling.get('MinCapacity')}-{scaling.get('MaxCapacity')} ACU"
            if scaling
            else "",
            f"port {props.get('Port', 3306)}, encrypted, {props.get('BackupRetentionPeriod')} "
            "days of backups",
            "password in Secrets Manager, rotated"
            if self.assembly.referrers(
                key, self.stacks, "AWS::SecretsManager::SecretTargetAttachment"
            )
            else "",
        ]
        self.graph.node(
            key,
            table("Slurm accounting database", [*lines, self.where(key)]),
            shape="cylinder",
            fillcolor="#f3eefb",
        )

    def _file_system(self, key: Key) -> None:
        props = self.props(key)
        if props.get("FileSystemType") == "OPENZFS":
            zfs = props.get("OpenZFSConfiguration", {})
            lines = [
                f"{zfs.get('DeploymentType', '')}, {props.get('StorageCapacity')} GiB, "
                f"{zfs.get('ThroughputCapacity', '?')} MB/s",
                "NFS, compression "
                f"{zfs.get('RootVolumeConfiguration', {}).get('DataCompressionType', 'none')}",
            ]
            self.graph.node(
                key,
                table("FSx for OpenZFS (homes)", [*lines, self.where(key)]),
                shape="cylinder",
                fillcolor="#e8f1fb",
            )
            return
        lustre = props.get("LustreConfiguration", {})
        lines = [
            f"{lustre.get('DeploymentType', '')}, {props.get('StorageCapacity')} GiB, "
            f"{lustre.get('PerUnitStorageThroughput', '?')} MB/s/TiB",
            f"Lustre {props.get('FileSystemTypeVersion', '')}, compression "
            f"{lustre.get('DataCompressionType', 'none')}",
        ]
        for association in self.assembly.referrers(
            key, self.stacks, "AWS::FSx::DataRepositoryAssociation"
        ):
            path = literal(self.props(association).get("FileSystemPath")) or "?"
            lines.append(f"data repository association at {path}")
        self.graph.node(
            key,
            table("FSx for Lustre", [*lines, self.where(key)]),
            shape="cylinder",
            fillcolor="#e8f1fb",
        )

    def _hyperpod(self, key: Key) -> None:
        props = self.props(key)
        name = literal(props.get("ClusterName")) or "(generated name)"
        orchestrator = props.get("Orchestrator", {})
        recovery = literal(props.get("NodeRecovery")) or "default"
        slurm = orchestrator.get("Slurm") if isinstance(orchestrator, dict) else None
        if "Eks" in orchestrator:
            mode = "EKS"
        elif slurm is None:
            mode = "Slurm set up by the lifecycle scripts (provisioning_parameters.json)"
        else:
            strategy = slurm.get("SlurmConfigStrategy", "merge mode")
            mode = f"Slurm configured by HyperPod ({strategy})"
        lines = [mode, f"node recovery {recovery}"]
        if props.get("NodeProvisioningMode"):
            lines.append(f"{props['NodeProvisioningMode'].lower()} node provisioning")
        if isinstance(slurm, dict) and "AccountingDatabase" in slurm:
            lines.append("accounting in an external database")
        self.graph.open(
            key[1],
            table(f"HyperPod cluster {name}", [*lines, self.where(key)]),
            COLORS["cluster"],
        )
        for index, group in enumerate(props.get("InstanceGroups", [])):
            self._instance_group(key, index, group)
        self.graph.close()

    def _instance_group(self, key: Key, index: int, group: dict[str, Any]) -> None:
        configs = group.get("InstanceStorageConfigs", [])
        storage = [
            f"EBS {c['EbsVolumeConfig'].get('VolumeSizeInGB')} GiB"
            for c in configs
            if "EbsVolumeConfig" in c
        ]
        mounts = [
            f"HyperPod mounts {kind} at {c[config].get('MountPath', default)}"
            for c in configs
            for config, kind, default in (
                ("FsxLustreConfig", "FSx for Lustre", "/fsx"),
                ("FsxOpenZfsConfig", "FSx for OpenZFS", "/home"),
            )
            if config in c
        ]
        slurm = group.get("SlurmConfig", {})
        partitions = ", ".join(slurm.get("PartitionNames", []))
        checks = group.get("OnStartDeepHealthChecks")
        update = group.get("ScheduledUpdateConfig", {})
        capacity = ", ".join(group.get("CapacityRequirements", {}))
        count = f"{group.get('InstanceType')} x {group.get('InstanceCount')}"
        if group.get("MinInstanceCount") is not None:
            count += f" (in service from {group['MinInstanceCount']})"
        lines = [
            count,
            ", ".join([*storage, f"{group.get('ThreadsPerCore', 1)} thread(s) per core"]),
            *mounts,
            f"Slurm {slurm['NodeType']}" + (f", partition {partitions}" if partitions else "")
            if slurm
            else "",
            f"deep health checks: {', '.join(checks)}" if checks else "",
            f"capacity: {capacity}" if capacity else "",
            f"image {group['ImageId']}" if "ImageId" in group else "",
            f"AMI updates {update.get('ScheduleExpression')}, rolled back on alarms"
            if update
            else "",
        ]
        title = f"instance group {group.get('InstanceGroupName')}"
        self.graph.node(
            (key[0], f"{key[1]}.group{index}"), table(title, lines), fillcolor="#eef7ee"
        )

    # -- buckets and endpoints --------------------------------------------------------------

    def _buckets(self) -> None:
        logs_of: dict[Key, Key] = {}
        for bucket in self.of_type("AWS::S3::Bucket"):
            for target in self.refs(bucket, self.props(bucket).get("LoggingConfiguration")):
                logs_of[target] = bucket
        for bucket in self.of_type("AWS::S3::Bucket"):
            if bucket in logs_of:
                continue
            props = self.props(bucket)
            encryption = (
                "KMS key" if "aws:kms" in str(props.get("BucketEncryption")) else "S3-managed keys"
            )
            lines = [
                f"encrypted with a {encryption}",
                "access logs to their own bucket" if "LoggingConfiguration" in props else "",
            ]
            self.graph.node(
                bucket,
                table(f"S3 bucket {self.where(bucket)}", lines),
                shape="cylinder",
                fillcolor="#fdf3e1",
            )
        for group in self.of_type("AWS::Logs::LogGroup"):
            for flow_log in self.assembly.referrers(group, self.stacks, "AWS::EC2::FlowLog"):
                traffic = literal(self.props(flow_log).get("TrafficType")) or ""
                self.graph.node(
                    group,
                    table("CloudWatch log group", [f"VPC flow logs ({traffic} traffic)"]),
                    shape="folder",
                    fillcolor="#ffffff",
                )

    def _endpoints(self) -> None:
        for endpoint in self.of_type("AWS::SageMaker::Endpoint"):
            configs = self.refs(endpoint, self.props(endpoint).get("EndpointConfigName"))
            if not configs:
                continue
            config = configs[0]
            components = self.assembly.referrers(
                endpoint, self.stacks, "AWS::SageMaker::InferenceComponent"
            )
            variants = self.props(config).get("ProductionVariants", [])
            models = [m for v in variants for m in self.refs(config, v.get("ModelName"))]
            mode = (
                "multi-model"
                if any("MultiModel" in str(self.props(m)) for m in models)
                else "single model"
            )
            if "AsyncInferenceConfig" in self.props(config):
                mode = "asynchronous: requests queued, bodies and results in S3"
            kind = "inference components" if components else mode
            name = self.assembly.path(endpoint).split("/")[0]
            self.graph.open(endpoint[1], table(f"endpoint {name}", [f"{kind}"]), COLORS["endpoint"])
            for variant in variants:
                self._variant(endpoint, config, variant)
            for component in components:
                self._component(component)
            self.graph.close()

    def _variant(self, endpoint: Key, config: Key, variant: dict[str, Any]) -> None:
        name = variant.get("VariantName", "?")
        managed = variant.get("ManagedInstanceScaling", {})
        count = variant.get("InitialInstanceCount", "?")
        lines = [f"{variant.get('InstanceType')}, {count} instance(s) at deploy"]
        if managed.get("Status") == "ENABLED":
            low, high = managed.get("MinInstanceCount"), managed.get("MaxInstanceCount")
            lines.append(f"managed instance scaling {low}-{high}")
        routing = variant.get("RoutingConfig", {}).get("RoutingStrategy")
        if routing:
            lines.append(f"routing: {words(''.join(w.title() for w in routing.split('_')))}")
        # ResourceId: Join of "endpoint/", the endpoint's name and "/variant/<name>".
        lines += self._scaling(
            endpoint,
            lambda text, referred: referred and text.endswith(f"/variant/{name}"),
            "instances",
        )
        for model in self.refs(config, variant.get("ModelName")):
            lines += self._model_lines(model)
        capture = self.props(config).get("DataCaptureConfig")
        if capture:
            lines.append(f"data capture: {capture.get('InitialSamplingPercentage')}% of requests")
        lines += self._async_lines(config)
        self.graph.node(
            (config[0], f"{config[1]}.{name}"), table(f"variant {name}", lines), fillcolor="#ffffff"
        )

    def _async_lines(self, config: Key) -> list[str]:
        """What an asynchronous endpoint's variant does with its queue."""
        queue = self.props(config).get("AsyncInferenceConfig")
        if not queue:
            return []
        output = queue.get("OutputConfig", {})
        concurrency = queue.get("ClientConfig", {}).get("MaxConcurrentInvocationsPerInstance")
        return [
            f"{concurrency} concurrent requests per instance"
            if concurrency
            else "concurrency chosen by SageMaker",
            f"results to {s3_suffix(output.get('S3OutputPath'))}",
            f"failures to {s3_suffix(output.get('S3FailurePath'))}",
        ]

    def _model_lines(self, model: Key) -> list[str]:
        container = self.props(model).get("PrimaryContainer", {})
        data = container.get("ModelDataUrl") or container.get("ModelDataSource", {}).get(
            "S3DataSource", {}
        ).get("S3Uri")
        lines = [f"container {short_image(container.get('Image'))}"]
        if container.get("Mode") == "MultiModel":
            lines.append(f"models loaded on demand from {s3_suffix(data)}")
        elif data:
            lines.append(f"model data {s3_suffix(data)}")
        return lines

    def _component(self, component: Key) -> None:
        props = self.props(component)
        spec = props.get("Specification", {})
        compute = spec.get("ComputeResourceRequirements", {})
        resources = []
        if compute.get("NumberOfAcceleratorDevicesRequired"):
            resources.append(f"{compute['NumberOfAcceleratorDevicesRequired']} accelerator(s)")
        if compute.get("NumberOfCpuCoresRequired"):
            resources.append(f"{compute['NumberOfCpuCoresRequired']} CPU cores")
        if compute.get("MinMemoryRequiredInMb"):
            resources.append(f"{compute['MinMemoryRequiredInMb'] / 1024:g} GiB")
        lines = [" · ".join(resources)]
        for model in self.refs(component, spec.get("ModelName")):
            lines += self._model_lines(model)
        copies = props.get("RuntimeConfig", {}).get("CopyCount")
        lines.append(f"{copies} cop{'y' if copies == 1 else 'ies'} at deploy")
        name = literal(props.get("InferenceComponentName"))
        # ResourceId: "inference-component/<name>", literal or built from the component.
        lines += self._scaling(
            component,
            lambda text, referred: referred or text == f"inference-component/{name}",
            "copies",
        )
        title = f"component {name or self.assembly.path(component)}"
        self.graph.node(component, table(title, lines), fillcolor="#ffffff")

    def _scaling(
        self, target_of: Key, matches: Callable[[str, bool], bool], unit: str
    ) -> list[str]:
        """Lines describing the Application Auto Scaling of a component or a variant:
        ``matches(literal part of the ResourceId, whether it refers to target_of)``."""
        lines: list[str] = []
        for target in self.of_type("AWS::ApplicationAutoScaling::ScalableTarget"):
            props = self.props(target)
            resource_id = props.get("ResourceId")
            text = joined_literal(resource_id)
            referred = target_of in self.refs(target, resource_id)
            if not matches(text, referred):
                continue
            low, high = props.get("MinCapacity"), props.get("MaxCapacity")
            lines.append(f"autoscaling {low}-{high} {unit}:")
            for policy in self.assembly.referrers(
                target, self.stacks, "AWS::ApplicationAutoScaling::ScalingPolicy"
            ):
                lines.append("  " + self._policy(policy))
        return lines

    def _policy(self, policy: Key) -> str:
        props = self.props(policy)
        tracking = props.get("TargetTrackingScalingPolicyConfiguration")
        if tracking:
            metric = tracking.get("PredefinedMetricSpecification", {}).get(
                "PredefinedMetricType"
            ) or tracking.get("CustomizedMetricSpecification", {}).get(
                "MetricName", "custom metric"
            )
            return f"target {tracking.get('TargetValue')} {words(metric)}"
        steps = props.get("StepScalingPolicyConfiguration", {})
        adjustments = [s.get("ScalingAdjustment") for s in steps.get("StepAdjustments", [])]
        alarms = self.assembly.referrers(policy, self.stacks, "AWS::CloudWatch::Alarm")
        cause = ", ".join(
            f"{self.props(a).get('MetricName')} >= {self.props(a).get('Threshold')}" for a in alarms
        )
        change = ", ".join(f"{a:+}" for a in adjustments if isinstance(a, int))
        return f"step {change} when {cause}" if cause else f"step {change}"

    # -- edges between what was drawn -------------------------------------------------------

    def _edges(self) -> None:
        g = self.graph
        for subnet in self.of_type("AWS::EC2::Subnet"):
            routes_node = node_id((subnet[0], f"{subnet[1]}.routes"))
            for route in self._routes(subnet):
                for target in self.refs(route, self.props(route)):
                    if target in g.drawn:
                        g.edge(routes_node, node_id(target), "0.0.0.0/0")
            for endpoint in self.of_type("AWS::EC2::VPCEndpoint"):
                tables = self.refs(endpoint, self.props(endpoint).get("RouteTableIds"))
                if set(tables) & set(self._route_tables(subnet)):
                    g.edge(routes_node, node_id(endpoint), "S3")
        for key in self.placed:
            anchor, tail = self.anchor(key)
            for sg in self._security_groups(key):
                g.edge(anchor, node_id(sg), "member", style="dashed", arrowhead="none", **tail)
        for cluster in self.of_type("AWS::SageMaker::Cluster"):
            anchor, tail = self.anchor(cluster)
            groups = self.props(cluster).get("InstanceGroups", [])
            managed = any("OnInitComplete" in gr.get("LifeCycleConfig", {}) for gr in groups)
            entry = "on_init_complete" if managed else "on_create"
            for bucket, via in self._lifecycle_buckets(cluster):
                for endpoint in self._gateway_endpoints(cluster):
                    g.edge(node_id(endpoint), node_id(bucket), "S3 traffic", style="dashed")
                g.edge(anchor, node_id(bucket), f"lifecycle scripts ({entry})", **tail)
                for fs in self.of_type("AWS::FSx::FileSystem"):
                    if via is not None and self.assembly.refers_to(via, fs):
                        g.edge(
                            anchor,
                            node_id(fs),
                            "mounts /fsx (DNS, mount name in the scripts)",
                            **tail,
                        )
            self._cluster_edges(cluster, groups, anchor, tail)
        for association in self.of_type("AWS::FSx::DataRepositoryAssociation"):
            props = self.props(association)
            for fs in self.refs(association, props.get("FileSystemId")):
                for bucket in self._buckets_in(association, props.get("DataRepositoryPath")):
                    g.edge(node_id(fs), node_id(bucket), "data repository", style="dashed")
        for flow_log in self.of_type("AWS::EC2::FlowLog"):
            props = self.props(flow_log)
            for group in self.refs(flow_log, props.get("LogGroupName")):
                for vpc in self.refs(flow_log, props.get("ResourceId")):
                    if vpc in self.vpc_anchor:
                        anchor = node_id(self.vpc_anchor[vpc])
                        g.edge(
                            anchor,
                            node_id(group),
                            "flow logs",
                            ltail=f"cluster_{vpc[1]}",
                            style="dashed",
                        )
        for model in self.of_type("AWS::SageMaker::Model"):
            container = self.props(model).get("PrimaryContainer", {})
            data = container.get("ModelDataUrl") or container.get("ModelDataSource")
            user = self._model_user(model)
            for bucket in self._buckets_in(model, data):
                if user is not None:
                    g.edge(node_id(user), node_id(bucket), "model data", style="dashed")
        for config in self.of_type("AWS::SageMaker::EndpointConfig"):
            capture = self.props(config).get("DataCaptureConfig")
            variants = self.props(config).get("ProductionVariants", [])
            if capture and variants:
                variant = (config[0], f"{config[1]}.{variants[0].get('VariantName', '?')}")
                for bucket in self._buckets_in(config, capture.get("DestinationS3Uri")):
                    g.edge(node_id(variant), node_id(bucket), "data capture", style="dashed")
            queue = self.props(config).get("AsyncInferenceConfig")
            if queue and variants:
                self._async_edges(config, variants[0], queue.get("OutputConfig", {}))

    def _async_edges(self, config: Key, variant: dict[str, Any], output: dict[str, Any]) -> None:
        """An asynchronous variant reads requests from and writes results to its bucket, and
        notifies its topics."""
        g = self.graph
        tail = node_id((config[0], f"{config[1]}.{variant.get('VariantName', '?')}"))
        for bucket in self._buckets_in(config, output.get("S3OutputPath")):
            g.edge(tail, node_id(bucket), "requests in, results and failures out", style="dashed")
        notifications = output.get("NotificationConfig", {})
        for member, outcome in (("SuccessTopic", "success"), ("ErrorTopic", "error")):
            for topic in self.refs(config, notifications.get(member)):
                if topic not in g.drawn:
                    name = literal(self.props(topic).get("DisplayName")) or "SNS topic"
                    lines = [
                        "encrypted with a KMS key" if "KmsMasterKeyId" in self.props(topic) else ""
                    ]
                    g.node(
                        topic, table(f"SNS topic: {name}", lines), shape="note", fillcolor="#fdf3e1"
                    )
                g.edge(tail, node_id(topic), f"{outcome} notification", style="dashed")

    def _cluster_edges(
        self, cluster: Key, groups: list[dict[str, Any]], anchor: str, tail: dict[str, str]
    ) -> None:
        """What HyperPod itself connects in managed mode: the file systems it mounts, the
        accounting database, and the alarm that rolls scheduled updates back."""
        g = self.graph
        mounted: dict[Key, str] = {}
        for group in groups:
            for config in group.get("InstanceStorageConfigs", []):
                for kind in ("FsxLustreConfig", "FsxOpenZfsConfig"):
                    if kind in config:
                        for fs in self.refs(cluster, config[kind].get("DnsName")):
                            mounted.setdefault(fs, literal(config[kind].get("MountPath")) or "")
        for fs, path in mounted.items():
            if fs in g.drawn:
                g.edge(anchor, node_id(fs), f"HyperPod mounts {path}", **tail)
        slurm = self.props(cluster).get("Orchestrator", {}).get("Slurm", {})
        for database in self.refs(cluster, slurm.get("AccountingDatabase")):
            if database in g.drawn:
                g.edge(anchor, node_id(database), "slurmdbd (accounting)", **tail)
        names = {
            literal(alarm.get("AlarmName"))
            for group in groups
            for alarm in group.get("ScheduledUpdateConfig", {})
            .get("DeploymentConfig", {})
            .get("AutoRollbackConfiguration", [])
        }
        for alarm in self.of_type("AWS::CloudWatch::Alarm"):
            props = self.props(alarm)
            if literal(props.get("AlarmName")) in names:
                metric = f"{props.get('Namespace')} {props.get('MetricName')}"
                g.node(
                    alarm,
                    table("CloudWatch alarm", ["unhealthy nodes", metric, self.where(alarm)]),
                    shape="note",
                    fillcolor="#fdecea",
                )
                g.edge(anchor, node_id(alarm), "AMI updates roll back on", style="dashed", **tail)

    def anchor(self, key: Key) -> tuple[str, dict[str, str]]:
        """A node to draw an edge from for ``key``, with ltail when it is a cluster box."""
        if self.assembly.resource(key)["Type"] == "AWS::SageMaker::Cluster":
            return node_id((key[0], f"{key[1]}.group0")), {"ltail": f"cluster_{key[1]}"}
        return node_id(key), {}

    def _gateway_endpoints(self, key: Key) -> list[Key]:
        subnet = self.placed.get(key)
        if subnet is None:
            return []
        tables = set(self._route_tables(subnet))
        return [
            endpoint
            for endpoint in self.of_type("AWS::EC2::VPCEndpoint")
            if tables & set(self.refs(endpoint, self.props(endpoint).get("RouteTableIds")))
        ]

    def _buckets_in(self, key: Key, value: Any) -> list[Key]:
        """Buckets ``value`` names, directly or through a resource it refers to."""
        found = []
        for target in self.refs(key, value):
            if self.assembly.resource(target)["Type"] == "AWS::S3::Bucket":
                found.append(target)
            else:
                found += [
                    t
                    for t in self.refs(target, self.props(target))
                    if self.assembly.resource(t)["Type"] == "AWS::S3::Bucket"
                ]
        return [b for b in dict.fromkeys(found) if b in self.graph.drawn]

    def _lifecycle_buckets(self, cluster: Key) -> list[tuple[Key, Key | None]]:
        """The buckets the cluster's lifecycle configuration reads, with the resource in
        between (an upload custom resource) when there is one."""
        found: dict[Key, Key | None] = {}
        for group in self.props(cluster).get("InstanceGroups", []):
            value = group.get("LifeCycleConfig", {}).get("SourceS3Uri")
            for target in self.refs(cluster, value):
                if self.assembly.resource(target)["Type"] == "AWS::S3::Bucket":
                    found.setdefault(target, None)
                for bucket in self._buckets_in(
                    target, self.props(target).get("DestinationBucketName")
                ):
                    found.setdefault(bucket, target)
        return [(b, via) for b, via in found.items() if b in self.graph.drawn]

    def _model_user(self, model: Key) -> Key | None:
        for component in self.of_type("AWS::SageMaker::InferenceComponent"):
            if model in self.refs(component, self.props(component).get("Specification")):
                return component
        for config in self.of_type("AWS::SageMaker::EndpointConfig"):
            for variant in self.props(config).get("ProductionVariants", []):
                if model in self.refs(config, variant.get("ModelName")):
                    return (config[0], f"{config[1]}.{variant.get('VariantName', '?')}")
        return None


def render(assembly_dir: Path, out_dir: Path) -> list[Path]:
    """Write one ``.dot`` and ``.png`` per group of stacks; return the PNG paths."""
    assembly = Assembly.load(assembly_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for stacks in assembly.groups():
        picture = Picture(assembly, stacks)
        source = out_dir / f"{picture.name}.dot"
        source.write_text(picture.dot())
        png = source.with_suffix(".png")
        render_png(source, png, engine="dot", dpi=110)
        written.append(png)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assembly", type=Path, help="the cloud assembly directory (cdk.out)")
    parser.add_argument("out", type=Path, help="where to write <name>.dot and <name>.png")
    args = parser.parse_args()
    for png in render(args.assembly, args.out):
        print(png)


if __name__ == "__main__":
    main()
