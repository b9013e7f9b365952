"""The EKS part of an architecture picture (``docs_diagrams.py``): the EKS control plane and
what the stacks create on it, in the order the template states.

Drawn in one box beside the network: the ``AWS::EKS::Cluster`` with its settings, every
add-on (name, pinned version), access entry (principal, access policy, scope), Pod Identity
association, OpenID Connect provider, Prometheus workspace and HyperPod task-governance
resource; and, whatever their type, the other resources that name the EKS cluster or that
those resources wait for (a custom resource, a build project...), labelled by type and
construct path. An arrow ``A -> B`` says the template creates B after A (``DependsOn`` or a
reference), transitively reduced: an order that follows from two other arrows is not drawn.
Roles, policies and keys are left to the caption's count."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from docs_assembly import Key, literal
from docs_labels import table

if TYPE_CHECKING:  # the picture imports this module: no cycle at run time
    from docs_diagrams import Picture

#: The types this module draws with their own label.
EKS_DRAWN = {
    "AWS::EKS::Cluster",
    "AWS::EKS::Addon",
    "AWS::EKS::AccessEntry",
    "AWS::EKS::PodIdentityAssociation",
    "AWS::IAM::OIDCProvider",
    "AWS::APS::Workspace",
    "AWS::SageMaker::ClusterSchedulerConfig",
    "AWS::SageMaker::ComputeQuota",
}
#: Types never drawn as one of "the other resources": permissions and keys.
_NOT_GENERIC = ("AWS::IAM::", "AWS::KMS::", "AWS::CDK::")
FILL = "#eef6ec"


def _tail(arn: Any) -> str:
    text = literal(arn) or ""
    return text.rsplit(":", 1)[-1] if text else "(principal from a token)"


def _policy_name(value: Any) -> str:
    if isinstance(value, dict) and "Fn::Join" in value:
        value = "".join(p for p in value["Fn::Join"][1] if isinstance(p, str))
    return str(value).rsplit("/", 1)[-1]


class EksDrawing:
    """Draws the EKS box of ``picture`` (call :meth:`draw` once, before the picture's
    edges); ``elsewhere`` are the types the picture draws itself or leaves out as glue."""

    def __init__(self, picture: Picture, elsewhere: set[str]) -> None:
        self.picture = picture
        self.elsewhere = elsewhere
        self.graph = picture.graph
        self.members: list[Key] = []

    def draw(self) -> None:
        for eks in self.picture.of_type("AWS::EKS::Cluster"):
            self._box(eks)
        self._order()

    # -- nodes ------------------------------------------------------------------------------

    def _box(self, eks: Key) -> None:
        p = self.picture
        props = p.props(eks)
        access = props.get("AccessConfig", {})
        vpc = props.get("ResourcesVpcConfig", {})
        logging = props.get("Logging", {}).get("ClusterLogging", {}).get("EnabledTypes", [])
        endpoint = "public and private" if vpc.get("EndpointPublicAccess") else "private"
        lines = [
            f"Kubernetes {props.get('Version', '(EKS default)')}, "
            f"authentication {access.get('AuthenticationMode', 'default')}",
            f"API endpoint {endpoint}, {len(vpc.get('SubnetIds', []))} subnets",
            "secrets encrypted with a KMS key" if props.get("EncryptionConfig") else "",
            f"control-plane logs: {', '.join(t.get('Type', '?') for t in logging)}"
            if logging
            else "",
        ]
        self.graph.open(f"eks-{eks[1]}", table("Amazon EKS", [p.where(eks)]), FILL)
        self.graph.node(eks, table("EKS control plane", lines), fillcolor="#ffffff")
        self.members.append(eks)
        for key in self._related(eks):
            self.graph.node(key, self._label(key), fillcolor="#ffffff", shape=self._shape(key))
            self.members.append(key)
        self.graph.close()
        for subnet in p.refs(eks, vpc.get("SubnetIds")):
            routes = (subnet[0], f"{subnet[1]}.routes")
            if routes in self.graph.drawn:
                self.graph.edge(
                    f'"{eks[0]}.{eks[1]}"',
                    f'"{routes[0]}.{routes[1]}"',
                    "control-plane interfaces",
                    style="dashed",
                    arrowhead="none",
                    lhead=f"cluster_{subnet[1]}",
                )

    def _related(self, eks: Key) -> list[Key]:
        """The resources drawn in the box: the EKS types above that belong to this cluster
        or to the HyperPod cluster it orchestrates, then any other resource that names the
        EKS cluster or that one of them waits for."""
        p = self.picture
        stacks = p.stacks
        hyperpods = [
            c
            for c in p.of_type("AWS::SageMaker::Cluster")
            if eks in p.refs(c, p.props(c).get("Orchestrator"))
        ]
        anchors = {eks, *hyperpods}
        candidates = [
            (name, logical_id)
            for name in stacks
            for logical_id, resource in p.assembly.stacks[name].resources.items()
            if not self._skipped(resource["Type"])
            and (name, logical_id) not in anchors
            and (name, logical_id) not in self.graph.drawn
        ]
        # Until none is added: the EKS types that need the EKS or the HyperPod cluster, the
        # others that name the EKS cluster, and whatever something drawn waits for.
        related: list[Key] = []
        added = True
        while added:
            waited_for = {dep for key in [*related, *hyperpods] for dep in self._needs(key)}
            new = [
                key
                for key in candidates
                if key not in related
                and self._belongs(
                    key,
                    anchors if p.assembly.resource(key)["Type"] in EKS_DRAWN else {eks},
                    waited_for,
                )
            ]
            related += new
            added = bool(new)
        return related

    def _skipped(self, kind: str) -> bool:
        """Whether ``kind`` is never drawn in the box: drawn by the picture, glue, or
        permissions and keys (but for the EKS types above)."""
        if kind in EKS_DRAWN:
            return False
        return kind in self.elsewhere or kind.startswith(_NOT_GENERIC)

    def _belongs(self, key: Key, owners: set[Key], waited_for: set[Key]) -> bool:
        """Whether ``key`` needs one of ``owners`` or something drawn waits for it."""
        return key in waited_for or bool(owners & set(self._needs(key)))

    def _needs(self, key: Key) -> list[Key]:
        """What ``key`` waits for: its ``DependsOn`` and the resources it refers to."""
        resource = self.picture.assembly.resource(key)
        depends = resource.get("DependsOn", [])
        depends = [depends] if isinstance(depends, str) else depends
        found = [
            (key[0], d) for d in depends if d in self.picture.assembly.stacks[key[0]].resources
        ]
        return list(dict.fromkeys([*found, *self.picture.refs(key, resource.get("Properties"))]))

    def _label(self, key: Key) -> str:
        p = self.picture
        kind = p.assembly.resource(key)["Type"]
        props = p.props(key)
        if kind == "AWS::EKS::Addon":
            version = literal(props.get("AddonVersion")) or "EKS default version"
            config = " configured" if props.get("ConfigurationValues") else ""
            roles = " + Pod Identity" if props.get("PodIdentityAssociations") else ""
            irsa = " + IRSA role" if props.get("ServiceAccountRoleArn") else ""
            return table(
                f"add-on {props.get('AddonName')}", [f"{version}{config}{roles}{irsa}"], size=10
            )
        if kind == "AWS::EKS::AccessEntry":
            lines = []
            for policy in props.get("AccessPolicies", []):
                scope = policy.get("AccessScope", {})
                where = ", ".join(scope.get("Namespaces", [])) or scope.get("Type", "?")
                lines.append(f"{_policy_name(policy.get('PolicyArn'))} in {where}")
            return table(f"access entry {_tail(props.get('PrincipalArn'))}", lines, size=10)
        if kind == "AWS::EKS::PodIdentityAssociation":
            account = f"{props.get('Namespace')}/{props.get('ServiceAccount')}"
            return table("Pod Identity association", [account], size=10)
        if kind == "AWS::IAM::OIDCProvider":
            return table("IAM OIDC provider", ["the cluster's issuer, for IRSA roles"], size=10)
        if kind == "AWS::APS::Workspace":
            return table("Prometheus workspace", ["Amazon Managed Service for Prometheus"], size=10)
        if kind == "AWS::SageMaker::ClusterSchedulerConfig":
            config = props.get("SchedulerConfig", {})
            classes = ", ".join(
                f"{c.get('Name')} {c.get('Weight')}" for c in config.get("PriorityClasses", [])
            )
            return table(
                "task governance policy",
                [f"fair share {config.get('FairShare', 'default')}", classes],
                size=10,
            )
        if kind == "AWS::SageMaker::ComputeQuota":
            quota = props.get("ComputeQuotaConfig", {})
            resources = ", ".join(
                f"{r.get('Count')} x {r.get('InstanceType')}"
                for r in quota.get("ComputeQuotaResources", [])
            )
            team = props.get("ComputeQuotaTarget", {}).get("TeamName", "?")
            sharing = quota.get("ResourceSharingConfig", {}).get("Strategy", "")
            return table(f"team {team} quota", [resources, sharing], size=10)
        return table(_type_words(kind), [p.assembly.path(key)], size=10)

    def _shape(self, key: Key) -> str:
        kind = self.picture.assembly.resource(key)["Type"]
        return "box" if kind in EKS_DRAWN else "component"

    # -- order ------------------------------------------------------------------------------

    def _order(self) -> None:
        """An arrow for each order between the drawn EKS resources and the HyperPod
        clusters, transitively reduced."""
        p = self.picture
        nodes = set(self.members) | set(p.of_type("AWS::SageMaker::Cluster"))
        needs = {key: set(self._needs(key)) & nodes for key in nodes}
        closure: dict[Key, set[Key]] = {}

        def reach(key: Key, seen: frozenset[Key] = frozenset()) -> set[Key]:
            if key not in closure:
                found: set[Key] = set()
                for dep in needs[key] - seen:
                    found |= {dep, *reach(dep, seen | {key})}
                closure[key] = found
            return closure[key]

        for key in sorted(nodes):
            direct = needs[key]
            implied = {d for dep in direct for d in reach(dep)}
            for dep in sorted(direct - implied):
                head, head_extra = p.anchor(key)
                tail, tail_extra = p.anchor(dep)
                attributes = {"style": "dotted", "color": "#2e7d32"}
                if "ltail" in head_extra:
                    attributes["lhead"] = head_extra["ltail"]
                attributes.update(tail_extra)
                self.graph.edge(tail, head, "then", **attributes)


def _type_words(kind: str) -> str:
    """``AWS::CodeBuild::Project`` -> ``CodeBuild Project``; ``Custom::HelmChart`` ->
    ``custom resource HelmChart``."""
    if kind.startswith("Custom::"):
        return f"custom resource {kind.split('::', 1)[1]}"
    if kind == "AWS::CloudFormation::CustomResource":
        return "custom resource"
    return " ".join(kind.split("::")[1:])
