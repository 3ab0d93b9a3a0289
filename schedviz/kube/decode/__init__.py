"""Decoding a manifest into a typed object, validating and defaulting it as the API server does.

One module per kind or family of kinds, over modules of the types they share:
- ``kinds``: the entry point, ``decode_object``, and ``KINDS`` (apiVersion and kind -> decoder);
- ``pods``, ``nodes``, ``policy`` (Namespace, PriorityClass, PodDisruptionBudget), ``storage``
  (PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode), ``podgroup`` (the
  Coscheduling plugin's custom resource): one decoder per kind;
- ``meta`` (ObjectMeta, labels, selectors), ``containers``, ``affinity`` (affinity, topology
  spread), ``taints`` (taints, tolerations), ``resources`` (resource names and requirements),
  ``quantities`` (canonical form, defaulting), ``validation`` (names, label keys and values,
  ports), ``reader`` (field paths, typed reading): what the decoders share.

Each module names the upstream files it follows (pkg/apis/*/v1/defaults.go, pkg/apis/*/validation,
k8s.io/apimachinery's validation packages, pkg/registry/core/pod/strategy.go), with their exact
messages.

Deliberately different:
- Every error is collected, including wrong types (a string where a map is expected), which the
  API server reports as a decoding failure before validation; here they are ``FieldError``s in
  the wording it uses for custom resources (``... in body must be of type object: "string"``).
  A quantity that does not parse is reported at its field, e.g.
  ``spec.containers[0].resources.requests[cpu]: Invalid value: "1.5.3": quantities must ...``.
- Pod status (phase, nominatedNodeName, conditions) is kept, where the API server resets it on
  create: manifests here are often ``kubectl get -o yaml`` output of a running cluster.
- Errors come in manifest order; upstream iterates Go maps, so its order varies between runs.
- Only fields the scheduler reads are validated in depth (no probes, env, security contexts,
  volume source details); unknown fields are ignored rather than refused.
- A missing uid is filled with a deterministic one (uuid5 of kind, namespace and name).
"""

from schedviz.kube.decode.kinds import KINDS, KindInfo, decode_object, kind_info

__all__ = ["KINDS", "KindInfo", "decode_object", "kind_info"]
