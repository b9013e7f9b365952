"""Deprecated: the instance facts moved to :mod:`fm_platform.hardware` and botocore's rules
to :mod:`fm_platform.rules.sagemaker_model`; the old module paths still import."""

from __future__ import annotations

import importlib
import sys
import warnings

_MOVED = {
    "instances": "fm_platform.hardware.instances",
    "prices": "fm_platform.hardware.prices",
    "regenerate": "fm_platform.hardware.regenerate",
    "regions": "fm_platform.hardware.regions",
    "sagemaker_model": "fm_platform.rules.sagemaker_model",
}

warnings.warn(
    "fm_platform.specs is deprecated: use fm_platform.hardware (instance facts, prices) and "
    "fm_platform.rules.sagemaker_model (botocore's limits)",
    DeprecationWarning,
    stacklevel=2,
)
for _name, _target in _MOVED.items():
    sys.modules[f"{__name__}.{_name}"] = importlib.import_module(_target)
