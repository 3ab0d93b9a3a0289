"""Quantities as upstream prints and defaults them.

Mirrors k8s.io/apimachinery/pkg/api/resource/quantity.go (Quantity.String(), the canonical form
every message shows) and pkg/apis/core/v1/defaults.go's SetDefaults_ResourceList (every quantity
rounded up to milli precision).
"""

from __future__ import annotations

import re
from fractions import Fraction

from schedviz.kube.quantity import Quantity

_DECIMAL_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P"}
_DECIMAL_SUFFIXES[18] = "E"
_BINARY_SUFFIXES = {0: "", 1: "Ki", 2: "Mi", 3: "Gi", 4: "Ti", 5: "Pi", 6: "Ei"}
_EXPONENT_SUFFIX = re.compile(r"[eE][+-]?\d+$")


def _ceil_away(value: Fraction) -> int:
    if value >= 0:
        return -((-value.numerator) // value.denominator)
    return value.numerator // value.denominator


def round_up_to_milli(quantity: Quantity) -> Quantity:
    """SetDefaults_ResourceList: every value is rounded up (away from zero) to milli precision."""
    milli = quantity.amount * 1000
    if milli.denominator == 1:
        return quantity
    return Quantity(Fraction(_ceil_away(milli), 1000))


def quantity_format(quantity: Quantity) -> str:
    """The quantity's format, as upstream keeps it: "binary", "exponent" or "decimal"."""
    text = str(quantity)
    if text[-2:] in ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"):
        return "binary"
    return "exponent" if _EXPONENT_SUFFIX.search(text) else "decimal"


def canonical_quantity(quantity: Quantity) -> str:
    """resource.Quantity.String(): "1.5" is "1500m", "1024Mi" is "1Gi", "2000" is "2k"."""
    return format_amount_as(quantity.amount, quantity_format(quantity))


def format_amount_as(value: Fraction, fmt: str) -> str:
    """String() of an amount in a format (what a sum of quantities prints: Add keeps the
    format of the quantity added to)."""
    amount = Fraction(_ceil_away(value * 10**9), 10**9)  # upstream keeps nano precision
    style = fmt
    if fmt == "binary":
        style = "binary" if not -1024 < amount < 1024 and amount.denominator == 1 else "decimal"
    if style == "binary":
        whole, power = int(amount), 0
        while whole % 1024 == 0 and power < 6:
            whole //= 1024
            power += 1
        return f"{whole}{_BINARY_SUFFIXES[power]}"
    mantissa, exponent = int(amount * 10**9), -9
    if mantissa == 0:
        return "0"
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    if exponent % 3 == 1:
        mantissa, exponent = mantissa * 10, exponent - 1
    elif exponent % 3 == 2:
        mantissa, exponent = mantissa * 100, exponent - 2
    if style == "exponent":
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    if exponent in _DECIMAL_SUFFIXES:
        return f"{mantissa}{_DECIMAL_SUFFIXES[exponent]}"
    return f"{mantissa}e{exponent}"
