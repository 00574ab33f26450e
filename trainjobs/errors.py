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
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = [
    "NO_VALUE",
    "Finding",
    "Rule",
    "Severity",
    "SpecError",
    "Stage",
    "TrainjobsError",
    "format_path",
]


class Severity(enum.Enum):
    """How bad a finding is. Only ``ERROR`` stops a render."""

    ERROR = "error"
    WARNING = "warning"
    ADVICE = "advice"


class Stage(enum.Enum):
    """Which part of a real cluster would refuse (or act on) what a finding reports.

    It matters when the problem shows: a webhook, CRD schema, API server or Pod
    Security refusal makes ``kubectl apply`` (or ``pulumi up``) fail at once; a
    controller rule lets the job be created and fail (or be ignored) later; a
    scheduler problem leaves pods Pending; a trainjobs rule is none of the cluster's.
    """

    WEBHOOK = "webhook"
    """The operator's validating admission webhook: the object is refused at apply."""
    CRD_SCHEMA = "crd-schema"
    """The CustomResourceDefinition's openAPIV3Schema: refused at apply."""
    API_SERVER = "api-server"
    """The API server's own validation of a built-in kind (Pod, Service, names)."""
    POD_SECURITY = "pod-security"
    """The PodSecurity admission plugin, at the namespace's enforced level."""
    CONTROLLER = "controller"
    """The operator's controller: the object is created, then the job fails or is ignored."""
    SCHEDULER = "scheduler"
    """The scheduler or the node autoscaler: nothing is refused, the pods stay Pending."""
    TRAINJOBS = "trainjobs"
    """A rule of trainjobs itself (limits, references, advice), not of the cluster."""

    def says(self, by: str, severity: Severity) -> str:
        """A short phrase for people: who on a real cluster acts on the finding.

        ``by`` names that part (``Training Operator v1.9.4``, ``restricted``, ``Pod
        validation``); an error is "rejected by …", a warning or advice "seen by …".
        """
        error = severity is Severity.ERROR
        verb = "rejected by" if error else "seen by"
        detail = f" ({by})" if by else ""
        if self is Stage.WEBHOOK:
            return f"{verb} the {by} validating webhook" if by else f"{verb} a validating webhook"
        if self is Stage.CRD_SCHEMA:
            return f"{verb} the CRD schema ({by or 'openAPIV3Schema'})"
        if self is Stage.API_SERVER:
            return f"{verb} the API server{detail}"
        if self is Stage.POD_SECURITY:
            return f"{verb} Pod Security admission{detail}"
        if self is Stage.CONTROLLER:
            who = f"the {by} controller" if by else "the operator's controller"
            if error:
                return f"{who} fails the job (no webhook checks this)"
            return f"seen by {who} (no webhook checks this)"
        if self is Stage.SCHEDULER:
            return f"not refused: the pods stay Pending{detail}"
        return f"trainjobs (not a cluster rule: {by})" if by else "trainjobs (not a cluster rule)"


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
        stage: which part of a real cluster would refuse it (:class:`Stage`); None
            (default) until the check pipeline attributes it.
        stage_by: who that is, e.g. ``Training Operator v1.9.4`` for a webhook or
            controller, ``restricted`` for Pod Security; empty by default.
    """

    code: str
    path: str
    message: str
    value: Any = NO_VALUE
    hint: str = ""
    severity: Severity = Severity.ERROR
    source: str = ""
    stage: Stage | None = None
    stage_by: str = ""

    def located(self, source: str, prefix: str = "") -> Finding:
        """The same finding with a source file and a path prefix added."""
        path = self.path
        if prefix:
            path = prefix if not path else f"{prefix}.{path}" if path[0] != "[" else prefix + path
        return replace(self, path=path, source=self.source or source)

    def staged(self, stage: Stage, by: str = "") -> Finding:
        """The same finding attributed to ``stage`` (``by`` names who, see ``stage_by``)."""
        return replace(self, stage=stage, stage_by=by)

    @property
    def rejected_by(self) -> str:
        """Who on a real cluster refuses or acts on it, in a short phrase; empty when
        the finding has no stage."""
        return self.stage.says(self.stage_by, self.severity) if self.stage else ""

    def shown_value(self) -> str | None:
        """The offending value as a finding shows it (YAML flow style, shortened;
        ``<redacted>`` in a secret's field), or None when there is none."""
        if self.value is NO_VALUE:
            return None
        return "<redacted>" if _secret_field(self.path) else _short_repr(self.value)

    def as_json(self) -> dict[str, Any]:
        """The finding as a JSON object (``trainjobs check --output json``): severity,
        code, source, path, message, value (as shown, or null), hint, and stage
        ``{name, by, says}`` (null when none was attributed)."""
        stage = None
        if self.stage is not None:
            stage = {"name": self.stage.value, "by": self.stage_by, "says": self.rejected_by}
        return {
            "severity": self.severity.value,
            "code": self.code,
            "source": self.source,
            "path": self.path,
            "message": self.message,
            "value": self.shown_value(),
            "hint": self.hint,
            "stage": stage,
        }

    def render(self, *, with_stage: bool = False) -> str:
        """One line for a terminal: ``file: path: message (got value); fix: hint``, and
        with ``with_stage`` the stage that refuses it: `` [rejected by …]``."""
        where = f"{self.source}: " if self.source else ""
        where += f"{self.path}: " if self.path else ""
        text = f"{self.severity.value}: {where}{self.message}"
        shown = self.shown_value()
        if shown is not None:
            text += f" (got {shown})"
        if self.hint:
            text += f"; fix: {self.hint}"
        if with_stage and self.stage is not None:
            text += f" [{self.rejected_by}]"
        return text

    def __str__(self) -> str:
        return self.render()


@dataclass(frozen=True)
class Rule:
    """A rule trainjobs checks, declared once beside the code that checks it: its stable
    code and its message and fix as ``str.format`` templates. A module declares its rules
    as constants and each place that finds a breach says only where, the value and the
    facts the templates name, so one rule reads the same wherever it is found.

    Attributes:
        code: the findings' ``code``, e.g. ``trainjob.patch_job``.
        message: the rule in plain words, a template over the facts given to :meth:`at`.
        hint: how to fix it, a template too; empty (default) when the message says so.
        severity: of its findings; ``ERROR`` by default.
    """

    code: str
    message: str
    hint: str = ""
    severity: Severity = Severity.ERROR

    def at(self, path: str, value: Any = NO_VALUE, /, **facts: Any) -> Finding:
        """The finding of this rule at ``path`` (the user's field) about ``value``, its
        templates filled with ``facts``."""
        return Finding(
            code=self.code,
            path=path,
            message=self.message.format(**facts),
            value=value,
            hint=self.hint.format(**facts),
            severity=self.severity,
        )


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
