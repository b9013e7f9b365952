"""Rebuild fm_platform/containers/images.json from the SageMaker Python SDK's image table.

The SDK (aws/sagemaker-python-sdk, Apache-2.0) lists every Deep Learning Container per
framework, version and region in ``image_uri_config/*.json`` (under
``sagemaker-core/src/sagemaker/core/`` in its 3.x tree, ``src/sagemaker/`` before). This
script reads a checkout of it, takes the newest version of each family's framework entry
and writes the project's own data file: per family and hardware kind (gpu, neuron, cpu)
the repository, the tag (formatted as the SDK's ``_format_tag`` does: tag prefix,
processor, Python version, container version) and the publishing account per region.
Hugging Face images (TGI, TEI, the transformers toolkit) come from other accounts than
763104351884 in many regions; the table keeps each region's own account.

    git clone --depth 1 https://github.com/aws/sagemaker-python-sdk /tmp/sdk
    python scripts/regenerate_container_images.py /tmp/sdk

``--output FILE`` writes elsewhere than the package's data file.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

OUTPUT = Path(__file__).resolve().parents[1] / "fm_platform" / "containers" / "images.json"
_CONFIG_DIRS = (
    "sagemaker-core/src/sagemaker/core/image_uri_config",
    "src/sagemaker/image_uri_config",
)

#: family -> (description, {hardware kind: (SDK config file, processor, version or None)}).
#: ``None`` takes the newest version of the file.
FAMILIES: dict[str, tuple[str, dict[str, tuple[str, str, str | None]]]] = {
    "lmi": (
        "Large Model Inference (DJL Serving with vLLM; transformers-neuronx on Neuron)",
        {"gpu": ("djl-lmi", "gpu", None), "neuron": ("djl-neuronx", "neuron", None)},
    ),
    "tgi": (
        "Hugging Face Text Generation Inference",
        {"gpu": ("huggingface-llm", "gpu", None)},
    ),
    "tei": (
        "Hugging Face Text Embeddings Inference (embedding, reranking, sequence classification)",
        {"gpu": ("huggingface-tei", "gpu", None), "cpu": ("huggingface-tei-cpu", "cpu", None)},
    ),
    "pytorch": (
        "PyTorch inference with TorchServe (multi-model endpoints, custom handlers)",
        {"gpu": ("pytorch", "gpu", None), "cpu": ("pytorch", "cpu", None)},
    ),
    "huggingface": (
        "Hugging Face inference toolkit (transformers pipelines: classification, "
        "automatic-speech-recognition)",
        {"gpu": ("huggingface", "gpu", None), "cpu": ("huggingface", "cpu", None)},
    ),
    "stabilityai": (
        "Stability AI diffusion inference (SDXL)",
        {"gpu": ("stabilityai", "gpu", None)},
    ),
}


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in version.split("."))


def _newest(versions: dict[str, Any]) -> str:
    return max(versions, key=_version_key)


def _image(config: dict[str, Any], processor: str, version: str | None) -> dict[str, Any]:
    scope = config.get("inference", config)
    versions = scope["versions"]
    version = version or _newest(versions)
    entry = versions[version]
    if "registries" not in entry:  # huggingface: one level per base framework
        base = _newest({k: v for k, v in entry.items() if k.startswith("pytorch")})
        tag_prefix = f"{base.removeprefix('pytorch')}-transformers{version}"
        entry = entry[base]
    else:
        tag_prefix = entry.get("tag_prefix", version)
    if "tag_prefix" in entry and "container_version" not in entry:
        tag = entry["tag_prefix"]  # DJL images: the prefix is the whole tag
    else:  # the SDK's _format_tag: prefix, processor, Python version, container version
        py = (entry.get("py_versions") or [None])[-1]
        container = (entry.get("container_version") or {}).get(processor)
        tag = "-".join(p for p in (tag_prefix, processor, py, container) if p)
    return {
        "repository": entry["repository"],
        "tag": tag,
        "version": version,
        "accounts": dict(sorted(entry["registries"].items())),
    }


def build(sdk: Path, commit: str | None = None) -> dict[str, Any]:
    base = next((sdk / d for d in _CONFIG_DIRS if (sdk / d).is_dir()), None)
    if base is None:
        raise SystemExit(f"{sdk}: no image_uri_config directory ({' or '.join(_CONFIG_DIRS)})")
    if commit is None:
        commit = subprocess.run(
            ["git", "-C", str(sdk), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
    families = {}
    for name, (description, kinds) in FAMILIES.items():
        images = {}
        for kind, (file, processor, version) in kinds.items():
            config = json.loads((base / f"{file}.json").read_text())
            images[kind] = {"sdk_config": file, **_image(config, processor, version)}
        families[name] = {"description": description, "images": images}
    return {
        "source": "aws/sagemaker-python-sdk "
        f"{base.relative_to(sdk)}/*.json (Apache-2.0), commit {commit or 'unknown'}",
        "retrieved": datetime.date.today().isoformat(),
        "families": families,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sdk", type=Path, help="a checkout of aws/sagemaker-python-sdk")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--commit", help="the checkout's commit, when it is not a git tree")
    args = parser.parse_args(argv)
    args.output.write_text(json.dumps(build(args.sdk, args.commit), indent=1) + "\n")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
