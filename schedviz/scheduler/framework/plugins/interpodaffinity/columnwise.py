"""InterPodAffinity over the snapshot's node columns. Not in upstream (see
backend/cache/columns.py).

PreFilter and PreScore count, per topology pair, pods that match terms. Over columns each node's
share is a per-row figure kept between cycles (``NodeColumns.derived``, worked out again only
for nodes whose pods changed) under a key that fixes everything the figure depends on: the
incoming pod's terms (namespaces and selectors, namespaceSelector already merged), or the
incoming pod's namespace, labels and namespace labels with the topology key of the existing
pods' terms. The shares are then summed per value of the topology label. The maps are the same
as the node walks give (the same pairs with the same counts); Filter reads them per label value
number rather than per node.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial

import numpy as np

from schedviz.kube.labels import Selector
from schedviz.kube.objects import Pod
from schedviz.scheduler.backend.cache.columns import BoolArray, IntArray, NodeColumns, distinct
from schedviz.scheduler.framework.interface import FILTER_PASSES
from schedviz.scheduler.framework.plugins.interpodaffinity.filtering import (
    NO_NAMESPACE_LABELS,
    PreFilterState,
    TopologyToMatchedTermCount,
    pod_matches_all_affinity_terms,
)
from schedviz.scheduler.framework.plugins.interpodaffinity.scoring import PreScoreState, ScoreMap
from schedviz.scheduler.framework.plugins.names import INTER_POD_AFFINITY
from schedviz.scheduler.framework.types import AffinityTerm, NodeInfo, PodInfo

# filter_columns' classes, in filter_node's order of checks.
CLASS_AFFINITY = 1
CLASS_ANTI_AFFINITY = 2
CLASS_EXISTING_ANTI_AFFINITY = 3

TermKey = tuple[frozenset[str], Selector, Selector]
ByNumber = dict[tuple[str, str], tuple[object, int, BoolArray]]

# The three maps of PreFilterState.
EXISTING = "existing"
AFFINITY = "affinity"
ANTI_AFFINITY = "anti-affinity"
_MAPS: dict[str, Callable[[PreFilterState], TopologyToMatchedTermCount]] = {
    EXISTING: lambda state: state.existing_anti_affinity_counts,
    AFFINITY: lambda state: state.affinity_counts,
    ANTI_AFFINITY: lambda state: state.anti_affinity_counts,
}

# The sets of topology keys nodes' pods' terms use, numbered for good (a derived figure is an
# int). Module-wide, so that every plugin instance sharing a snapshot numbers them alike.
_KEY_SETS: dict[tuple[str, ...], int] = {}
_KEY_SETS_BY_NUMBER: list[tuple[str, ...]] = []


def term_key(term: AffinityTerm) -> TermKey:
    """What ``term.matches(pod, {})`` depends on besides the pod."""
    return (term.namespaces, term.selector, term.namespace_selector)


def _key_set_number(keys: Iterable[str]) -> int:
    ordered = tuple(sorted(set(keys)))
    number = _KEY_SETS.get(ordered)
    if number is None:
        number = _KEY_SETS[ordered] = len(_KEY_SETS_BY_NUMBER)
        _KEY_SETS_BY_NUMBER.append(ordered)
    return number


def _topology_keys(columns: NodeColumns, key: str, keys_of: Callable[[NodeInfo], int]) -> set[str]:
    """The union of the topology keys the nodes' pods use (``keys_of`` numbers a node's set)."""
    per_row = columns.derived((INTER_POD_AFFINITY, key), keys_of)
    # Usually every node has the same set (none of its pods has such a term).
    return {k for number in distinct(per_row) for k in _KEY_SETS_BY_NUMBER[number]}


def _add_per_value(
    counts: TopologyToMatchedTermCount,
    columns: NodeColumns,
    key: str,
    per_row: IntArray,
    totals: IntArray | None = None,
) -> IntArray:
    """Adds each node's figure at its pair for ``key``; pairs summing to zero stay out (every
    figure here is a count, so none is negative). Returns the sums per value number, added to
    ``totals`` if given."""
    values_of_rows, values = columns.label_values(key)
    sums = np.zeros(len(values), dtype=np.int64) if totals is None else totals
    present = (values_of_rows >= 0) & (per_row != 0)
    if not present.any():
        return sums
    added = np.zeros(len(values), dtype=np.int64)
    np.add.at(added, values_of_rows[present], per_row[present])
    sums += added
    numbers = np.flatnonzero(added)
    pairs = [(key, values[number]) for number in numbers.tolist()]
    if not any(k == key for k, _ in counts):
        counts.update(zip(pairs, added[numbers].tolist(), strict=True))
        return sums
    for pair, value in zip(pairs, added[numbers].tolist(), strict=True):
        total = counts.get(pair, 0) + value
        if total == 0:
            counts.pop(pair, None)
        else:
            counts[pair] = total
    return sums


# PreFilter


def _pods_matching_all(terms: Sequence[AffinityTerm], node_info: NodeInfo) -> int:
    return sum(1 for p in node_info.pods if pod_matches_all_affinity_terms(terms, p.pod))


def _pods_matching(term: AffinityTerm, node_info: NodeInfo) -> int:
    return sum(1 for p in node_info.pods if term.matches(p.pod, NO_NAMESPACE_LABELS))


def _anti_affinity_key_set(node_info: NodeInfo) -> int:
    return _key_set_number(
        term.topology_key
        for p in node_info.pods_with_required_anti_affinity
        for term in p.required_anti_affinity_terms
    )


def _anti_affinity_terms_matching(
    pod: Pod, namespace_labels: dict[str, str], key: str, node_info: NodeInfo
) -> int:
    return sum(
        1
        for p in node_info.pods_with_required_anti_affinity
        for term in p.required_anti_affinity_terms
        if term.topology_key == key and term.matches(pod, namespace_labels)
    )


def _pod_key(pod: Pod, namespace_labels: dict[str, str]) -> tuple[object, ...]:
    """What an existing pod's term matching ``pod`` depends on besides the term."""
    return (
        pod.namespace,
        frozenset(pod.labels.items()),
        frozenset(namespace_labels.items()),
    )


def pre_filter_counts(
    pod_info: PodInfo, namespace_labels: dict[str, str], columns: NodeColumns
) -> tuple[
    TopologyToMatchedTermCount,
    TopologyToMatchedTermCount,
    TopologyToMatchedTermCount,
    ByNumber,
]:
    """``get_existing_anti_affinity_counts`` and ``get_incoming_affinity_anti_affinity_counts``
    over every node of ``columns``, and the counts by label value number (``by_number`` of
    PreFilterState) as they come out."""
    sums: dict[tuple[str, str], IntArray] = {}
    existing: TopologyToMatchedTermCount = {}
    pod_key = _pod_key(pod_info.pod, namespace_labels)
    for key in sorted(_topology_keys(columns, "anti-affinity keys", _anti_affinity_key_set)):
        matching = columns.derived(
            (INTER_POD_AFFINITY, "existing anti-affinity", pod_key, key),
            partial(_anti_affinity_terms_matching, pod_info.pod, namespace_labels, key),
        )
        sums[EXISTING, key] = _add_per_value(existing, columns, key, matching)
    affinity: TopologyToMatchedTermCount = {}
    terms = pod_info.required_affinity_terms
    if terms:
        matching = columns.derived(
            (INTER_POD_AFFINITY, "affinity", tuple(map(term_key, terms))),
            partial(_pods_matching_all, list(terms)),
        )
        for term in terms:
            key = term.topology_key
            sums[AFFINITY, key] = _add_per_value(
                affinity, columns, key, matching, sums.get((AFFINITY, key))
            )
    anti_affinity: TopologyToMatchedTermCount = {}
    for term in pod_info.required_anti_affinity_terms:
        matching = columns.derived(
            (INTER_POD_AFFINITY, "term", term_key(term)), partial(_pods_matching, term)
        )
        key = term.topology_key
        sums[ANTI_AFFINITY, key] = _add_per_value(
            anti_affinity, columns, key, matching, sums.get((ANTI_AFFINITY, key))
        )
    by_number: ByNumber = {}
    for which_key, per_number in sums.items():
        positive = np.zeros(len(per_number) + 1, dtype=np.bool_)
        positive[:-1] = per_number > 0
        by_number[which_key] = (columns, len(per_number), positive)
    return existing, affinity, anti_affinity, by_number


# Filter


def _positive_by_number(
    state: PreFilterState, which: str, columns: NodeColumns, key: str
) -> BoolArray:
    """Per value number of the label ``key``, and one more for "no such label" (index -1):
    whether the pair's count in the state's ``which`` map is above zero."""
    _, values = columns.label_values(key)
    kept = state.by_number.get((which, key))
    if kept is not None and kept[0] is columns and kept[1] == len(values):
        return kept[2]
    counts = _MAPS[which](state)
    positive = np.zeros(len(values) + 1, dtype=np.bool_)
    numbers = columns.label_numbers(
        key, [value for (k, value), count in counts.items() if k == key and count > 0]
    )
    positive[numbers] = True
    # A value no node has came out as -1, the "no such label" entry, which stays False.
    positive[-1] = False
    state.by_number[which, key] = (columns, len(values), positive)
    return positive


def filter_rows(state: PreFilterState, columns: NodeColumns, rows: IntArray) -> IntArray:
    """``filter_node`` of the nodes at ``rows``: FILTER_PASSES, or the class of the check that
    rejects them (CLASS_AFFINITY, CLASS_ANTI_AFFINITY, CLASS_EXISTING_ANTI_AFFINITY; each
    check's status is a constant)."""
    classes = np.full(len(rows), FILTER_PASSES, dtype=np.int64)
    undecided = np.ones(len(rows), dtype=np.bool_)
    terms = state.pod_info.required_affinity_terms
    if terms:
        all_keys = np.ones(len(rows), dtype=np.bool_)
        pods_exist = np.ones(len(rows), dtype=np.bool_)
        for term in terms:
            numbers = columns.label_values(term.topology_key)[0][rows]
            all_keys &= numbers >= 0
            positive = _positive_by_number(state, AFFINITY, columns, term.topology_key)
            pods_exist &= positive[numbers]
        first_of_group = not state.affinity_counts and pod_matches_all_affinity_terms(
            terms, state.pod_info.pod
        )
        satisfied = all_keys & (pods_exist | first_of_group)
        classes[~satisfied] = CLASS_AFFINITY
        undecided &= satisfied
    if state.anti_affinity_counts:
        rejected = np.zeros(len(rows), dtype=np.bool_)
        for term in state.pod_info.required_anti_affinity_terms:
            rejected |= _holds_positive(state, ANTI_AFFINITY, columns, term.topology_key, rows)
        rejected &= undecided
        classes[rejected] = CLASS_ANTI_AFFINITY
        undecided &= ~rejected
    if state.existing_anti_affinity_counts:
        rejected = np.zeros(len(rows), dtype=np.bool_)
        for key in {k for k, _ in state.existing_anti_affinity_counts}:
            rejected |= _holds_positive(state, EXISTING, columns, key, rows)
        rejected &= undecided
        classes[rejected] = CLASS_EXISTING_ANTI_AFFINITY
    return classes


def _holds_positive(
    state: PreFilterState, which: str, columns: NodeColumns, key: str, rows: IntArray
) -> BoolArray:
    """Whether each node has the label ``key`` with a value whose pair counts above zero."""
    numbers = columns.label_values(key)[0][rows]
    result: BoolArray = _positive_by_number(state, which, columns, key)[numbers]
    return result


# PreScore / Score


def _affinity_key_set(node_info: NodeInfo) -> int:
    return _key_set_number(
        term.topology_key
        for p in node_info.pods_with_affinity
        for term in (
            *p.required_affinity_terms,
            *(weighted.term for weighted in p.preferred_affinity_terms),
            *(weighted.term for weighted in p.preferred_anti_affinity_terms),
        )
    )


def _existing_terms(
    existing: PodInfo, hard_pod_affinity_weight: int
) -> Iterable[tuple[AffinityTerm, int]]:
    """An existing pod's terms that score the incoming pod, with their signed weights."""
    if hard_pod_affinity_weight > 0:
        for term in existing.required_affinity_terms:
            yield term, hard_pod_affinity_weight
    for weighted in existing.preferred_affinity_terms:
        yield weighted.term, weighted.weight
    for weighted in existing.preferred_anti_affinity_terms:
        yield weighted.term, -weighted.weight


def _existing_terms_scoring(
    pod: Pod,
    namespace_labels: dict[str, str],
    hard_pod_affinity_weight: int,
    key: str,
    weigh: bool,
    node_info: NodeInfo,
) -> int:
    """The summed signed weights (``weigh``), or the number, of the node's pods' terms with
    topology ``key`` that match ``pod``."""
    total = 0
    for existing in node_info.pods_with_affinity:
        for term, weight in _existing_terms(existing, hard_pod_affinity_weight):
            if term.topology_key == key and term.matches(pod, namespace_labels):
                total += weight if weigh else 1
    return total


def _add_scores(
    sums: dict[str, tuple[IntArray, IntArray]],
    columns: NodeColumns,
    key: str,
    weights: IntArray,
    matched: IntArray,
) -> None:
    """Adds each node's summed weights and number of matched terms at its value of ``key``."""
    values_of_rows, values = columns.label_values(key)
    kept = sums.get(key)
    if kept is None:
        kept = sums[key] = (
            np.zeros(len(values), dtype=np.int64),
            np.zeros(len(values), dtype=np.int64),
        )
    present = (values_of_rows >= 0) & (matched > 0)
    np.add.at(kept[0], values_of_rows[present], weights[present])
    np.add.at(kept[1], values_of_rows[present], matched[present])


def topology_score(
    state: PreScoreState,
    columns: NodeColumns,
    has_constraints: bool,
    hard_pod_affinity_weight: int,
) -> ScoreMap | None:
    """``compute_topology_score`` over every node of ``columns``: a topology value is in the
    map when some term matched at a node with it (its sum may be 0), and the map is None when
    no value is."""
    sums: dict[str, tuple[IntArray, IntArray]] = {}
    pod_info = state.pod_info
    if has_constraints:
        for weighted_terms, sign in (
            (pod_info.preferred_affinity_terms, 1),
            (pod_info.preferred_anti_affinity_terms, -1),
        ):
            for weighted in weighted_terms:
                term = weighted.term
                matching = columns.derived(
                    (INTER_POD_AFFINITY, "term", term_key(term)), partial(_pods_matching, term)
                )
                _add_scores(
                    sums, columns, term.topology_key, matching * (weighted.weight * sign), matching
                )
    pod, namespace_labels = pod_info.pod, state.namespace_labels
    pod_key = _pod_key(pod, namespace_labels)
    for key in sorted(_topology_keys(columns, "affinity keys", _affinity_key_set)):
        figures = [
            columns.derived(
                (INTER_POD_AFFINITY, "existing terms", pod_key, hard_pod_affinity_weight, key, w),
                partial(
                    _existing_terms_scoring, pod, namespace_labels, hard_pod_affinity_weight, key, w
                ),
            )
            for w in (True, False)
        ]
        _add_scores(sums, columns, key, *figures)
    total: ScoreMap = {}
    for key, (weights, matched) in sums.items():
        numbers = np.flatnonzero(matched).tolist()
        if numbers:
            values = columns.label_values(key)[1]
            total[key] = dict(
                zip(map(values.__getitem__, numbers), weights[numbers].tolist(), strict=True)
            )
    return total or None


def score_rows(state: PreScoreState, columns: NodeColumns, rows: IntArray) -> IntArray:
    """``score_node`` of the nodes at ``rows``."""
    scores = np.zeros(len(rows), dtype=np.int64)
    for key, value_scores in state.topology_score.items():
        values_of_rows, values = columns.label_values(key)
        by_number = np.zeros(len(values) + 1, dtype=np.int64)  # the last: no such label
        numbers = columns.label_numbers(key, value_scores)
        by_number[numbers] = np.fromiter(value_scores.values(), dtype=np.int64)
        by_number[-1] = 0  # values no node has came out as -1
        scores += by_number[values_of_rows[rows]]
    return scores
