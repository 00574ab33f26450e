"""Rule objects: profiles, messages naming the owner, silencing by code or group."""

from __future__ import annotations

from trainjobs.check.rules import RULES, Violation, silenced
from trainjobs.check.rules.model import version_at_least


def test_silenced_by_code_or_dotted_group_only() -> None:
    assert silenced("pss.baseline.capabilities", ["pss.baseline.capabilities"])
    assert silenced("pss.baseline.capabilities", ["pss.baseline"])
    assert silenced("pss.baseline.capabilities", ["pss"])
    assert not silenced("pss.baseline.capabilities", ["pss.base"])
    assert not silenced("image.unpinned", [])


def test_profiles() -> None:
    baseline = RULES.get("pss.baseline.privileged")
    restricted = RULES.get("pss.restricted.seccomp")
    image = RULES.get("image.unpinned")
    assert baseline and restricted and image
    assert baseline.applies("baseline") and baseline.applies("restricted")
    assert not restricted.applies("baseline") and restricted.applies("restricted")
    assert image.applies("baseline")


def test_messages_name_who_needs_the_exemption() -> None:
    v = Violation("spec.hostNetwork", "hostNetwork: true shares the node's network")
    baseline = RULES.get("pss.baseline.host_namespaces")
    restricted = RULES.get("pss.restricted.run_as_user")
    other = RULES.get("image.unpinned")
    assert baseline and restricted and other
    assert baseline.message(v, "job training/rdma") == (
        "hostNetwork: true shares the node's network; job training/rdma needs the privileged "
        "Pod Security level"
    )
    assert restricted.message(v, "backend training/redis").endswith(
        "; backend training/redis does not meet the restricted Pod Security level"
    )
    assert other.message(v, "job x") == v.message


def test_version_at_least() -> None:
    assert version_at_least("1.32", "1.29")
    assert version_at_least("1.29", "1.29")
    assert not version_at_least("1.9", "1.29")
