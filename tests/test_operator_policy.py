"""What trainjobs installs is least privilege, and deleting a stack never deletes jobs.

* No Role or ClusterRole grants a wildcard (verb, resource, API group or URL), and
  no binding hands out a built-in broad role (cluster-admin, admin, edit).
* Every CustomResourceDefinition is registered with ``retain_on_delete``: deleting
  a CRD deletes every object of its kind, so ``pulumi destroy`` of an operator
  stack would otherwise kill the running jobs.

Generic over every example, stack and platform kind (operators of category
``operator`` merged later included: ``corpus.platform_documents`` draws each kind
from its examples or its defaults) and over every CRD in ``crds/``.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

import pulumi

from tests.support.corpus import platform_documents, platform_variants, stack_of
from tests.support.paths import example_job_files, stack_files
from tests.support.pulumi_harness import run_program
from trainjobs.components import TrainingStack
from trainjobs.components.register import register_manifest
from trainjobs.k8s.crds import crd_dir, crd_files, load_crd
from trainjobs.platform import PLATFORM
from trainjobs.render import render
from trainjobs.spec import StackSpec, Target, load_path
from trainjobs.spec.entry import TARGETS

BROAD_ROLES = {"cluster-admin", "admin", "edit"}
CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"


def _stacks() -> Iterator[tuple[str, StackSpec, Target]]:
    """Every example, stack and platform document, on every target it has."""
    inputs = [(p.name, load_path(p)) for p in [*example_job_files(), *stack_files()]]
    inputs += [(d["kind"], stack_of([d])) for d in platform_variants()]
    for name, stack in inputs:
        for target in TARGETS:
            if all(target in e.framework.targets for e in stack.jobs):
                yield name, stack, target


def test_every_operator_kind_is_covered() -> None:
    drawn = {d["kind"] for d in platform_documents()}
    missing = [k for k in PLATFORM.kinds("operator") if k not in drawn]
    assert not missing, f"add an example or stack with these operator kinds: {missing}"


def _wildcards(rule: dict[str, Any]) -> list[str]:
    return [
        f"{field}: {value}"
        for field in ("verbs", "resources", "apiGroups", "nonResourceURLs", "resourceNames")
        for value in rule.get(field) or []
        if "*" in str(value)
    ]


def _assert_aggregates_own_roles(
    role: dict[str, Any], manifests: list[dict[str, Any]], where: tuple[str, ...]
) -> None:
    """An aggregated ClusterRole (upstream's admin/edit/view roles for a job kind) gains
    the rules of every ClusterRole its selectors match: each selector must match a role
    of the same render, whose rules the wildcard test reads, and never Kubernetes' own
    aggregation labels, which would pull in the built-in admin roles."""
    for selector in (role.get("aggregationRule") or {}).get("clusterRoleSelectors", []):
        labels = selector.get("matchLabels") or {}
        assert labels, where
        assert not any(k.startswith("rbac.authorization.k8s.io/") for k in labels), where
        matched = [
            m
            for m in manifests
            if m["kind"] == "ClusterRole"
            and m is not role
            and labels.items() <= (m["metadata"].get("labels") or {}).items()
        ]
        assert matched, (where, labels)


def test_no_wildcard_rbac_and_no_broad_role_bindings() -> None:
    roles = 0
    for name, stack, target in _stacks():
        manifests = render(stack, target).manifests
        for manifest in manifests:
            where = (name, target, manifest["kind"], manifest["metadata"]["name"])
            if manifest["kind"] in ("Role", "ClusterRole"):
                roles += 1
                _assert_aggregates_own_roles(manifest, manifests, where)
                for rule in manifest.get("rules") or []:
                    assert not _wildcards(rule), (where, rule)
            if manifest["kind"] in ("RoleBinding", "ClusterRoleBinding"):
                assert manifest["roleRef"]["name"] not in BROAD_ROLES, where
    assert roles, "no Role was rendered: nothing was checked"


def test_every_shipped_crd_is_retained_on_delete() -> None:
    # Each CRD of crds/ by its identity: the schema inside makes no difference to how
    # it is registered, and would only make the mocks slow.
    crds = []
    for path in crd_files():
        crd = load_crd(str(path.relative_to(crd_dir())))
        spec = crd["spec"]
        versions = [{k: v[k] for k in ("name", "served", "storage")} for v in spec["versions"]]
        identity = {k: spec[k] for k in ("group", "names", "scope")}
        crds.append(
            {
                **{k: crd[k] for k in ("apiVersion", "kind", "metadata")},
                "spec": {**identity, "versions": versions},
            }
        )
    assert crds

    def program() -> None:
        for crd in crds:
            register_manifest(crd, pulumi.ResourceOptions())

    registered = [r for r in run_program(program) if r.type == CRD_TYPE]
    assert len(registered) == len(crds)
    assert all(r.options["retain_on_delete"] is True for r in registered)


def test_every_crd_a_stack_installs_is_retained_on_delete() -> None:
    seen = set()
    for name, stack, target in _stacks():
        kinds = {m["kind"] for m in render(stack, target).manifests}
        if "CustomResourceDefinition" not in kinds or name in seen:
            continue  # an operator install does not depend on the jobs' target: once is enough
        seen.add(name)
        for resource in run_program(partial(TrainingStack, stack, target)):
            if resource.type == CRD_TYPE:
                assert resource.options["retain_on_delete"] is True, (name, resource.name)
    assert seen, "no stack installs a CRD: nothing was checked"
