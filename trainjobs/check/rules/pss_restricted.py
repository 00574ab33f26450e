"""Pod Security Standards, restricted level: current pod hardening, beyond baseline.

Checked with ``--profile restricted`` (or ``trainjobs:podSecurity: restricted``).
Most training images run as root and install packages at start-up, so expect
findings here for upstream examples; the platform workloads trainjobs renders
itself (the Redis backend …) meet this level.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from trainjobs.check.rules.model import RuleContext, Violation
from trainjobs.check.rules.sites import PodSite, containers
from trainjobs.errors import NO_VALUE

__all__ = [
    "RESTRICTED_VOLUMES",
    "capabilities",
    "privilege_escalation",
    "run_as_non_root",
    "run_as_user",
    "seccomp",
    "volume_types",
]

RESTRICTED_VOLUMES = frozenset(
    {
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    }
)
"""Volume sources a restricted pod may use."""

_HINT = "or add `trainjobs: {{ignore: [pss.restricted.{control}]}}` if the namespace is baseline"


def _context_violation(
    site: PodSite, path: str, field: str, message: str, value: Any, fix: str, control: str
) -> Violation:
    """A finding at ``<path>.securityContext.<field>`` (the pod's ``spec`` or a container's
    path); ``value`` None: the field is unset. The hint is the fix, or silencing the
    control where the namespace enforces only baseline."""
    return Violation(
        site.at(f"{path}.securityContext.{field}"),
        message,
        NO_VALUE if value is None else value,
        f"{fix}, " + _HINT.format(control=control),
    )


def _security_context(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    context = obj.get("securityContext")
    return context if isinstance(context, Mapping) else {}


def _name(container: Mapping[str, Any]) -> str:
    return repr(container.get("name"))


def volume_types(site: PodSite, ctx: RuleContext) -> Iterator[Violation]:
    """Volumes other than the core kinds and PersistentVolumeClaims."""
    volumes = site.spec.get("volumes")
    for index, volume in enumerate(volumes if isinstance(volumes, list) else []):
        if not isinstance(volume, Mapping):
            continue
        for source in sorted(set(volume) - {"name"} - RESTRICTED_VOLUMES):
            yield Violation(
                site.at(f"spec.volumes[{index}].{source}"),
                f"volume {volume.get('name')!r} is a {source} volume",
                source,
                "mount it through a PersistentVolume and a persistentVolumeClaim volume, "
                + _HINT.format(control="volume_types"),
            )


def privilege_escalation(site: PodSite, ctx: RuleContext) -> Iterator[Violation]:
    """Containers that may gain privileges (setuid binaries)."""
    if not site.is_linux:
        return
    for path, container in containers(site.spec):
        value = _security_context(container).get("allowPrivilegeEscalation")
        if value is not False:
            yield _context_violation(
                site,
                path,
                "allowPrivilegeEscalation",
                f"container {_name(container)} does not set allowPrivilegeEscalation: false",
                value,
                "set securityContext.allowPrivilegeEscalation: false",
                "privilege_escalation",
            )


def _pod_or_each_container(
    site: PodSite,
    field: str,
    read: Callable[[Mapping[str, Any]], Any],
    good: Callable[[Any], bool],
    says: Callable[[str | None, Any], str],
    hint: str,
    reports_bad_values: bool = True,
) -> Iterator[Violation]:
    """A control the pod's securityContext sets for every container and a container may
    set for itself, as PodSecurity admission checks runAsNonRoot and restricted seccomp
    (k8s.io/pod-security-admission policy/check_runAsNonRoot.go,
    check_seccompProfile_restricted.go): a bad value is refused wherever it is set, even
    under a good pod-level one, and so is a container that sets none under a pod that
    sets no good one.

    ``read`` gives a securityContext's value (None: unset); ``says`` words the finding
    for a container (its quoted name) or the pod (None), given the pod's value.
    ``reports_bad_values`` False: a bad value set is another rule's finding (a baseline
    one, which runs at restricted too); it still covers no container.
    """
    pod = read(_security_context(site.spec))
    covered = pod is not None and good(pod)
    if pod is not None and not covered and reports_bad_values:
        yield Violation(site.at(f"spec.securityContext.{field}"), says(None, pod), pod, hint)
    for path, container in containers(site.spec):
        own = read(_security_context(container))
        bad = own is not None and not good(own) and reports_bad_values
        if (own is None and not covered) or bad:
            yield Violation(
                site.at(f"{path}.securityContext.{field}"),
                says(_name(container), pod),
                own if own is not None else NO_VALUE,
                hint,
            )


def run_as_non_root(site: PodSite, ctx: RuleContext) -> Iterator[Violation]:
    """Containers that may run as root."""
    yield from _pod_or_each_container(
        site,
        "runAsNonRoot",
        lambda context: context.get("runAsNonRoot"),
        lambda value: value is True,
        lambda container, _pod: (
            f"container {container} may run as root" if container else "the pod may run as root"
        ),
        "set spec.securityContext.runAsNonRoot: true with a non-zero runAsUser the image "
        "can run as, " + _HINT.format(control="run_as_non_root"),
    )


def run_as_user(site: PodSite, ctx: RuleContext) -> Iterator[Violation]:
    """An explicit root user id."""
    places = [("spec", _security_context(site.spec))]
    places += [(path, _security_context(c)) for path, c in containers(site.spec)]
    for path, context in places:
        if context.get("runAsUser") == 0:
            yield _context_violation(
                site,
                path,
                "runAsUser",
                "runs as user 0 (root)",
                0,
                "use a non-zero user id",
                "run_as_user",
            )


def _seccomp_type(context: Mapping[str, Any]) -> Any:
    profile = context.get("seccompProfile")
    return profile.get("type") if isinstance(profile, Mapping) else None


def seccomp(site: PodSite, ctx: RuleContext) -> Iterator[Violation]:
    """A seccomp profile must be set, on the pod or on every container: RuntimeDefault or
    a Localhost profile. Unconfined, the one other value, is pss.baseline.seccomp's."""
    if not site.is_linux:
        return
    yield from _pod_or_each_container(
        site,
        "seccompProfile.type",
        _seccomp_type,
        lambda value: value in ("RuntimeDefault", "Localhost"),
        lambda container, pod: (
            f"container {container} has no seccomp profile and the pod "
            + ("sets none" if pod is None else f"sets {pod!r}")
        ),
        "set spec.securityContext.seccompProfile.type: RuntimeDefault, "
        + _HINT.format(control="seccomp"),
        reports_bad_values=False,
    )


def capabilities(site: PodSite, ctx: RuleContext) -> Iterator[Violation]:
    """Containers must drop ALL capabilities and may add back only NET_BIND_SERVICE."""
    if not site.is_linux:
        return
    for path, container in containers(site.spec):
        caps = _security_context(container).get("capabilities")
        caps = caps if isinstance(caps, Mapping) else {}
        drop = caps.get("drop")
        if not isinstance(drop, list) or "ALL" not in drop:
            yield _context_violation(
                site,
                path,
                "capabilities.drop",
                f"container {_name(container)} does not drop ALL capabilities",
                drop,
                "set securityContext.capabilities.drop: [ALL]",
                "capabilities",
            )
        added = caps.get("add")
        for index, capability in enumerate(added if isinstance(added, list) else []):
            if capability != "NET_BIND_SERVICE":
                yield _context_violation(
                    site,
                    path,
                    f"capabilities.add[{index}]",
                    f"container {_name(container)} adds capability {capability}",
                    capability,
                    "add only NET_BIND_SERVICE",
                    "capabilities",
                )
