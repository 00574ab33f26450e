"""The three comparisons the CLI offers, as library calls.

* :func:`diff_outputs` — two render outputs (directories or YAML streams);
* :func:`diff_against` — a stack or job file now and at a git ref;
* :func:`preview_stack` — a stack's render now and the last one stored for it
  (or, with ``kubectl``, what the cluster holds); :meth:`StackPreview.save`
  stores the new render once the caller has shown the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from trainjobs.check import run
from trainjobs.preview.gitref import render_at
from trainjobs.preview.live import Kubectl, live_side
from trainjobs.preview.objects import Side, key_of, load_side, side_from_rendering
from trainjobs.preview.ownership import Declared, LiveOwners, identity_of, mark, shared_namespace
from trainjobs.preview.plan import Plan, make_plan
from trainjobs.preview.secrets import mask_secrets
from trainjobs.preview.store import Store
from trainjobs.spec import load_path
from trainjobs.spec.entry import Target
from trainjobs.spec.stack import StackSpec

__all__ = ["StackPreview", "diff_against", "diff_outputs", "preview_stack", "render_side"]


def render_side(
    path: Path,
    *,
    target: Target | None = None,
    k8s_version: str | None = None,
    label: str = "",
    stack: StackSpec | None = None,
) -> Side:
    """The render of a stack or job file in the working tree (every check applied);
    ``stack``: the file already loaded."""
    rendering = run(stack or load_path(path), target=target, k8s_version=k8s_version)
    return side_from_rendering(rendering, label or str(path))


def diff_outputs(old: str, new: str) -> Plan:
    """Compare two render outputs: directories of YAML files, YAML streams, or ``-`` (stdin)."""
    return make_plan(load_side(old), load_side(new))


def diff_against(
    path: Path, ref: str, *, target: Target | None = None, k8s_version: str | None = None
) -> Plan:
    """Compare the render of ``path`` at git ``ref`` with its render now."""
    old = render_at(path, ref, target=target, k8s_version=k8s_version)
    new = render_side(path, target=target, k8s_version=k8s_version)
    return make_plan(old, new)


@dataclass(frozen=True)
class StackPreview:
    """One stack's preview, not yet stored.

    Attributes:
        plan: what would change.
        store: where the stack's last render lives.
        new: the render now.
        key: the fingerprint key the new render is stored under.
    """

    plan: Plan
    store: Store
    new: Side
    key: bytes

    def save(self) -> None:
        """Store the new render (Secret values fingerprinted) as the stack's last one."""
        manifests = [mask_secrets(obj.manifest, self.key) for obj in self.new.objects.values()]
        self.store.save(manifests, self.key)


def preview_stack(
    path: Path,
    *,
    target: Target | None = None,
    k8s_version: str | None = None,
    state_dir: Path | None = None,
    kubectl: Kubectl | None = None,
    stack_name: str | None = None,
    project: str | None = None,
) -> StackPreview:
    """Compare the render of ``path`` with its last stored render, or with the cluster.

    Either way the plan says what ``pulumi up`` does about ownership
    (:mod:`trainjobs.preview.ownership`); with the cluster, as this stack: ``stack_name``
    (default: ``<stack>`` of ``Pulumi.<stack>.yaml``) of ``project`` (default: the
    ``name`` in the Pulumi.yaml next to or above the stack's folder).
    """
    store = Store.for_stack(path, state_dir)
    key = store.key()
    stack = load_path(path)
    new = render_side(path, target=target, k8s_version=k8s_version, stack=stack)
    declared = Declared.of(stack, new)
    last = store.load()
    if kubectl is not None:
        identity = identity_of(path, project=project, stack=stack_name)
        cluster = kubectl.context or "the cluster"
        old = live_side(new, last, key, kubectl, label=f"{cluster} (kubectl)")
        # Quantities compare as the API server stores them (make_plan): by value, a
        # TFJob's "1Gi" -> 1073741824 would read as no change, yet pulumi updates it.
        plan = make_plan(old, new, secret_key=key)
        live = LiveOwners(
            identity,
            old.labels,
            _shared_present(declared.shared, old, last, kubectl),
            "" if identity else _why_unknown(path),
        )
        plan = mark(plan, new, declared, live)
    else:
        old = last if last is not None else Side("nothing stored yet")
        plan = mark(make_plan(old, new, secret_key=key), new, declared)
    return StackPreview(plan, store, new, key)


def _shared_present(
    names: tuple[str, ...], live: Side, last: Side | None, kubectl: Kubectl
) -> dict[str, bool]:
    """Whether the cluster has each shared namespace (one ``kubectl get`` each, unless the
    last render held it and it was read already)."""
    present = {}
    for name in names:
        manifest = shared_namespace(name)
        known = last is not None and key_of(manifest) in last.objects
        present[name] = (
            key_of(manifest) in live.objects if known else kubectl.get(manifest) is not None
        )
    return present


def _why_unknown(path: Path) -> str:
    if not path.name.startswith("Pulumi."):
        return f"the stack's name is not known ({path.name} is not a Pulumi.<stack>.yaml file)"
    return "the stack's project is not known (no Pulumi.yaml next to or above it)"
