"""Rules of the Lambda functions the stacks configure.

Source: ``ReservedConcurrentExecutions`` is a whole number from 0 (botocore's Lambda
``PutFunctionConcurrency``), and a function reserved 0 is never invoked (AWS Lambda
Developer Guide, "Configuring reserved concurrency for a function"): a custom resource
function that CloudFormation cannot invoke fails the stack operation, so 0 is refused.
"""

from __future__ import annotations

from fm_platform.rules.problems import Problems


def check_reserved_concurrency(problems: Problems, field: str, value: int | None) -> None:
    """At least 1 concurrent execution (0 would stop every invocation)."""
    if value is not None and value < 1:
        problems.add(
            field,
            value,
            "must be at least 1 (0 stops every invocation, and the stack operation that "
            "calls the function fails); leave it unset to reserve none",
        )
