"""Turn AWS and usage failures into one line a user can act on."""

from __future__ import annotations

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    ParamValidationError,
    ProfileNotFound,
)


class CliError(Exception):
    """A failure the user can fix; its message is printed as is, without a traceback."""


_ACCESS_DENIED = {"AccessDenied", "AccessDeniedException", "UnauthorizedOperation"}
_THROTTLED = {
    "Throttling",
    "ThrottlingException",
    "ThrottledException",
    "TooManyRequestsException",
    "RequestLimitExceeded",
}
_NOT_FOUND = {"ResourceNotFound", "ResourceNotFoundException"}
_EXPIRED = {"ExpiredToken", "ExpiredTokenException", "RequestExpired"}


def describe_error(exc: BaseException) -> str | None:
    """One line explaining `exc` and what to do, or None when it is not a known failure."""
    if isinstance(exc, CliError):
        return str(exc)
    if isinstance(exc, NoCredentialsError):
        return (
            "no AWS credentials found: run `aws configure` or `aws sso login`, "
            "set AWS_PROFILE, or pass --profile"
        )
    if isinstance(exc, NoRegionError):
        return "no AWS region set: pass --region or set AWS_REGION (or a region in your profile)"
    if isinstance(exc, ProfileNotFound):
        return f"{exc}: check --profile or AWS_PROFILE against ~/.aws/config"
    if isinstance(exc, EndpointConnectionError):
        return f"{exc}: check your network connection and --region"
    if isinstance(exc, ClientError):
        return _describe_client_error(exc)
    if isinstance(exc, ParamValidationError):
        problems = "; ".join(str(exc).splitlines()[1:])
        return f"the request does not fit botocore's model of the API: {problems}"
    if isinstance(exc, BotoCoreError):
        return str(exc)
    return None


def _describe_client_error(exc: ClientError) -> str:
    error = exc.response.get("Error", {})
    code = error.get("Code", "")
    message = error.get("Message", "").strip() or code
    operation = exc.operation_name
    if code in _ACCESS_DENIED:
        return (
            f"access denied calling {operation}: {message}; "
            f"use an identity allowed to call {operation} (--profile) or ask for the permission"
        )
    if code in _THROTTLED:
        return (
            f"AWS throttled {operation}: {message}; wait a moment and retry "
            "(AWS_MAX_ATTEMPTS and AWS_RETRY_MODE=adaptive allow more retries)"
        )
    if code in _NOT_FOUND:
        return f"not found ({operation}): {message}; check the name, --region and --profile"
    if code in _EXPIRED:
        return f"AWS credentials expired ({operation}): refresh them (e.g. `aws sso login`)"
    return f"{operation} failed: {code}: {message}"
