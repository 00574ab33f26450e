"""Register one rendered manifest as the matching pulumi_kubernetes resource."""

from __future__ import annotations

import importlib
import importlib.metadata
import re
from collections.abc import Mapping
from typing import Any

import pulumi

from trainjobs.components.inputs import Inputs, is_input_token
from trainjobs.components.ownership import owner_metadata
from trainjobs.components.secrets import GeneratedValues, has_placeholders
from trainjobs.render.lifecycle import DEFAULT as DEFAULT_LIFECYCLE
from trainjobs.render.lifecycle import Lifecycle

__all__ = [
    "LiveObject",
    "child_name",
    "logical_name",
    "register_manifest",
    "resource_class",
    "with_owner",
]

# API group → pulumi_kubernetes module; groups not listed are custom resources.
_GROUP_MODULES = {
    "": "core",
    "apps": "apps",
    "batch": "batch",
    "autoscaling": "autoscaling",
    "policy": "policy",
    "rbac.authorization.k8s.io": "rbac",
    "apiextensions.k8s.io": "apiextensions",
    "admissionregistration.k8s.io": "admissionregistration",
    "scheduling.k8s.io": "scheduling",
    "networking.k8s.io": "networking",
    "storage.k8s.io": "storage",
    "coordination.k8s.io": "coordination",
}


class LiveObject(pulumi.CustomResource):
    """A custom resource (TFJob, TrainJob, a Karpenter NodePool …) whose live ``status``
    is an output.

    ``pulumi_kubernetes.apiextensions.CustomResource`` declares only ``metadata``
    and ``spec``, and the Python SDK drops every output a resource did not declare;
    this declares ``status`` too, so a job's conditions reach the program. It is the
    same resource type to the engine (``kubernetes:<apiVersion>:<kind>``), so the
    URN and the provider's behaviour are those of a CustomResource.
    """

    status: pulumi.Output[Any]
    """The object's status as the cluster reported it after the update (None in a preview)."""

    def __init__(
        self,
        name: str,
        api_version: str,
        kind: str,
        fields: Mapping[str, Any],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {"apiVersion": api_version, "kind": kind, **fields, "status": None}
        version = pulumi.ResourceOptions(version=_PROVIDER_VERSION)
        super().__init__(
            f"kubernetes:{api_version}:{kind}",
            name,
            props,
            pulumi.ResourceOptions.merge(opts, version),
        )


# The provider plugin version matching the installed SDK, as its own resources ask for.
_PROVIDER_VERSION = importlib.metadata.version("pulumi-kubernetes")


def resource_class(api_version: str, kind: str) -> type[pulumi.CustomResource] | None:
    """The typed pulumi_kubernetes class for a built-in kind, or None for custom resources."""
    group, _, version = api_version.rpartition("/")
    module_name = _GROUP_MODULES.get(group)
    if module_name is None:
        return None
    try:
        module = importlib.import_module(f"pulumi_kubernetes.{module_name}.{version}")
    except ImportError:
        return None
    cls = getattr(module, kind, None)
    return cls if isinstance(cls, type) and issubclass(cls, pulumi.CustomResource) else None


def logical_name(manifest: Mapping[str, Any]) -> str:
    """A stable Pulumi name: ``<namespace>/<name>``, or ``<name>`` for cluster objects.

    The URN also holds the resource type, so a Pod and a Service may share a name.
    """
    meta = manifest.get("metadata") or {}
    namespace = meta.get("namespace")
    return f"{namespace}/{meta['name']}" if namespace else str(meta["name"])


def child_name(manifest: Mapping[str, Any], prefix: str = "") -> str:
    """The Pulumi name of ``manifest`` inside a component: ``<prefix>:<namespace>/<name>``.

    The URN holds the parent's type but not its name, so two components of one
    type (one job on two clusters, a blue/green copy) need their own names for
    their children: ``prefix`` is the component's name (pulumi-kubernetes'
    ConfigFile and Chart v4 scope their children the same way). With no prefix it
    is :func:`logical_name`. A namespace that is a Pulumi Input is left out, so the
    URN does not change with its value.
    """
    meta = manifest.get("metadata") or {}
    namespace = meta.get("namespace")
    if namespace and not is_input_token(namespace):
        base = f"{namespace}/{meta['name']}"
    else:
        base = str(meta["name"])
    return f"{prefix}:{base}" if prefix else base


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def with_owner(fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` with the label and annotation that say which stack made the object: what
    the next update reads to tell the stack's own objects from anyone else's."""
    labels, annotations = owner_metadata()
    meta = dict(fields.get("metadata") or {})
    meta["labels"] = {**(meta.get("labels") or {}), **labels}
    meta["annotations"] = {**(meta.get("annotations") or {}), **annotations}
    return {**fields, "metadata": meta}


def _with_lifecycle(
    fields: dict[str, Any], opts: pulumi.ResourceOptions, lifecycle: Lifecycle
) -> tuple[dict[str, Any], pulumi.ResourceOptions]:
    annotations = lifecycle.annotations()
    if annotations:
        meta = dict(fields.get("metadata") or {})
        meta["annotations"] = {**(meta.get("annotations") or {}), **annotations}
        fields = {**fields, "metadata": meta}
    if lifecycle.timeout:
        timeouts = pulumi.CustomTimeouts(create=lifecycle.timeout, update=lifecycle.timeout)
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(custom_timeouts=timeouts))
    return fields, opts


def _warn_about_ttl(kind: str, name: str, manifest: Mapping[str, Any]) -> None:
    spec = manifest.get("spec") or {}
    run_policy = spec.get("runPolicy") or {}
    ttl = spec.get("ttlSecondsAfterFinished", run_policy.get("ttlSecondsAfterFinished"))
    if ttl is not None:
        pulumi.log.warn(
            f"{kind} {name}: the cluster deletes it {ttl}s after it finishes; after a "
            "`pulumi refresh` the next `pulumi up` would create it again and train again. "
            "Remove finished jobs from the stack instead, or leave ttlSecondsAfterFinished unset."
        )


def register_manifest(
    manifest: Mapping[str, Any],
    opts: pulumi.ResourceOptions,
    generated: GeneratedValues | None = None,
    lifecycle: Lifecycle = DEFAULT_LIFECYCLE,
    *,
    prefix: str = "",
    inputs: Inputs | None = None,
    secret: bool = False,
) -> pulumi.CustomResource:
    """Register ``manifest``; nested fields pass through in Kubernetes spelling.

    Placeholders for generated values (keys, passwords) are replaced through
    ``generated``, and the fields holding them are kept secret in Pulumi's state.
    Tokens standing for Pulumi Inputs are replaced through ``inputs``.
    ``lifecycle`` says how long ``pulumi up`` waits for the object. ``prefix``
    scopes the name (:func:`child_name`); the unscoped name stays an alias, so a
    stack made before names were scoped keeps its objects instead of replacing them.
    ``secret``: the object came from a setting that is a secret (``secure:`` config),
    so every field but ``metadata`` is kept encrypted in Pulumi's state.
    """
    api_version = str(manifest["apiVersion"])
    kind = str(manifest["kind"])
    fields = {k: v for k, v in manifest.items() if k not in ("apiVersion", "kind")}
    fields, opts = _with_lifecycle(with_owner(fields), opts, lifecycle)
    _warn_about_ttl(kind, logical_name(manifest), manifest)
    secret_fields = [k for k, v in fields.items() if has_placeholders(v)]
    if secret_fields:
        if generated is None:
            raise ValueError(f"{kind} {logical_name(manifest)} holds generated values")
        fields = {
            k: generated.substitute(v) if k in secret_fields else v for k, v in fields.items()
        }
        extra = pulumi.ResourceOptions(additional_secret_outputs=secret_fields)
        opts = pulumi.ResourceOptions.merge(opts, extra)
    if inputs:
        fields = {k: inputs.substitute(v) for k, v in fields.items()}
    if secret:
        hidden = sorted(k for k in fields if k != "metadata")
        fields = {k: pulumi.Output.secret(v) if k in hidden else v for k, v in fields.items()}
        extra = pulumi.ResourceOptions(additional_secret_outputs=hidden)
        opts = pulumi.ResourceOptions.merge(opts, extra)
    name = child_name(manifest, prefix)
    old_name = child_name(manifest)
    if prefix and old_name == logical_name(manifest):
        alias = pulumi.ResourceOptions(aliases=[pulumi.Alias(name=old_name)])
        opts = pulumi.ResourceOptions.merge(opts, alias)
    cls = resource_class(api_version, kind)
    if kind == "CustomResourceDefinition":
        # Deleting a CRD deletes every object of its kind: running jobs must survive.
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(retain_on_delete=True))
    if cls is None:
        return LiveObject(name, api_version, kind, fields, opts)
    # Top-level fields are constructor keywords (snake_case); below that, the
    # provider takes Kubernetes' own camelCase keys unchanged.
    return cls(name, opts=opts, **{_snake(k): v for k, v in fields.items()})
