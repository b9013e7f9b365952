"""Every check the stacks' constructs would run, on a whole configuration, before any of
the app's constructs is built.

Each construct's props are built from the configuration and checked by their own
``validate`` (the code the construct runs), recording into one shared :class:`Problems`
through a view that renames the props' fields to the configuration keys the user wrote:
``storage_capacity_gib`` of :class:`SharedFileSystemProps` becomes
``training.storage_capacity_gib``, ``instance_type`` of the second IC endpoint's
:class:`InferenceEndpointProps` becomes ``inference.ic_endpoints[1].instance_type``.
Props that reference other resources (a subnet, an endpoint) get stand-ins in a scratch
stack that is never synthesized; the stand-in subnet has the CIDR the configured VPC would
give the private subnet, so subnet sizing is checked too.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Collection
from dataclasses import dataclass

import aws_cdk as cdk
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam

from fm_platform.constructs.inference.ic_endpoint import EndpointReference
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.training.filesystem import SharedFileSystemProps
from fm_platform.constructs.training.hyperpod import HyperPodClusterProps
from fm_platform.constructs.training.instance_groups import NodeRole, provisioning_parameters
from fm_platform.constructs.training.lifecycle import LifecycleScriptsProps
from fm_platform.constructs.training.network import ClusterNetworkProps
from fm_platform.stacks.inference import IcEndpointSpec, InferenceConfig
from fm_platform.stacks.training import TrainingConfig
from fm_platform.stacks.training_data import FSX_MOUNT_PATH
from fm_platform.validation import Problems

# Stand-in values for what only exists once the stacks are built. They are never
# synthesized; they only let the props be constructed and checked.
_IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/check:latest"
_ARTIFACTS = "s3://check-bucket/models/"
_ROLE_ARN = "arn:aws:iam::123456789012:role/check"


@dataclass(frozen=True)
class _Lifecycle:
    s3_uri: str = "s3://check-bucket/lifecycle-scripts"
    on_create_script: str = "on_create.sh"

    def read_statements(self) -> list[iam.PolicyStatement]:
        return []


class _StandIns:
    """References to resources that do not exist yet, in a scratch stack."""

    def __init__(self) -> None:
        self._stack = cdk.Stack(cdk.App(), "ConfigurationCheck")
        self._count = 0

    def _id(self) -> str:
        self._count += 1
        return f"StandIn{self._count}"

    def vpc(self) -> ec2.IVpc:
        return ec2.Vpc.from_vpc_attributes(
            self._stack, self._id(), vpc_id="vpc-check", availability_zones=["check-az"]
        )

    def subnet(self, cidr: str | None) -> ec2.ISubnet:
        return ec2.Subnet.from_subnet_attributes(
            self._stack, self._id(), subnet_id="subnet-check", ipv4_cidr_block=cidr
        )

    def security_group(self) -> ec2.ISecurityGroup:
        return ec2.SecurityGroup.from_security_group_id(self._stack, self._id(), "sg-check")

    def role(self) -> iam.IRole:
        return iam.Role.from_role_arn(self._stack, self._id(), _ROLE_ARN, mutable=False)


def check_config(
    training: TrainingConfig | None,
    inference: InferenceConfig | None,
    problems: Problems,
    *,
    incomplete: Collection[str] = (),
) -> None:
    """Record in ``problems`` every problem the constructs would report for ``training`` and
    ``inference`` (None: not deployed), named by configuration key (``training.*``,
    ``inference.*``). Lists named in ``incomplete`` (e.g. ``inference.ic_endpoints``) lost
    items to configuration errors already reported; their checks are skipped, so that no
    problem is reported under another item's position."""
    stand_ins = _StandIns()
    if training is not None:
        _check_training(training, problems.scoped("training."), stand_ins, incomplete)
    if inference is not None:
        _check_inference(inference, problems.scoped("inference."), stand_ins, incomplete)


# -- training -----------------------------------------------------------------------------


def _check_training(
    config: TrainingConfig, problems: Problems, stand_ins: _StandIns, incomplete: Collection[str]
) -> None:
    ClusterNetworkProps(
        availability_zone_id=config.availability_zone_id,
        vpc_cidr=config.vpc_cidr,
        private_subnet_cidr_mask=config.private_subnet_cidr_mask,
    ).validate(problems)
    SharedFileSystemProps(
        vpc=stand_ins.vpc(),
        subnet=stand_ins.subnet(None),
        security_group=stand_ins.security_group(),
        storage_capacity_gib=config.storage_capacity_gib,
        per_unit_storage_throughput_mbps=config.per_unit_storage_throughput_mbps,
        mount_path=FSX_MOUNT_PATH,
    ).validate(problems)
    if "training.instance_groups" in incomplete:
        return
    HyperPodClusterProps(
        instance_groups=config.instance_groups,
        subnet=stand_ins.subnet(_private_subnet_cidr(config)),
        security_group=stand_ins.security_group(),
        lifecycle=_Lifecycle(),
        cluster_name=config.cluster_name,
        node_recovery=config.node_recovery,
    ).validate(problems.scoped("", fields={"subnet": "private_subnet_cidr_mask"}))
    if any(group.role is NodeRole.CONTROLLER for group in config.instance_groups):
        parameters = provisioning_parameters(
            config.instance_groups,
            fsx_dns_name="fs-check.fsx.us-east-1.amazonaws.com",
            fsx_mount_name="check",
            fsx_mount_path=FSX_MOUNT_PATH,
        )
        LifecycleScriptsProps(
            provisioning_parameters=parameters, assets_path=config.lifecycle_assets_path
        ).validate(problems.scoped("", fields={"assets_path": "lifecycle_assets_path"}))


def _private_subnet_cidr(config: TrainingConfig) -> str | None:
    """The private subnet's CIDR: the VPC's first block of the configured size (the network
    allocates the private subnet first), or None when the VPC range or mask is invalid
    (reported by the network's own check)."""
    try:
        vpc = ipaddress.IPv4Network(config.vpc_cidr, strict=True)
        return str(next(vpc.subnets(new_prefix=config.private_subnet_cidr_mask)))
    except (ValueError, TypeError):
        return None


# -- inference ----------------------------------------------------------------------------


def _check_inference(
    config: InferenceConfig,
    problems: Problems,
    stand_ins: _StandIns,
    incomplete: Collection[str],
) -> None:
    config.validate(problems)
    if "inference.ic_endpoints" not in incomplete:
        for index, spec in enumerate(config.ic_endpoints):
            _check_ic_endpoint(spec, problems, f"ic_endpoints[{index}].", stand_ins)
    if "inference.single_model_endpoints" not in incomplete:
        for index, single in enumerate(config.single_model_endpoints):
            where = f"single_model_endpoints[{index}]"
            single.props(
                _container(single.container.image, single.container.model_data_url)
            ).validate(
                problems.scoped(
                    f"{where}.",
                    fields={
                        "model_name": f"{where}.name",
                        "variant": where,
                        "data_capture.sampling_percentage": f"{where}.data_capture_percentage",
                    },
                    about=f"endpoint {single.name!r}",
                )
            )
    if "inference.multi_model_endpoints" not in incomplete:
        for index, multi in enumerate(config.multi_model_endpoints):
            multi.props(multi.image or _IMAGE, multi.models_s3_prefix or _ARTIFACTS).validate(
                problems.scoped(
                    f"multi_model_endpoints[{index}].", about=f"endpoint {multi.name!r}"
                )
            )


def _check_ic_endpoint(
    spec: IcEndpointSpec, problems: Problems, where: str, stand_ins: _StandIns
) -> None:
    spec.props().validate(problems.scoped(where, about=f"endpoint {spec.name!r}"))
    reference = EndpointReference(
        endpoint_name=spec.name,
        variant_name="AllTraffic",
        instance_type=spec.instance_type,
        execution_role=stand_ins.role(),
        min_instance_count=spec.min_instance_count,
        initial_instance_count=spec.initial_instance_count,
        max_instance_count=spec.max_instance_count,
    )
    for index, model in enumerate(spec.models):
        props = model.props(
            reference, _container(model.container.image, model.container.model_data_url)
        )
        # As the stack names them: the names of one stack's components must differ.
        name = model.component_name or model.model_name
        props.validate(
            problems.scoped(
                f"{where}models[{index}].",
                # The fit check's instance_type problems are the endpoint's, reported above.
                fields={"instance_type": None},
                about=f"model {model.model_name!r} on endpoint {spec.name!r}",
            ),
            component_name=name,
        )
        reference.component_names.add(name)
        reference.placements.append(props.demand(name))


def _container(image: str | None, model_data_url: str | None) -> ModelContainer:
    return ModelContainer(image=image or _IMAGE, model_data_url=model_data_url or _ARTIFACTS)
