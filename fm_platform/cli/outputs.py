"""Resource names from the deployed stacks' CloudFormation outputs."""

from __future__ import annotations

from dataclasses import dataclass

from botocore.exceptions import ClientError

from fm_platform.cli.context import ClientFactory
from fm_platform.cli.errors import CliError

TRAINING_STACK = "FmpTraining"
INFERENCE_STACK = "FmpInference"


def stack_outputs(clients: ClientFactory, stack_name: str) -> dict[str, str]:
    """OutputKey -> OutputValue of one stack (CloudFormation DescribeStacks)."""
    try:
        response = clients.client("cloudformation").describe_stacks(StackName=stack_name)
    except ClientError as exc:
        error = exc.response.get("Error", {})
        if error.get("Code") == "ValidationError" and "does not exist" in error.get("Message", ""):
            where = f" in region {clients.region}" if clients.region else ""
            raise CliError(
                f"stack {stack_name} does not exist{where}: deploy it (cdk deploy), "
                "check --region/--profile, or name the stack with --stack"
            ) from exc
        raise
    stacks = response.get("Stacks", [])
    if not stacks:
        raise CliError(f"stack {stack_name} not found: check --stack and --region")
    return {o["OutputKey"]: o.get("OutputValue", "") for o in stacks[0].get("Outputs", [])}


def require_output(outputs: dict[str, str], stack_name: str, key: str, hint: str) -> str:
    """The value of output `key`, or a CliError naming the stack, the key and `hint`."""
    value = outputs.get(key, "").strip()
    if not value:
        raise CliError(f"stack {stack_name} has no output {key}: {hint}")
    return value


@dataclass(frozen=True)
class ClusterRef:
    """A HyperPod cluster and what the training stack says about it.

    `arn`, `controller_group` and `fsx_mount_path` are None when the cluster was named
    with --cluster (they are then looked up on the cluster itself where needed).
    """

    name: str
    arn: str | None = None
    controller_group: str | None = None
    fsx_mount_path: str | None = None


def resolve_cluster(clients: ClientFactory, cluster: str | None, stack: str) -> ClusterRef:
    """The cluster named by --cluster, else the one in the training stack's outputs."""
    if cluster:
        return ClusterRef(name=cluster)
    outputs = stack_outputs(clients, stack)
    hint = "pass --cluster NAME"
    return ClusterRef(
        name=require_output(outputs, stack, "ClusterName", hint),
        arn=outputs.get("ClusterArn") or None,
        controller_group=outputs.get("ControllerGroupName") or None,
        fsx_mount_path=outputs.get("FsxMountPath") or None,
    )


def resolve_endpoint(clients: ClientFactory, endpoint: str | None, stack: str) -> str:
    """The endpoint named by --endpoint, else the only one in the inference stack's outputs."""
    if endpoint:
        return endpoint
    outputs = stack_outputs(clients, stack)
    raw = require_output(outputs, stack, "EndpointNames", "pass --endpoint NAME")
    names = [name.strip() for name in raw.split(",") if name.strip()]
    if len(names) > 1:
        raise CliError(
            f"stack {stack} has {len(names)} endpoints ({', '.join(names)}): "
            "choose one with --endpoint NAME"
        )
    if not names:
        raise CliError(f"stack {stack} lists no endpoint in EndpointNames: pass --endpoint NAME")
    return names[0]
