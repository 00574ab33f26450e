"""Where the repository's inputs are; tests never read ../shared/."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STACKS = ROOT / "stacks"
EXAMPLES = ROOT / "examples"
DATA = ROOT / "tests" / "data"


UNFIT_PREFIX = "Pulumi.unfit"
"""Stacks named ``Pulumi.unfit*.yaml`` must fail their check: they show what trainjobs
refuses. Snapshot and parity tests skip them; tests/test_unfit_stacks.py asserts their
findings."""


def stack_files() -> list[Path]:
    """Every stack config that renders: stacks/Pulumi.<name>.yaml, unfit stacks aside."""
    return sorted(p for p in STACKS.glob("Pulumi.*.yaml") if not p.name.startswith(UNFIT_PREFIX))


def unfit_stack_files() -> list[Path]:
    """Every stack config that must fail its check: stacks/Pulumi.unfit*.yaml."""
    return sorted(STACKS.glob(f"{UNFIT_PREFIX}*.yaml"))


def example_job_files() -> list[Path]:
    """Every job YAML of every example (not its Pulumi.yaml or stack configs, nor anything in
    a hidden folder such as a preview's state)."""
    return sorted(
        p
        for p in EXAMPLES.rglob("*.yaml")
        if not p.name.startswith("Pulumi")
        and "data" not in p.parts
        and not any(part.startswith(".") for part in p.relative_to(EXAMPLES).parts)
    )


def example_programs() -> list[Path]:
    """Every example folder that is a Python Pulumi program (the YAML, TypeScript and Go
    programs of the component provider have tests of their own: tests/provider)."""
    return sorted(
        p.parent for p in EXAMPLES.glob("*/Pulumi.yaml") if (p.parent / "__main__.py").is_file()
    )
