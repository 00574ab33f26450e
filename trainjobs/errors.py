"""Findings and the exceptions that carry them.

A *finding* is one problem found in the user's input or in a rendered manifest.
Every finding names where it is (the path in the user's input), what is wrong
(the rule), the offending value and how to fix it. Errors are collected, never
raised one at a time, so a user sees all of them in one run.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "NO_VALUE",
    "Finding",
    "Severity",
    "SpecError",
    "TrainjobsError",
    "format_path",
]


class Severity(enum.Enum):
    """How bad a finding is. Only ``ERROR`` stops a render."""

    ERROR = "error"
    WARNING = "warning"
    ADVICE = "advice"


class _NoValue:
    """Marks a finding that has no offending value (e.g. a missing field)."""

    def __repr__(self) -> str:
        return "<none>"


NO_VALUE: Any = _NoValue()


def _as_yaml(value: Any, depth: int = 0) -> str:
    """``value`` as the user wrote it in YAML flow style (null, true, [a, b], {k: v}),
    never as a Python repr (None, True); strings keep their quotes."""
    if depth > 20:
        return "..."
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value != value:
        return ".nan"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return ".inf" if value > 0 else "-.inf"
    if isinstance(value, int | float | str):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_as_yaml(v, depth + 1) for v in value[:20]) + "]"
    if isinstance(value, dict):
        items = list(value.items())[:20]
        return "{" + ", ".join(f"{k}: {_as_yaml(v, depth + 1)}" for k, v in items) + "}"
    return type(value).__name__  # an object: its type, never its repr


def _short_repr(value: Any, limit: int = 80) -> str:
    text = _as_yaml(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_SECRET_FIELD = re.compile(
    r"(password|passwd|passphrase|secret|token|private.?key|api.?key|access.?key|credential"
    r"|requirepass|masterauth|^auth$)",
    re.I,
)
"""Field names whose value a finding never repeats: a user who writes a real password
where trainjobs expects ``password: true`` must not see it echoed into a CI log."""


# An env var's value: the path names the list entry, not the variable, so whether it is
# a secret (REDIS_PASSWORD) cannot be told from the path; such values are never shown.
_ENV_VALUE = re.compile(r"(^|\.)env\[\d+\](\.value)?$")


def _secret_field(path: str) -> bool:
    """Whether the field a path ends in (list indexes aside) has a secret's name, or is
    an env var's value."""
    if _ENV_VALUE.search(path):
        return True
    names = [p.strip("]'\"") for p in re.split(r"[.\[]", path)]
    named = [n for n in names if n and not n.isdigit()]
    return bool(named) and bool(_SECRET_FIELD.search(named[-1]))


@dataclass(frozen=True)
class Finding:
    """One problem, located in the user's input.

    Attributes:
        code: stable identifier of the rule, e.g. ``name.dns1035``; tests and
            suppressions key on it.
        path: where in the user's input, e.g. ``jobs[0].spec.tfReplicaSpecs.Worker.replicas``.
        message: the rule that is broken, in plain words.
        value: the offending value, or ``NO_VALUE`` when there is none.
        hint: how to fix it. Empty only when the message already says so.
        severity: ``ERROR`` (default) stops the render; warnings and advice do not.
        source: the file the input came from, if any.
    """

    code: str
    path: str
    message: str
    value: Any = NO_VALUE
    hint: str = ""
    severity: Severity = Severity.ERROR
    source: str = ""

    def located(self, source: str, prefix: str = "") -> Finding:
        """The same finding with a source file and a path prefix added."""
        path = self.path
        if prefix:
            path = prefix if not path else f"{prefix}.{path}" if path[0] != "[" else prefix + path
        return Finding(
            code=self.code,
            path=path,
            message=self.message,
            value=self.value,
            hint=self.hint,
            severity=self.severity,
            source=self.source or source,
        )

    def render(self) -> str:
        """One line for a terminal: ``file: path: message (got value); fix: hint``."""
        where = f"{self.source}: " if self.source else ""
        where += f"{self.path}: " if self.path else ""
        text = f"{self.severity.value}: {where}{self.message}"
        if self.value is not NO_VALUE:
            shown = "<redacted>" if _secret_field(self.path) else _short_repr(self.value)
            text += f" (got {shown})"
        if self.hint:
            text += f"; fix: {self.hint}"
        return text

    def __str__(self) -> str:
        return self.render()


class TrainjobsError(Exception):
    """Base class of every error trainjobs raises on purpose."""


@dataclass
class _FindingsError(TrainjobsError):
    findings: Sequence[Finding] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        super().__init__(self.summary())

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]

    def summary(self) -> str:
        lines = [f.render() for f in self.findings]
        count = len(self.errors)
        head = f"{count} error{'s' if count != 1 else ''} in the input"
        return "\n".join([head, *lines])


class SpecError(_FindingsError):
    """The user's input is invalid; carries every finding at once."""

    @classmethod
    def from_findings(cls, findings: Iterable[Finding]) -> SpecError:
        return cls(tuple(findings))


def format_path(parts: Iterable[str | int]) -> str:
    """Join path parts the way users write them: ``a.b[0].c``.

    Keys that are not plain identifiers (label keys with dots or slashes) are
    quoted in brackets so the path stays unambiguous.
    """
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.replace("_", "").replace("-", "").isalnum():
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return out
