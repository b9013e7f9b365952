"""What every command gets: AWS clients, the output stream and the output format."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Protocol, TextIO

from fm_platform.cli.tables import to_json

_CLIENT_OPTIONS = {"retries": {"mode": "standard", "max_attempts": 5}, "user_agent_extra": "fmp"}


class ClientFactory(Protocol):
    """Hands out AWS clients; tests substitute one returning stubbed clients."""

    region: str | None
    profile: str | None

    def client(self, service: str) -> Any: ...


class SessionClients:
    """Clients from one boto3 session, created on first use and reused.

    `profile` defaults to boto3's resolution; `region` to AWS_REGION, then boto3's
    (AWS_DEFAULT_REGION, then the profile's region). botocore reads AWS_DEFAULT_REGION only;
    the AWS SDKs and Tools Reference Guide, "AWS Region", names AWS_REGION first.
    """

    def __init__(
        self,
        *,
        region: str | None = None,
        profile: str | None = None,
        environ: Mapping[str, str] = os.environ,
    ) -> None:
        self.region = region or environ.get("AWS_REGION") or None
        self.profile = profile
        self._session: Any = None
        self._clients: dict[str, Any] = {}

    def client(self, service: str) -> Any:
        # boto3 is imported on the first client: commands that call no AWS API (`fmp plan`,
        # `fmp job`) start without it (about 0.25 s).
        import boto3
        from botocore.config import Config

        if service not in self._clients:
            if self._session is None:
                self._session = boto3.Session(profile_name=self.profile, region_name=self.region)
            self._clients[service] = self._session.client(service, config=Config(**_CLIENT_OPTIONS))
        return self._clients[service]


@dataclass
class Context:
    """Per-invocation state handed to every command."""

    clients: ClientFactory
    as_json: bool = False
    out: TextIO = field(default_factory=lambda: sys.stdout)

    def emit(self, data: Any, render: Callable[[Any], str]) -> None:
        """Print `data` as JSON with --json, else as `render(data)`."""
        print(to_json(data) if self.as_json else render(data), file=self.out)

    def binary_out(self) -> BinaryIO:
        """The byte stream under `out`, for raw response bodies (text written so far first)."""
        self.out.flush()
        return self.out.buffer
