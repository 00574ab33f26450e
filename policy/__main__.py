"""The trainjobs policy pack: ``pulumi preview --policy-pack policy``.

Environment (all optional): ``TRAINJOBS_PROFILE`` (baseline | restricted, default
baseline), ``TRAINJOBS_IGNORE`` (comma-separated rule codes or groups to disable),
``TRAINJOBS_K8S_VERSION`` (default 1.32). Any single policy can also be set to
mandatory, advisory or disabled with Pulumi's own ``--policy-pack-config``.
"""

import os

from pulumi_policy import PolicyPack

from trainjobs.components.policy import policies
from trainjobs.spec.stack import DEFAULT_K8S_VERSION, PROFILES

profile = os.environ.get("TRAINJOBS_PROFILE", "baseline")
if profile not in PROFILES:
    raise SystemExit(f"TRAINJOBS_PROFILE must be one of {', '.join(PROFILES)}, not {profile!r}")

PolicyPack(
    name="trainjobs",
    policies=policies(
        profile=profile,
        ignore=[c.strip() for c in os.environ.get("TRAINJOBS_IGNORE", "").split(",") if c.strip()],
        k8s_version=os.environ.get("TRAINJOBS_K8S_VERSION", DEFAULT_K8S_VERSION),
    ),
)
