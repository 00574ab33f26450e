"""Training-aware check rules: Pod Security Standards, pinned images, device and resource
requests, restart policies, clean-up of finished jobs.

Each rule is a pure function of one rendered object (``Rule.check``); ``RULES`` lists
them once. ``trainjobs check`` runs them through ``rule_findings``; the CrossGuard
policy pack (``policy/``) runs the very same functions on what Pulumi registers.
"""

from trainjobs.check.rules.engine import (
    ignore_findings,
    ignored_by,
    object_violations,
    owner_title,
    rule_findings,
)
from trainjobs.check.rules.model import RuleContext, Violation, silenced
from trainjobs.check.rules.registry import RULES, RuleRegistry, rules_table
from trainjobs.check.rules.rule import Rule

__all__ = [
    "RULES",
    "Rule",
    "RuleContext",
    "RuleRegistry",
    "Violation",
    "ignore_findings",
    "ignored_by",
    "object_violations",
    "owner_title",
    "rule_findings",
    "rules_table",
    "silenced",
]
