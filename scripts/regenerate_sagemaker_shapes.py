"""Refresh fm_platform/rules/data/sagemaker_shapes.json from botocore's SageMaker model.

The package validates names, enums and limits against the shapes of the botocore release
pinned in requirements.txt, read from this extract: the same rules in any environment
(whatever botocore an app installs) and no botocore import when ``fmp plan`` starts.
``tests/test_sagemaker_shapes.py`` fails when the pinned botocore disagrees with the file.

    python scripts/regenerate_sagemaker_shapes.py

Run from a checkout of the project after changing the botocore pin.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import botocore
import botocore.loaders

DATA_FILE = (
    Path(__file__).resolve().parents[1] / "fm_platform" / "rules" / "data" / "sagemaker_shapes.json"
)
_CONSTRAINTS = ("enum", "min", "max", "pattern")


def extract(service: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every shape's constraints and, for a structure, its members' shape names (the rest
    of the model, documentation included, is left out)."""
    shapes: dict[str, dict[str, Any]] = {}
    for name, shape in sorted(service["shapes"].items()):
        kept = {key: shape[key] for key in _CONSTRAINTS if key in shape}
        if shape["type"] == "structure":
            kept["members"] = {member: spec["shape"] for member, spec in shape["members"].items()}
        shapes[name] = kept
    return shapes


def current() -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The header and shapes of the installed botocore's SageMaker model."""
    service = botocore.loaders.Loader().load_service_model("sagemaker", "service-2")
    header = {
        "source": "botocore's SageMaker service model (botocore/data/sagemaker/*/service-2)",
        "botocore": botocore.__version__,
        "api_version": service["metadata"]["apiVersion"],
    }
    return header, extract(service)


def render(header: dict[str, Any], shapes: dict[str, dict[str, Any]]) -> str:
    """The file's text: the header, then one shape per line (reviewable diffs)."""
    lines = [f"  {json.dumps(key)}: {json.dumps(value)}," for key, value in header.items()]
    body = ",\n".join(
        f"    {json.dumps(name)}: {json.dumps(shape, sort_keys=True)}"
        for name, shape in shapes.items()
    )
    return "{\n" + "\n".join(lines) + '\n  "shapes": {\n' + body + "\n  }\n}\n"


def main() -> int:
    header, shapes = current()
    DATA_FILE.write_text(render(header, shapes))
    print(f"{len(shapes)} shapes of botocore {header['botocore']} written to {DATA_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
