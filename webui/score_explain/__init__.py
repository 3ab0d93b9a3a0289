"""What the trace page says about a cycle: one sentence on who won and why (or why nothing
fit), and, for every score cell, how that score was computed.

The sentence is read from the trace alone (docs/trace-format.md). A score cell's computation has
two parts. Normalizing and weighting are read from the trace too: every scored node's raw score
is there, so upstream's NormalizeScore can be shown with its numbers (helper.DefaultNormalizeScore
for TaintToleration and NodeAffinity, PodTopologySpread's and InterPodAffinity's own). The raw
score's inputs are recomputed for the one node asked about, from the cluster as stored, with the
engine's own functions (NodeResourcesFit's and BalancedAllocation's scorers, the taint and
node-affinity matchers, ImageLocality's priority, PodTopologySpread's and InterPodAffinity's
PreScore and Score), and shown only when the recomputation gives the trace's raw score: a node
whose pods have changed since the cycle says so instead of showing numbers that were not the
ones used. Nothing is recorded for this while scheduling, so a cycle costs no more.
PodTopologySpread and InterPodAffinity count pods per topology domain over the whole cluster, so
their cells read every node and bound pod.

The sentence is decision.py; a cell's normalizing is normalize.py, its raw score's inputs one
module per plugin (resources.py for NodeResourcesFit and BalancedAllocation, taints.py,
node_affinity.py, image_locality.py, topology_spread.py, inter_pod_affinity.py) over what cell.py
reads from the cluster; computation.py puts a cell together.
"""

from webui.score_explain.cell import Computation, M, X
from webui.score_explain.computation import round_for_people, score_computation
from webui.score_explain.decision import Decision, Decisive, decision
from webui.score_explain.normalize import normalize_steps

__all__ = [
    "Computation",
    "Decision",
    "Decisive",
    "M",
    "X",
    "decision",
    "normalize_steps",
    "round_for_people",
    "score_computation",
]
