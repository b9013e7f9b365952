"""Validation rules over plain values, shared by the constructs and the app's
configuration. Pure Python: nothing here imports aws-cdk-lib.

Every rule records ``(field, value, allowed)`` into a :class:`Problems` and skips ``None``
(a value that is unset, or known only at deploy time: constructs pass ``None`` for CDK
tokens). Constructs call the rules with their props' field names; the configuration check
calls the same rules through a view that puts the configuration key in front
(``inference.ic_endpoints[0].``). Modules by subject: :mod:`~fm_platform.rules.network`,
:mod:`~fm_platform.rules.filesystem`, :mod:`~fm_platform.rules.instance_groups`,
:mod:`~fm_platform.rules.lifecycle`, :mod:`~fm_platform.rules.hosting`,
:mod:`~fm_platform.rules.components`, :mod:`~fm_platform.rules.capacity`,
:mod:`~fm_platform.rules.scaling`, :mod:`~fm_platform.rules.variants`,
:mod:`~fm_platform.rules.inference`, :mod:`~fm_platform.rules.asynchronous`,
:mod:`~fm_platform.rules.variant_features`, :mod:`~fm_platform.rules.placement`,
:mod:`~fm_platform.rules.pools`, :mod:`~fm_platform.rules.serverless`; which changes
replace an endpoint: :mod:`~fm_platform.rules.replacement`; limits and
enums come from botocore (:mod:`~fm_platform.rules.sagemaker_model`), Python types from annotations,
for options built in Python and read from mappings (:mod:`~fm_platform.rules.types`).
"""

from fm_platform.rules.problems import (
    Problems,
    ValidationError,
    closest,
    describe_choices,
    did_you_mean,
)

__all__ = ["Problems", "ValidationError", "closest", "describe_choices", "did_you_mean"]
