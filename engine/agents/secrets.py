"""Which SDK credentials are present, and keeping every secret out of recorded results.

Only *names* of credential variables are ever reported; values are collected solely so they
can be replaced by ``[REDACTED]`` in anything a backend returns (text, usage, error strings),
because results are appended to a log that is meant to be shared and audited.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from engine.harness.environment import MIN_SECRET_LEN, REDACTED, secret_values  # the one rule for secrets

#: Variables that authenticate the Claude CLI directly.
CREDENTIAL_VARS: tuple[str, ...] = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
#: Flags that route the CLI through a cloud provider that brings its own credentials.
PROVIDER_FLAGS: tuple[str, ...] = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")

# Shapes of secrets that might appear without coming from our environment (echoed by a tool),
# the password of a URL's user included (postgresql://user:password@host/db in any variable).
_SECRET_SHAPES = (
    re.compile(r"sk-ant-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"([a-z][a-z0-9+.\-]*://[^\s:/@]+:)[^\s@/]+(?=@)", re.IGNORECASE),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{16,}"),
    re.compile(r"(?i)(x-api-key[\"']?\s*[:=]\s*[\"']?)[A-Za-z0-9._\-]{8,}"),
)


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() not in {"0", "false", "no", "off", ""}


def detect_credentials(env: Mapping[str, str]) -> str | None:
    """Name the credential the CLI would use, or None. Never returns a value."""
    for name in CREDENTIAL_VARS:
        if (env.get(name) or "").strip():
            return name
    for flag in PROVIDER_FLAGS:
        if _truthy(env.get(flag)):
            return flag
    return None


class Redactor:
    """Replaces known secret values and secret-shaped strings with ``[REDACTED]``."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._values = [v for v in dict.fromkeys(values) if v and len(v) >= MIN_SECRET_LEN]
        self._values.sort(key=len, reverse=True)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Redactor:
        return cls(secret_values(env))

    def text(self, value: str) -> str:
        for secret in self._values:
            if secret in value:
                value = value.replace(secret, REDACTED)
        for shape in _SECRET_SHAPES:
            value = shape.sub(lambda m: (m.group(1) if m.groups() else "") + REDACTED, value)
        return value

    def value(self, value: Any) -> Any:
        """Redact recursively inside dicts and lists (keys too: they can carry data)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(v) for v in value]
        return value
