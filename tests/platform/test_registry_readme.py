"""docs/platform.md's table of platform kinds is the registry's."""

from __future__ import annotations

import pytest

from tests.support.paths import ROOT
from trainjobs.platform import PLATFORM
from trainjobs.platform.base import PlatformKind
from trainjobs.spec.load import LIST_KEYS

STACK_KEY = {category: key for key, category in LIST_KEYS.items()}


def _rows() -> list[str]:
    readme = (ROOT / "docs" / "platform.md").read_text().splitlines()
    start = readme.index("| kind | listed under | what it is |")
    rows = []
    for line in readme[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


@pytest.mark.parametrize("plugin", list(PLATFORM), ids=lambda p: p.kind)
def test_readme_lists_the_platform_kind(plugin: PlatformKind) -> None:
    row = f"| {plugin.kind} | trainjobs:{STACK_KEY[plugin.category]} | {plugin.title} |"
    assert row in _rows()


def test_readme_lists_no_kind_the_registry_lacks() -> None:
    assert len(_rows()) == len(list(PLATFORM))
