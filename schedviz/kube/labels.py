"""Label selectors.

Mirrors k8s.io/apimachinery/pkg/labels/selector.go and metav1.LabelSelectorAsSelector: a ``None``
selector selects nothing, an empty one selects everything, requirements are ANDed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from schedviz.kube.objects import LabelSelector

Requirement = tuple[str, str, frozenset[str]]


@dataclass(frozen=True, slots=True)
class Selector:
    requirements: tuple[Requirement, ...]
    nothing: bool = False

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        for key, operator, values in self.requirements:
            if operator == "In":
                if labels.get(key) not in values:
                    return False
            elif operator == "NotIn":
                if key in labels and labels[key] in values:
                    return False
            elif operator == "Exists":
                if key not in labels:
                    return False
            elif operator == "DoesNotExist":
                if key in labels:
                    return False
            else:
                return False
        return True

    @property
    def empty(self) -> bool:
        return not self.nothing and not self.requirements


EVERYTHING = Selector(())
NOTHING = Selector((), nothing=True)


def as_selector(selector: LabelSelector | None) -> Selector:
    """metav1.LabelSelectorAsSelector."""
    if selector is None:
        return NOTHING
    requirements: list[Requirement] = [
        (key, "In", frozenset((value,))) for key, value in sorted(selector.match_labels.items())
    ]
    requirements.extend(
        (expr.key, expr.operator, frozenset(expr.values)) for expr in selector.match_expressions
    )
    return Selector(tuple(requirements))


def selector_from_set(labels: Mapping[str, str]) -> Selector:
    """labels.SelectorFromSet: every key equals its value."""
    return Selector(tuple((k, "In", frozenset((v,))) for k, v in sorted(labels.items())))
