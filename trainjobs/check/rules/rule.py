"""One check rule: a code, a severity, its documentation and a pure check function
(over a whole object, or over each of its pod sites)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trainjobs.check.rules.model import Check, RuleContext, Violation
from trainjobs.check.rules.sites import PodCheck, PodSite
from trainjobs.errors import Severity
from trainjobs.spec.stack import Profile

__all__ = ["Rule"]


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
