"""Where the repository's inputs are; tests never read ../shared/."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STACKS = ROOT / "stacks"
EXAMPLES = ROOT / "examples"
DATA = ROOT / "tests" / "data"


def stack_files() -> list[Path]:
    """Every stack config: stacks/Pulumi.<name>.yaml."""
    return sorted(STACKS.glob("Pulumi.*.yaml"))


def example_job_files() -> list[Path]:
    """Every job YAML of every example (not its Pulumi.yaml or stack configs)."""
    return sorted(
        p
        for p in EXAMPLES.rglob("*.yaml")
        if not p.name.startswith("Pulumi") and "data" not in p.parts
    )


def example_programs() -> list[Path]:
    """Every example folder that is a Pulumi program."""
    return sorted(p.parent for p in EXAMPLES.glob("*/Pulumi.yaml"))
