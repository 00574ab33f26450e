"""Kubernetes name and label rules (DNS-1123, DNS-1035, label values).

The regular expressions are the ones the API server applies
(k8s.io/apimachinery/pkg/util/validation).
"""

from __future__ import annotations

import hashlib
import re

__all__ = [
    "DNS1035_LABEL",
    "DNS1123_LABEL",
    "DNS1123_SUBDOMAIN",
    "LABEL_VALUE",
    "dns1035_label_problem",
    "dns1123_label_problem",
    "dns1123_subdomain_problem",
    "label_key_problem",
    "label_value_problem",
    "labelled_name_problem",
    "shorten",
    "suggest_name",
]

DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")

LABEL_MAX = 63
SUBDOMAIN_MAX = 253


def suggest_name(value: str, first_letter: bool = False) -> str:
    """A valid DNS name made from ``value``, the example a name finding offers (and so
    a form in which a finding may repeat the value)."""
    fixed = re.sub(r"[^a-z0-9-]+", "-", value.lower()).strip("-")
    if first_letter:
        fixed = fixed.lstrip("0123456789-")
    return fixed[:LABEL_MAX].rstrip("-") or "x"


_DNS1123_LABEL_RULE = (
    "DNS-1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit"
)
_DNS1035_LABEL_RULE = (
    "DNS-1035 label: lowercase letters, digits and '-', starting with a letter and ending "
    "with a letter or digit"
)
_DNS1123_SUBDOMAIN_RULE = (
    "DNS-1123 subdomain: lowercase letters, digits, '-' and '.', starting and ending with a "
    "letter or digit"
)


def _dns_problem(
    value: str, pattern: re.Pattern[str], limit: int, rule: str, first_letter: bool = False
) -> str | None:
    """Why ``value`` breaks a DNS name ``rule`` (``pattern``, at most ``limit`` long), or None."""
    if len(value) > limit:
        return f"must be at most {limit} characters, has {len(value)}"
    if not pattern.match(value):
        return f"must be a {rule} (e.g. {suggest_name(value, first_letter)!r})"
    return None


def dns1123_label_problem(value: str) -> str | None:
    """Why ``value`` is not a DNS-1123 label (Service and most object names), or None."""
    return _dns_problem(value, DNS1123_LABEL, LABEL_MAX, _DNS1123_LABEL_RULE)


def dns1035_label_problem(value: str) -> str | None:
    """Why ``value`` is not a DNS-1035 label (job names, Services), or None."""
    return _dns_problem(value, DNS1035_LABEL, LABEL_MAX, _DNS1035_LABEL_RULE, first_letter=True)


def dns1123_subdomain_problem(value: str) -> str | None:
    """Why ``value`` is not a DNS-1123 subdomain (Pod, ConfigMap names), or None."""
    return _dns_problem(value, DNS1123_SUBDOMAIN, SUBDOMAIN_MAX, _DNS1123_SUBDOMAIN_RULE)


def labelled_name_problem(value: str) -> str | None:
    """Why ``value`` cannot name a job or platform resource, or None: a DNS-1123
    subdomain that also fits a label value (every object made from it carries it in one)."""
    problem = dns1123_subdomain_problem(value)
    if problem is None and len(value) > LABEL_MAX:
        return f"must be at most {LABEL_MAX} characters, has {len(value)}"
    return problem


def label_value_problem(value: str) -> str | None:
    """Why ``value`` cannot be a label value, or None."""
    if len(value) > LABEL_MAX:
        return f"a label value must be at most {LABEL_MAX} characters, has {len(value)}"
    if not LABEL_VALUE.match(value):
        return (
            "a label value may hold only letters, digits, '-', '_' and '.', "
            "starting and ending with a letter or digit"
        )
    return None


def label_key_problem(key: str) -> str | None:
    """Why ``key`` cannot be a label or annotation key, or None."""
    prefix, _, name = key.rpartition("/")
    if prefix and dns1123_subdomain_problem(prefix):
        return f"the prefix {prefix!r} must be a DNS-1123 subdomain"
    if not name or len(name) > LABEL_MAX or not _LABEL_NAME.match(name):
        return (
            f"the name part {name!r} must be 1-{LABEL_MAX} letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit"
        )
    return None


def shorten(name: str, limit: int = LABEL_MAX) -> str:
    """Shorten ``name`` to ``limit`` characters deterministically and without collisions.

    Names that fit are returned unchanged. Longer ones keep a prefix and end in
    an 8-character hash of the full name, so two different long names never
    shorten to the same result in practice and the same name always gives the
    same result.
    """
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    head = name[: limit - len(digest) - 1].rstrip("-.")
    return f"{head}-{digest}"
