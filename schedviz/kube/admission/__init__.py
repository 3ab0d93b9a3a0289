"""Admission: what the API server's admission plugins do to a pod it is asked to create.

``chain.PodAdmission`` runs them in kube-apiserver's order (pkg/kubeapiserver/options/
plugins.go, ``AllOrderedPlugins``): the mutating phase (LimitRanger's defaults, Priority,
RuntimeClass's overhead and scheduling), then the validating phase (LimitRanger's limits,
RuntimeClass's overhead check, ResourceQuota last). One module per plugin, each naming the
upstream file it mirrors.
"""

from schedviz.kube.admission.chain import PodAdmission, admission_objects
from schedviz.kube.admission.priority import (
    DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS,
    SYSTEM_CLASSES,
    admit_pods,
    admit_priority_classes,
    default_priority_class,
)

__all__ = [
    "DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS",
    "SYSTEM_CLASSES",
    "PodAdmission",
    "admission_objects",
    "admit_pods",
    "admit_priority_classes",
    "default_priority_class",
]
