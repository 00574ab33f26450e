"""Stack file text the pulumi_up tests share."""

from __future__ import annotations

SMALL_RESOURCES = "{requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 64Mi}}"
"""The Worker's ``resources`` unless a test gives its own."""


def small_tfjob_entry(
    name: str,
    namespace: str,
    target: str,
    *,
    labels: str = "",
    resources: str = SMALL_RESOURCES,
    replicas: int = 1,
) -> str:
    """An entry of ``trainjobs:jobs`` (indented as in a stack file): a TFJob of
    ``replicas`` small Workers, on ``target``; ``labels`` (a flow mapping) on its
    metadata, ``resources`` (a flow mapping, or block lines indented under the key) on
    its container."""
    extra = f", labels: {labels}" if labels else ""
    return f"""\
    - apiVersion: kubeflow.org/v1
      kind: TFJob
      metadata: {{name: {name}, namespace: {namespace}{extra}}}
      spec:
        runPolicy: {{ttlSecondsAfterFinished: 86400}}
        tfReplicaSpecs:
          Worker:
            replicas: {replicas}
            restartPolicy: Never
            template:
              spec:
                containers:
                  - name: tensorflow
                    image: ghcr.io/example/tf-mnist:1.0
                    resources: {resources}
      trainjobs: {{target: {target}}}
"""
