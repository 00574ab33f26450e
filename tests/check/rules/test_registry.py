"""The rule registry: one place for codes, severities and docs; docs/check.md's table is
generated."""

from __future__ import annotations

import pytest

from tests.support.paths import ROOT
from trainjobs.check.rules import RULES, Rule, RuleRegistry, rules_table
from trainjobs.errors import Severity


def test_codes_are_unique_dotted_and_documented() -> None:
    # No count pinned here: the docs table test below notices a rule gone missing
    # (a new rule changes the table and nothing else).
    assert len(RULES) == len(set(RULES.codes()))
    for rule in RULES:
        assert rule.code.count(".") >= 1 and rule.code == rule.code.lower()
        assert rule.title and rule.docs.endswith("."), rule.code
        assert (rule.level is not None) == rule.code.startswith("pss."), rule.code


def test_a_code_registered_twice_is_refused() -> None:
    rule = Rule("x.y", Severity.ERROR, "t", "d.", lambda m, c: [])
    with pytest.raises(ValueError, match="share a code"):
        RuleRegistry([rule, rule])


def test_group_matching_for_ignore_entries() -> None:
    assert RULES.matches("pss.restricted")
    assert RULES.matches("image.unpinned")
    assert RULES.matches("image")
    assert not RULES.matches("imag")
    assert RULES.matches("pss")
    assert not RULES.matches("pss.restrict")


def _docs_table() -> str:
    """docs/check.md's rule table: its header line and every table line after it."""
    lines = (ROOT / "docs" / "check.md").read_text(encoding="utf-8").splitlines(keepends=True)
    start = lines.index("| rule | severity | profile | checks |\n")
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "".join(lines[start:end])


def test_the_docs_list_every_rule_as_the_registry_says() -> None:
    """Regenerate the table with ``trainjobs.check.rules.rules_table()``."""
    table = _docs_table()
    assert table == rules_table()
    # The whole table is compared, so a rule dropped from the end is noticed too.
    assert table != rules_table(RuleRegistry(list(RULES)[:-1]))
