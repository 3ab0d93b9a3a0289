"""kube-controller-manager's controllers, one module per pkg/controller they mirror.

The workload controllers (deployment, replicaset, statefulset, daemon, job, podgc,
garbagecollector, run together by ``manager``) and the PV controller (persistentvolume). The
engine does not know them: the callers that run a whole cluster start them beside it
(``schedviz.simulation.simulator.new_simulation``), as they pass the out-of-tree plugins.
"""
