"""`fmp endpoint scale`: set a model's copies or a variant's instances by hand."""

from __future__ import annotations

import argparse
from typing import Any

from fm_platform.cli.components import component_summaries, resolve_component
from fm_platform.cli.context import Context
from fm_platform.cli.errors import CliError
from fm_platform.cli.limits import check_options
from fm_platform.cli.parsing import add_command
from fm_platform.cli.target import endpoint_name

COPIES_OPERATION = "UpdateInferenceComponentRuntimeConfig"
INSTANCES_OPERATION = "UpdateEndpointWeightsAndCapacities"


def _check(args: argparse.Namespace) -> None:
    if args.copies is not None:
        if not args.model:
            raise CliError("--copies needs --model NAME (the model or inference component)")
        if args.variant:
            raise CliError("--variant goes with --instances; --copies needs --model NAME")
        check_options(
            "sagemaker",
            COPIES_OPERATION,
            [("--copies", "DesiredRuntimeConfig.CopyCount", args.copies)],
        )
    else:
        if args.model:
            raise CliError("--model goes with --copies; --instances scales a variant (--variant)")
        check_options(
            "sagemaker",
            INSTANCES_OPERATION,
            [
                ("--instances", "DesiredWeightsAndCapacities.DesiredInstanceCount", args.instances),
                ("--variant", "DesiredWeightsAndCapacities.VariantName", args.variant),
            ],
        )


def _scale_copies(ctx: Context, endpoint: str, args: argparse.Namespace) -> str:
    names = [s["InferenceComponentName"] for s in component_summaries(ctx, endpoint)]
    if not names:
        raise CliError(
            f"endpoint {endpoint} has no inference components: scale its instances with "
            "--instances N"
        )
    component = resolve_component(names, args.model, args.stack, endpoint)
    sagemaker = ctx.clients.client("sagemaker")
    described = sagemaker.describe_inference_component(InferenceComponentName=component)
    before = described.get("RuntimeConfig", {}).get("DesiredCopyCount")
    sagemaker.update_inference_component_runtime_config(
        InferenceComponentName=component, DesiredRuntimeConfig={"CopyCount": args.copies}
    )
    return f"{component} on {endpoint}: desired copies {before} -> {args.copies}"


def _scale_instances(ctx: Context, endpoint: str, args: argparse.Namespace) -> str:
    sagemaker = ctx.clients.client("sagemaker")
    variants = {
        v["VariantName"]: v
        for v in sagemaker.describe_endpoint(EndpointName=endpoint).get("ProductionVariants", [])
    }
    listed = ", ".join(sorted(variants)) or "none"
    if args.variant and args.variant not in variants:
        raise CliError(
            f"endpoint {endpoint} has no variant {args.variant} (its variants: {listed})"
        )
    if not args.variant and len(variants) != 1:
        raise CliError(
            f"endpoint {endpoint} has {len(variants)} variants ({listed}): choose one with "
            "--variant NAME"
        )
    variant = args.variant or next(iter(variants))
    before = variants[variant].get("DesiredInstanceCount")
    sagemaker.update_endpoint_weights_and_capacities(
        EndpointName=endpoint,
        DesiredWeightsAndCapacities=[
            {"VariantName": variant, "DesiredInstanceCount": args.instances}
        ],
    )
    return f"variant {variant} of {endpoint}: desired instances {before} -> {args.instances}"


def scale(ctx: Context, args: argparse.Namespace) -> int:
    """Ask SageMaker for a new copy or instance count; prints the change it asked for."""
    _check(args)
    endpoint = endpoint_name(ctx, args)
    if args.copies is not None:
        change = _scale_copies(ctx, endpoint, args)
    else:
        change = _scale_instances(ctx, endpoint, args)
    print(f"{change} (requested; follow with `fmp endpoint status {endpoint}`)", file=ctx.out)
    return 0


def add_command_to(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register `fmp endpoint scale`."""
    parser = add_command(
        commands,
        "scale",
        summary="set a model's copies or a variant's instances",
        example="fmp endpoint scale shared-g5 --model llama-7b-chat --copies 4",
        parents=parents,
        description="--model NAME --copies N sets the desired copies of the model's inference\n"
        "component (UpdateInferenceComponentRuntimeConfig); NAME is the model name or the\n"
        "component name. --instances N [--variant V] sets a variant's desired instances\n"
        "(UpdateEndpointWeightsAndCapacities; --variant may be left out when the endpoint has\n"
        "one). Where the stack configured autoscaling, its policies go on changing the count\n"
        "from the value set here.",
    )
    count = parser.add_mutually_exclusive_group(required=True)
    count.add_argument("--copies", type=int, help="desired copies of the model (with --model)")
    count.add_argument("--instances", type=int, help="desired instances of the variant")
    parser.add_argument("--model", help="model name or inference component name (with --copies)")
    parser.add_argument("--variant", help="variant name (with --instances; default: the only one)")
    parser.set_defaults(handler=scale)
