"""Names the API server generates for ``metadata.generateName``.

Mirrors k8s.io/apiserver/pkg/storage/names/generate.go (``SimpleNameGenerator``: the base cut to
58 characters, then 5 characters of k8s.io/apimachinery/pkg/util/rand's alphabet) and the
retry on a taken name of RetryGenerateName (GA in v1.32: up to 7 more tries). Deliberately
different: the characters come from a seeded generator, so the same input gives the same names.
"""

from __future__ import annotations

import random

# util/rand's alphabet: no vowels (no words), no confusable 0, 1, 3.
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
MAX_NAME_LENGTH = 63
RANDOM_LENGTH = 5
MAX_GENERATED_NAME_LENGTH = MAX_NAME_LENGTH - RANDOM_LENGTH
# The API server's tries after the first, when the generated name is taken.
GENERATE_NAME_ATTEMPTS = 7


def random_suffix(rng: random.Random, length: int = RANDOM_LENGTH) -> str:
    """util/rand.String: ``length`` characters of ``ALPHANUMS``."""
    return "".join(rng.choice(ALPHANUMS) for _ in range(length))


class NameGenerator:
    """SimpleNameGenerator over a seeded source."""

    def __init__(self, seed: int = 0) -> None:
        self._rng = random.Random(seed)

    def generate(self, base: str) -> str:
        return base[:MAX_GENERATED_NAME_LENGTH] + random_suffix(self._rng)
