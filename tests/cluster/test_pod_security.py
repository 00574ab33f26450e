"""Proof 4: Pod Security as the real API server enforces it.

The Namespaces a stack creates carry ``pod-security.kubernetes.io/enforce`` at the
level the stack is checked at, and the real PodSecurity admission plugin, enforcing
that label, admits what it renders. Then, for every example and a corpus of pods that
break one rule each, at both levels: the rules ``check`` flags are exactly the checks
the API server names when it refuses the Pods (server-side dry runs in a namespace
enforcing the level).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.control_plane import ControlPlane
from tests.support.paths import EXAMPLES, example_job_files, stack_files
from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.spec import load_path, parse_documents
from trainjobs.spec.stack import DEFAULT_K8S_VERSION

pytestmark = pytest.mark.cluster

Doc = dict[str, Any]
LEVELS = ("baseline", "restricted")

# The name the API server gives each Pod Security check in its refusal, and the rule
# family trainjobs reports it under. At restricted, the restricted form of a check
# replaces the baseline one (capabilities, seccomp, volumes), so families are compared.
CHECK_FAMILIES = {
    "hostProcess": "host_process",
    "host namespaces": "host_namespaces",
    "privileged": "privileged",
    "non-default capabilities": "capabilities",
    "unrestricted capabilities": "capabilities",
    "hostPath volumes": "volumes",
    "restricted volume types": "volumes",
    "hostPort": "host_ports",
    "forbidden AppArmor profile": "apparmor",
    "forbidden AppArmor profiles": "apparmor",
    "seLinuxOptions": "selinux",
    "procMount": "proc_mount",
    "seccompProfile": "seccomp",
    "forbidden sysctls": "sysctls",
    "allowPrivilegeEscalation != false": "privilege_escalation",
    "runAsNonRoot != true": "run_as_non_root",
    "runAsUser=0": "run_as_user",
}
RULE_FAMILIES = {
    "host_path": "volumes",
    "volume_types": "volumes",
}


def _family(code: str) -> str:
    rule = code.split(".")[-1]
    return RULE_FAMILIES.get(rule, rule)


def _refused_checks(message: str) -> set[str]:
    """The check names in a PodSecurity refusal: 'violates PodSecurity "x": a (..), b (..)'."""
    match = re.search(r'violates PodSecurity "[^"]+": (.*)$', message, re.S)
    if not match:
        return set()
    names, depth, current = [], 0, ""
    for char in match.group(1):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            names.append(current)
            current = ""
            continue
        if depth == 0 and char not in "()":
            current += char
    names.append(current)
    return {n.strip() for n in names if n.strip()}


IGNORE_ANNOTATION = "trainjobs.dev/ignore-checks"


def _templates(node: Any, path: str = "") -> list[tuple[str, Doc]]:
    """Every pod template inside an object: a workload's, a custom resource's replicas'."""
    found: list[tuple[str, Doc]] = []
    if isinstance(node, dict):
        template = node.get("template")
        spec = template.get("spec") if isinstance(template, dict) else None
        if isinstance(template, dict) and isinstance(spec, dict) and "containers" in spec:
            found.append((path, template))
        for key, value in node.items():
            found += _templates(value, f"{path}-{key}".lower())
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += _templates(value, f"{path}-{i}")
    return found


def _pods(manifests: list[Doc]) -> list[Doc]:
    """Every Pod the objects are or will make: a Pod, a workload's or custom resource's
    replica template as a Pod.

    Rules silenced on the owning object travel to its Pods' annotation, as the render
    puts them on both.
    """
    pods = []
    for m in manifests:
        if m["kind"] == "Pod":
            pods.append(copy.deepcopy(m))
            continue
        if m["kind"] in ("ClusterTrainingRuntime", "TrainingRuntime"):
            # A runtime's templates are not Pods yet: the Trainer controller completes
            # them per TrainJob (the initializer volume, the node env); the TrainJob's own
            # pods are checked where a job renders them (its pods target).
            continue
        own = (m["metadata"].get("annotations") or {}).get(IGNORE_ANNOTATION)
        for where, found in _templates(m.get("spec")):
            template = copy.deepcopy(found)
            meta = template.get("metadata") or {}
            name = f"{m['metadata']['name']}-{m['kind']}{where}".lower()
            meta["name"] = re.sub(r"[^a-z0-9-]+", "-", name)[:63].strip("-")
            if own:
                annotations = meta.setdefault("annotations", {})
                joined = f"{annotations.get(IGNORE_ANNOTATION, '')},{own}".strip(",")
                annotations[IGNORE_ANNOTATION] = joined
            pods.append(
                {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": template["spec"]}
            )
    return pods


def _silenced(pod: Doc) -> set[str]:
    """The rule families a pod's render silenced ("*" for a whole group such as pss)."""
    text = ((pod["metadata"].get("annotations") or {}).get(IGNORE_ANNOTATION)) or ""
    families = set()
    for code in (c.strip() for c in text.split(",") if c.strip()):
        if not code.startswith("pss"):
            continue
        families.add(_family(code) if code.count(".") >= 2 else "*")
    return families


def _enforcing(cluster: ControlPlane, name: str, level: str, version: str) -> str:
    """A fresh namespace enforcing ``level`` (pinned to ``version``) — and nothing else."""
    path = f"/api/v1/namespaces/{name}"
    labels = {
        "pod-security.kubernetes.io/enforce": level,
        "pod-security.kubernetes.io/enforce-version": f"v{version}",
    }
    if cluster.client.get(path) is None:
        cluster.client.create(
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}},
        )
    return name


def _refusals(cluster: ControlPlane, pods: list[Doc], namespace: str) -> dict[str, set[str]]:
    """Pod name → the checks PodSecurity refused it for (dry-run creates; empty: admitted)."""
    out: dict[str, set[str]] = {}
    for pod in pods:
        body = copy.deepcopy(pod)
        body["metadata"]["namespace"] = namespace
        answer = cluster.client.request(
            "POST", f"/api/v1/namespaces/{namespace}/pods?dryRun=All", body, ok=(403, 422)
        )
        status = answer.get("_status")
        if status == 422:
            pytest.fail(f"the API server found the pod invalid: {answer.get('message')}")
        out[pod["metadata"]["name"]] = (
            _refused_checks(answer.get("message", "")) if status else set()
        )
    return out


def _flagged(stack_docs: Any, level: str, **options: Any) -> tuple[set[str], list[Doc]]:
    """The Pod Security rule codes check flags at ``level``, and the manifests if it renders."""
    try:
        rendering = run(stack_docs, profile=level, **options)  # type: ignore[arg-type]
    except SpecError as exc:
        return {f.code for f in exc.findings if f.code.startswith("pss.")}, []
    return set(), list(rendering.manifests)


# --- namespaces enforce the level they are checked at -----------------------------------

HARDENED = {
    "securityContext": {
        "runAsNonRoot": True,
        "runAsUser": 1000,
        "seccompProfile": {"type": "RuntimeDefault"},
    },
}
CONTAINER_HARDENING = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
}


def _hardened_tfjob(namespace: str) -> Doc:
    (doc,) = [
        d for d in yaml.safe_load_all((EXAMPLES / "tf-mnist" / "tfjob.yaml").read_text()) if d
    ]
    doc["metadata"]["namespace"] = namespace
    for replica in doc["spec"]["tfReplicaSpecs"].values():
        spec = replica["template"]["spec"]
        spec.update(copy.deepcopy(HARDENED))
        for c in spec["containers"]:
            c["securityContext"] = copy.deepcopy(CONTAINER_HARDENING)
    return dict(doc)


@pytest.mark.parametrize("level", LEVELS)
def test_stack_namespaces_enforce_checked_level(
    cluster: ControlPlane, tmp_path: Path, level: str
) -> None:
    """A stack's namespaces enforce its level, and the real admission admits its render.

    Catches a Namespace rendered without the enforce label, at another level or with
    a version the API server does not accept, and a render check passes that the
    enforced level refuses.
    """
    namespace = f"pss-stack-{level}"
    stack = tmp_path / f"Pulumi.pss-{level}.yaml"
    stack.write_text(
        yaml.safe_dump(
            {
                "config": {
                    "trainjobs:target": "pods",
                    "trainjobs:podSecurity": level,
                    "trainjobs:namespaces": [namespace],
                    "trainjobs:jobs": [_hardened_tfjob(namespace)],
                }
            }
        )
    )
    manifests = list(run(load_path(stack)).manifests)
    (ns,) = [m for m in manifests if m["kind"] == "Namespace"]
    labels = ns["metadata"].get("labels", {})
    assert labels.get("pod-security.kubernetes.io/enforce") == level, labels
    assert labels.get("pod-security.kubernetes.io/enforce-version") == f"v{DEFAULT_K8S_VERSION}"
    if cluster.client.get(f"/api/v1/namespaces/{namespace}") is None:
        cluster.client.create("/api/v1/namespaces", ns)
    stored = cluster.client.get(f"/api/v1/namespaces/{namespace}") or {}
    assert stored["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == level

    pods = _pods(manifests)
    assert pods
    refused = _refusals(cluster, pods, namespace)
    assert not any(refused.values()), refused
    # The label is really enforced: the same pods, unhardened, are refused at restricted.
    if level == "restricted":
        bare = copy.deepcopy(pods[0])
        bare["spec"].pop("securityContext", None)
        for c in bare["spec"]["containers"]:
            c.pop("securityContext", None)
        assert _refusals(cluster, [bare], namespace)[bare["metadata"]["name"]]


# --- check flags exactly what admission refuses ----------------------------------------

C0 = ("spec", "tfReplicaSpecs", "Worker", "template", "spec", "containers", 0)
POD = ("spec", "tfReplicaSpecs", "Worker", "template", "spec")
VIOLATIONS: list[tuple[str, list[tuple[tuple[str | int, ...], Any]]]] = [
    ("hostNetwork", [((*POD, "hostNetwork"), True)]),
    ("hostPID", [((*POD, "hostPID"), True)]),
    ("privileged", [((*C0, "securityContext"), {"privileged": True})]),
    ("IPC_LOCK", [((*C0, "securityContext"), {"capabilities": {"add": ["IPC_LOCK"]}})]),
    (
        "hostPath",
        [
            ((*POD, "volumes"), [{"name": "data", "hostPath": {"path": "/data"}}]),
            ((*C0, "volumeMounts"), [{"name": "data", "mountPath": "/data"}]),
        ],
    ),
    ("hostPort", [((*C0, "ports"), [{"containerPort": 2222, "hostPort": 2222}])]),
    (
        "seccomp Unconfined",
        [((*POD, "securityContext"), {"seccompProfile": {"type": "Unconfined"}})],
    ),
    (
        "AppArmor Unconfined",
        [((*C0, "securityContext"), {"appArmorProfile": {"type": "Unconfined"}})],
    ),
    ("SELinux type", [((*POD, "securityContext"), {"seLinuxOptions": {"type": "spc_t"}})]),
    (
        "unsafe sysctl",
        [((*POD, "securityContext"), {"sysctls": [{"name": "kernel.msgmax", "value": "1"}]})],
    ),
    ("runAsUser 0", [((*POD, "securityContext"), {"runAsUser": 0})]),
    (
        "nfs volume",
        [((*POD, "volumes"), [{"name": "data", "nfs": {"server": "nfs.example", "path": "/d"}}])],
    ),
]
"""Pods (TFJob workers) each breaking one rule, as users write them."""
HARDENED_VIOLATIONS: list[tuple[str, list[tuple[tuple[str | int, ...], Any]]]] = [
    (
        "container seccomp Unconfined",
        [((*C0, "securityContext", "seccompProfile"), {"type": "Unconfined"})],
    ),
    ("container runAsNonRoot false", [((*C0, "securityContext", "runAsNonRoot"), False)]),
    ("container runAsUser 0", [((*C0, "securityContext", "runAsUser"), 0)]),
    (
        "container adds SYS_ADMIN",
        [((*C0, "securityContext", "capabilities"), {"drop": ["ALL"], "add": ["SYS_ADMIN"]})],
    ),
]
"""Pods hardened for the restricted level but for one container setting that overrides
the pod's: what a check of the pod-level field alone would pass."""


def _violating(
    name: str, mutations: list[tuple[tuple[str | int, ...], Any]], hardened: bool = False
) -> Doc:
    if hardened:
        doc = _hardened_tfjob("default")
    else:
        (doc,) = [
            d for d in yaml.safe_load_all((EXAMPLES / "tf-mnist" / "tfjob.yaml").read_text()) if d
        ]
    doc["metadata"]["name"] = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    for path, value in mutations:
        node: Any = doc
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value
    doc["trainjobs"] = {"target": "pods"}
    return dict(doc)


def _cases() -> list[tuple[str, list[Doc] | Path]]:
    cases: list[tuple[str, list[Doc] | Path]] = [
        (f"example-{p.parent.name}", p) for p in example_job_files()
    ]
    cases += [(p.stem, p) for p in stack_files()]
    cases += [(f"violation-{name}", [_violating(name, m)]) for name, m in VIOLATIONS]
    cases += [
        (f"hardened-{name}", [_violating(name, m, hardened=True)])
        for name, m in HARDENED_VIOLATIONS
    ]
    return cases


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(("name", "source"), _cases(), ids=[c[0] for c in _cases()])
def test_admission_refuses_what_check_flags(
    cluster: ControlPlane, name: str, source: list[Doc] | Path, level: str
) -> None:
    """The Pod Security rules check flags at a level are the ones admission enforces.

    Catches a rule check misses (a pod it passes that the API server refuses: the job
    would never start), a rule it invents (a refusal of a pod the cluster admits), and
    a rule reported under the wrong check.
    """

    def stack() -> Any:
        if isinstance(source, Path):
            return load_path(source)
        return parse_documents(copy.deepcopy(source), source=name)

    target = "pods" if not isinstance(source, Path) or "examples" in source.parts else None
    flagged, manifests = _flagged(stack(), level, target=target)
    if not manifests:
        # Render the same objects with Pod Security unchecked (it changes no Pod).
        loose, manifests = _flagged(stack(), "baseline", target=target)
        if not manifests:
            docs = copy.deepcopy(source) if not isinstance(source, Path) else None
            assert docs is not None, f"{name} renders at no level: {loose}"
            for doc in docs:
                doc.setdefault("trainjobs", {})["ignore"] = ["pss"]
            _, manifests = _flagged(parse_documents(docs, source=name), "baseline", target=target)
    pods = _pods(manifests)
    namespace = _enforcing(cluster, f"pss-{level}", level, DEFAULT_K8S_VERSION)
    refused = _refusals(cluster, pods, namespace)
    flagged_families = {_family(c) for c in flagged}
    message = (
        f"{name} at {level}: check flags {sorted(flagged)}; the API server refuses "
        f"{ {k: sorted(v) for k, v in refused.items() if v} }"
    )
    for pod in pods:
        families = {CHECK_FAMILIES.get(c, f"unknown:{c}") for c in refused[pod["metadata"]["name"]]}
        silenced = _silenced(pod)
        # What admission refuses, check flagged — or the job silenced on purpose (its
        # namespace then enforces a lower level: README, Check rules).
        unflagged = families - flagged_families - silenced
        assert "*" in silenced or not unflagged, f"check misses {sorted(unflagged)}: {message}"
    refused_families = {CHECK_FAMILIES.get(c, f"unknown:{c}") for r in refused.values() for c in r}
    # What check flags, admission refuses: no invented rule.
    assert flagged_families <= refused_families, message
