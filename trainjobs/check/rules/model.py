"""What a check rule works with: the context it runs in, its function's type, and the
violations it yields (the rule itself, a code with a severity and documentation, is
``rules.rule``).

A rule looks at one rendered object (a manifest) and yields *violations*: where in
the manifest, what is wrong, the offending value and a fix. The engine turns them
into findings located in the user's input (``trainjobs check``), the policy pack
into CrossGuard violations (``pulumi preview --policy-pack policy``) — the same
function decides both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from trainjobs.errors import NO_VALUE
from trainjobs.spec.stack import DEFAULT_K8S_VERSION, DEFAULT_PROFILE, Profile

__all__ = [
    "Check",
    "RuleContext",
    "Violation",
    "silenced",
    "version_at_least",
]


@dataclass(frozen=True)
class Violation:
    """One place where a manifest breaks a rule.

    Attributes:
        path: where inside the manifest, e.g. ``spec.containers[0].image``.
        message: what is wrong, in plain words.
        value: the offending value, or ``NO_VALUE`` for a missing field.
        hint: how to fix it.
    """

    path: str
    message: str
    value: Any = NO_VALUE
    hint: str = ""


@dataclass(frozen=True)
class RuleContext:
    """What a rule may depend on besides the manifest.

    Attributes:
        profile: the Pod Security Standards level checked; default ``baseline``.
        k8s_version: the Kubernetes minor version the stack targets (allowed sysctls and
            SELinux types grew over releases); default ``DEFAULT_K8S_VERSION``.
    """

    profile: Profile = DEFAULT_PROFILE
    k8s_version: str = DEFAULT_K8S_VERSION


Check = Callable[[Mapping[str, Any], RuleContext], Iterable[Violation]]
"""A rule's function: one manifest → its violations. Pure: no I/O, no state."""


def silenced(code: str, ignored: Iterable[str]) -> bool:
    """Whether ``code`` is among ``ignored``, itself or by a dotted prefix (``pss.baseline``)."""
    return any(code == entry or code.startswith(entry + ".") for entry in ignored)


def version_at_least(version: str, minimum: str) -> bool:
    """``"1.32" >= "1.29"`` as versions, not strings."""

    def parts(text: str) -> tuple[int, ...]:
        return tuple(int(p) for p in text.split(".") if p.isdigit())

    return parts(version) >= parts(minimum)
