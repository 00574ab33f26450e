"""The language examples' programs, offline: what the provider registers for each under
Pulumi's mocks is what ``trainjobs render`` prints for the same resources.

The engine resolves a reference (``backend: ${redis}``) to the URN of the component
once it is made; here each resource is constructed once those it names are. The same
programs run on the real engine in commit c6447d2's tests/cluster/pulumi_up (not yet passing).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pulumi
import yaml

from tests.provider.programs import write_stack_file
from tests.provider.test_construct import _floats
from tests.support.paths import EXAMPLES
from tests.support.pulumi_harness import as_registered, manifests_of, run_program
from trainjobs.check import run
from trainjobs.provider.host import TrainjobsProvider
from trainjobs.spec import load_path

YAML_PROGRAM = EXAMPLES / "yaml-stack" / "Pulumi.yaml"
_REFERENCE = re.compile(r"^\$\{([A-Za-z0-9_-]+)\}$")


def _key(m: dict[str, Any]) -> tuple[str, ...]:
    meta = m["metadata"]
    return (m["apiVersion"], m["kind"], meta.get("namespace", ""), meta["name"])


def _served(program: dict[str, Any]) -> list[dict[str, Any]]:
    """The Kubernetes objects the provider registers for the program's trainjobs resources."""
    host = TrainjobsProvider()
    urns: dict[str, pulumi.Output[str]] = {}

    def construct(name: str, resource: dict[str, Any], named: dict[str, str]) -> str:
        props = {k: named.get(k, v) for k, v in resource.get("properties", {}).items()}
        made = host.construct(name, resource["type"], _floats(props), None)
        return made.urn  # type: ignore[return-value]

    def main() -> None:
        for name, resource in program["resources"].items():
            if not resource["type"].startswith("trainjobs:"):
                continue
            refs = {
                k: m.group(1)
                for k, v in resource.get("properties", {}).items()
                if isinstance(v, str) and (m := _REFERENCE.match(v))
            }
            urns[name] = _after(urns, refs, name, resource, construct)

    return sorted(manifests_of(run_program(main)), key=_key)


def _after(
    urns: dict[str, pulumi.Output[str]],
    refs: dict[str, str],
    name: str,
    resource: dict[str, Any],
    construct: Any,
) -> pulumi.Output[str]:
    """``construct`` once the resources ``refs`` names are made, with their URNs."""
    keys = list(refs)

    def made(got: list[str]) -> str:
        urn: str = construct(name, resource, dict(zip(keys, got, strict=True)))
        return urn

    return pulumi.Output.all(*(urns[refs[k]] for k in keys)).apply(made)


def test_the_yaml_example_registers_what_render_prints(tmp_path: Path) -> None:
    program = yaml.safe_load(YAML_PROGRAM.read_text())
    stack_file = write_stack_file(YAML_PROGRAM, tmp_path / "same.yaml")
    rendered = run(load_path(stack_file)).objects
    want = [as_registered(o.manifest, o.lifecycle.annotations()) for o in rendered]
    served = _served(program)
    assert served == sorted(want, key=_key)
    kinds = sorted({m["kind"] for m in served})
    # The Redis backend is secure by default: its password Secret and its NetworkPolicy.
    assert kinds == ["Deployment", "NetworkPolicy", "Pod", "PyTorchJob", "Secret", "Service"]
