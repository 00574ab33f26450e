"""What a check rule is: a code, a severity, its documentation and a pure check function.

A rule looks at one rendered object (a manifest) and yields *violations*: where in
the manifest, what is wrong, the offending value and a fix. The engine turns them
into findings located in the user's input (``trainjobs check``), the policy pack
into CrossGuard violations (``pulumi preview --policy-pack policy``) — the same
function decides both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trainjobs.errors import NO_VALUE, Severity
from trainjobs.spec.stack import DEFAULT_K8S_VERSION, DEFAULT_PROFILE, Profile

if TYPE_CHECKING:
    from trainjobs.check.rules.sites import PodSite

__all__ = [
    "Check",
    "PodCheck",
    "Rule",
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

PodCheck = Callable[["PodSite", RuleContext], Iterable[Violation]]
"""A rule over one pod site; its violations carry paths inside the whole object."""


@dataclass(frozen=True)
class Rule:
    """One check rule, listed once in ``rules.registry``.

    Attributes:
        code: stable identifier (``image.unpinned``); findings, suppressions
            (``trainjobs: {ignore: [...]}``) and policy names key on it.
        severity: ERROR fails ``check``/``render`` and is mandatory in the policy
            pack; WARNING and ADVICE print (advisory in the pack).
        title: one line for tables.
        docs: what the rule checks, why it matters for training, and how to satisfy it.
        check: the function.
        level: the Pod Security Standards level the rule belongs to, or None for
            rules that always apply. ``restricted`` rules run only with
            ``--profile restricted``.
        pod_check: for a rule about pods, the function over one pod site that ``check``
            runs on every site; the engine finds an object's sites once for all rules.
    """

    code: str
    severity: Severity
    title: str
    docs: str
    check: Check
    level: Profile | None = None
    pod_check: PodCheck | None = None

    def violations(
        self, manifest: Mapping[str, Any], ctx: RuleContext, sites: Sequence[PodSite]
    ) -> Iterator[Violation]:
        """``check(manifest, ctx)``, given the object's pod sites found beforehand."""
        if self.pod_check is None:
            yield from self.check(manifest, ctx)
            return
        for site in sites:
            yield from self.pod_check(site, ctx)

    def applies(self, profile: Profile) -> bool:
        """Whether the rule runs under ``profile``."""
        return self.level != "restricted" or profile == "restricted"

    def message(self, violation: Violation, owner: str) -> str:
        """The violation's message, naming what must be exempted for Pod Security rules."""
        if self.level == "baseline":
            return f"{violation.message}; {owner} needs the privileged Pod Security level"
        if self.level == "restricted":
            return f"{violation.message}; {owner} does not meet the restricted Pod Security level"
        return violation.message


def silenced(code: str, ignored: Iterable[str]) -> bool:
    """Whether ``code`` is among ``ignored``, itself or by a dotted prefix (``pss.baseline``)."""
    return any(code == entry or code.startswith(entry + ".") for entry in ignored)


def version_at_least(version: str, minimum: str) -> bool:
    """``"1.32" >= "1.29"`` as versions, not strings."""

    def parts(text: str) -> tuple[int, ...]:
        return tuple(int(p) for p in text.split(".") if p.isdigit())

    return parts(version) >= parts(minimum)
