"""Refresh fm_platform/hardware/instance_specs.json from EC2 DescribeInstanceTypes.

SageMaker's ``ml.X`` instance types run on EC2 type ``X``. This script asks EC2 (paginated)
for the types SageMaker offers (botocore enums ``ProductionVariantInstanceType`` and
``ClusterInstanceType``) and writes their figures into the data file, in the same record
structure, with the source, region and date recorded. Types EC2 does not describe in the
region keep their existing records.

    python scripts/regenerate_instance_specs.py --region us-east-1     # every SageMaker type
    python scripts/regenerate_instance_specs.py --add ml.g6e.2xlarge   # one type

Run from a checkout of the project (a maintenance tool: the package does not ship it).
Needs credentials allowing ec2:DescribeInstanceTypes. ``--output FILE`` writes elsewhere
than the checkout's data file (e.g. for an installed package); an app can also add or
override single types with :func:`fm_platform.register_instance_type`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import boto3

from fm_platform.rules.sagemaker_model import enum_values

DATA_FILE = Path(__file__).resolve().parents[1] / "fm_platform" / "hardware" / "instance_specs.json"
SOURCE_ID = "ec2-describe-instance-types"
_APIS = {"hosting": "ProductionVariantInstanceType", "hyperpod": "ClusterInstanceType"}


def sagemaker_types() -> dict[str, list[str]]:
    """Every ``ml.*`` type SageMaker offers, with the APIs (hosting, hyperpod) offering it."""
    offered: dict[str, list[str]] = {}
    for api, shape in _APIS.items():
        for instance_type in enum_values(shape):
            offered.setdefault(instance_type, []).append(api)
    return offered


def _accelerator(info: dict[str, Any]) -> dict[str, Any]:
    gpus = info.get("GpuInfo", {}).get("Gpus", [])
    neurons = info.get("NeuronInfo", {}).get("NeuronDevices", [])
    if gpus:
        device = gpus[0]
        count = sum(g["Count"] for g in gpus)
        each = device.get("MemoryInfo", {}).get("SizeInMiB")
        total = info["GpuInfo"].get("TotalGpuMemoryInMiB") or (each or 0) * count
        kind = "nvidia-gpu" if device.get("Manufacturer", "").upper() == "NVIDIA" else "gpu"
        return {
            "accelerator": kind,
            "model": device["Name"],
            "count": count,
            "each": each,
            "total": total,
            "cores": None,
        }
    if neurons:
        device = neurons[0]
        count = sum(n["Count"] for n in neurons)
        each = device.get("MemoryInfo", {}).get("SizeInMiB")
        total = info["NeuronInfo"].get("TotalNeuronDeviceMemoryInMiB") or (each or 0) * count
        kind = "inferentia" if "inferentia" in device["Name"].lower() else "trainium"
        cores = sum(n["Count"] * n.get("CoreInfo", {}).get("Count", 0) for n in neurons)
        return {
            "accelerator": kind,
            "model": device["Name"],
            "count": count,
            "each": each,
            "total": total,
            "cores": cores or None,
        }
    return {
        "accelerator": "none",
        "model": None,
        "count": 0,
        "each": None,
        "total": 0,
        "cores": None,
    }


def to_record(info: dict[str, Any], apis: Sequence[str]) -> dict[str, Any]:
    """The data-file record for one DescribeInstanceTypes entry."""
    accelerator = _accelerator(info)
    network = info.get("NetworkInfo", {})
    cards = network.get("NetworkCards")
    return {
        "vcpus": info["VCpuInfo"]["DefaultVCpus"],
        "memory_mib": info["MemoryInfo"]["SizeInMiB"],
        "accelerator": accelerator["accelerator"],
        "accelerator_model": accelerator["model"],
        "accelerator_count": accelerator["count"],
        "accelerator_memory_mib_each": accelerator["each"],
        "accelerator_memory_mib_total": accelerator["total"],
        "neuron_cores": accelerator["cores"],
        "instance_storage_present": bool(info.get("InstanceStorageSupported", False)),
        "instance_storage_gb": info.get("InstanceStorageInfo", {}).get("TotalSizeInGB", 0),
        "efa_interfaces": network.get("EfaInfo", {}).get("MaximumEfaInterfaces", 0),
        "network_cards": len(cards) if cards else network.get("MaximumNetworkCards"),
        "sagemaker_apis": list(apis),
        "sources": [SOURCE_ID],
    }


def fetch_records(client: Any, offered: dict[str, list[str]], only: Iterable[str] = ()) -> dict:
    """Records for the ``ml.*`` types in ``offered`` (or just ``only``) that EC2 describes."""
    wanted = set(only) or set(offered)
    paginator = client.get_paginator("describe_instance_types")
    request = {"InstanceTypes": sorted(t.removeprefix("ml.") for t in only)} if only else {}
    records = {}
    for page in paginator.paginate(**request):
        for info in page["InstanceTypes"]:
            name = f"ml.{info['InstanceType']}"
            if name in wanted:
                records[name] = to_record(info, offered.get(name, ["hosting"]))
    return records


def update(data: dict[str, Any], records: dict, region: str, today: str) -> dict[str, Any]:
    """``data`` with ``records`` merged in and the EC2 source recorded."""
    source = {
        "id": SOURCE_ID,
        "api": "ec2:DescribeInstanceTypes",
        "region": region,
        "retrieved": today,
        "what": "vCPUs, memory, GPU/Neuron devices and memory, instance store, EFA and "
        "network cards per EC2 type, written by python scripts/regenerate_instance_specs.py.",
    }
    sources = [s for s in data.get("source", []) if s.get("id") != SOURCE_ID] + [source]
    instance_types = {**data.get("instance_types", {}), **records}
    return {
        **data,
        "source": sources,
        "generated": today,
        "instance_types": dict(sorted(instance_types.items())),
    }


def format_data(data: dict[str, Any]) -> str:
    """The data file's text: indented, with one line per instance type (sorted), so that a
    regeneration's diff shows one line per changed type."""
    head = {key: value for key, value in data.items() if key != "instance_types"}
    text = json.dumps({**head, "instance_types": {}}, indent=2)
    records = ",\n".join(
        f"    {json.dumps(name)}: {json.dumps(record)}"
        for name, record in sorted(data["instance_types"].items())
    )
    return text[: -len("{}\n}")] + "{\n" + records + "\n  }\n}\n"


def main(argv: Sequence[str] | None = None, client: Any = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--region", default="us-east-1", help="EC2 region to ask")
    parser.add_argument(
        "--add",
        action="append",
        default=[],
        metavar="TYPE",
        help="refresh or add only this ml.* type (repeatable)",
    )
    parser.add_argument("--output", type=Path, default=DATA_FILE, help="data file to update")
    args = parser.parse_args(argv)
    bad = [t for t in args.add if not t.startswith("ml.")]
    if bad:
        parser.error(f"--add takes ml.* instance types, not {', '.join(bad)}")
    client = client or boto3.client("ec2", region_name=args.region)
    records = fetch_records(client, sagemaker_types(), args.add)
    missing = sorted(set(args.add) - set(records))
    if missing:
        print(f"EC2 in {args.region} does not describe: {', '.join(missing)}", file=sys.stderr)
    data = json.loads(args.output.read_text()) if args.output.exists() else {}
    today = datetime.date.today().isoformat()
    args.output.write_text(format_data(update(data, records, args.region, today)))
    print(f"wrote {len(records)} instance types to {args.output}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
