"""Resource quantities with Kubernetes' semantics.

Mirrors k8s.io/apimachinery/pkg/api/resource/quantity.go. A quantity is kept as an exact
fraction, so sums and comparisons never lose precision; ``value()`` and ``milli_value()`` round
up the way upstream's ``Value()`` and ``MilliValue()`` do (away from zero).

Deliberately different: a quantity of more than ``MAX_DIGITS`` digits (not counting leading or
trailing zeros) is refused, where upstream reads any length: turning that many digits into a
number takes Python time quadratic in their count (and past 4300, a ValueError). And where a
manifest is read (``Quantity.parse(text, in_range=True)``), a quantity whose magnitude exceeds
int64 is refused (``RANGE_ERROR``, in the words of upstream's ``InclusiveRangeError``): upstream
caps a binary one at 2^63-1 and keeps a decimal one as a big decimal whose ``Value()`` and
``MilliValue()`` then overflow, so ``cpu: 1e1000000`` or ``1e308`` asks for a number of CPUs no
node can have by accident of arithmetic; here it is refused, with the field named.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import total_ordering

# Upstream's error text when a string is not a quantity (resource.ErrFormatWrong).
QUANTITY_FORMAT_ERROR = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL_EXPONENTS = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
# parseQuantityString's shape: a signed decimal number, then a suffix of suffix letters with an
# optional signed integer (the exponent form).
_SHAPE = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?([eEinumkKMGTP]*[-+]?\d*)")
_EXPONENT = re.compile(r"[eE]([+-]?\d+)")
# Upstream's error for a well-formed suffix that means nothing (resource.ErrSuffix).
SUFFIX_ERROR = "unable to parse quantity's suffix"
MAX_DIGITS = 1000
TOO_MANY_DIGITS_ERROR = f"quantities must have at most {MAX_DIGITS} digits"
# Amounts are rounded up (away from zero) to nano precision and capped at the int64 range.
_NANO = 10**9
MAX_AMOUNT = Fraction(2**63 - 1)
# Past int64, refused where a manifest is read (module docstring).
RANGE_ERROR = f"must be between {-(2**63 - 1)} and {2**63 - 1}, inclusive"
_INT32 = 2**31


class QuantityError(ValueError):
    """The string is not a Kubernetes quantity."""


def _ceil_away_from_zero(value: Fraction) -> int:
    if value >= 0:
        return -((-value.numerator) // value.denominator)
    return value.numerator // value.denominator


@total_ordering
class Quantity:
    """An exact quantity, e.g. ``Quantity.parse("100m")``."""

    __slots__ = ("_text", "amount")

    def __init__(self, amount: Fraction | int, text: str | None = None) -> None:
        self.amount = Fraction(amount)
        self._text = text

    @classmethod
    def parse(cls, text: str, *, in_range: bool = False) -> Quantity:
        """``in_range``: a magnitude past int64 is refused (``RANGE_ERROR``) instead of capped."""
        return cls(parse_amount(text, in_range=in_range), text)

    def value(self) -> int:
        """The value rounded up to an integer (upstream ``Quantity.Value``)."""
        return _ceil_away_from_zero(self.amount)

    def milli_value(self) -> int:
        """The value in thousandths, rounded up (upstream ``Quantity.MilliValue``)."""
        return _ceil_away_from_zero(self.amount * 1000)

    def __add__(self, other: Quantity) -> Quantity:
        return Quantity(self.amount + other.amount)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.amount == other.amount

    def __lt__(self, other: Quantity) -> bool:
        return self.amount < other.amount

    def __hash__(self) -> int:
        return hash(self.amount)

    def __str__(self) -> str:
        return self._text if self._text is not None else format_amount(self.amount)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"


def parse_amount(text: str, *, in_range: bool = False) -> Fraction:
    """Parses a quantity string as ``resource.ParseQuantity`` does, or raises QuantityError.

    Upstream keeps a quantity exactly when it fits its int64 fast path (at most 18 significant
    digits, no finer than a nano, or a whole number with a small binary suffix); otherwise it
    rounds up to the nearest nano, away from zero, and caps the magnitude at 2^63-1 (with
    ``in_range``, refuses it: the module docstring).
    """
    if not isinstance(text, str) or not text:
        raise QuantityError(QUANTITY_FORMAT_ERROR)
    match = _SHAPE.fullmatch(text)
    if match is None:
        raise QuantityError(QUANTITY_FORMAT_ERROR)
    sign, whole, fraction, suffix = match.groups()
    if not whole and fraction is None:
        raise QuantityError(QUANTITY_FORMAT_ERROR)
    digits = fraction or ""
    # Zeros that do not change the value are not converted (nor counted against the limit).
    whole_digits, fraction_digits = whole.lstrip("0"), digits.rstrip("0")
    if len(whole_digits) + len(fraction_digits) > MAX_DIGITS:
        raise QuantityError(TOO_MANY_DIGITS_ERROR)
    number = Fraction(int(whole_digits or "0")) + Fraction(
        int(fraction_digits or "0"), 10 ** len(fraction_digits)
    )
    amount, exact = _with_suffix(number, suffix, whole, digits)
    if not exact:
        if amount > MAX_AMOUNT:
            if in_range:
                raise QuantityError(RANGE_ERROR)
            amount = MAX_AMOUNT
        if (amount * _NANO).denominator != 1:
            amount = Fraction(math.ceil(amount * _NANO), _NANO)
    return -amount if sign == "-" else amount


def _with_suffix(number: Fraction, suffix: str, whole: str, digits: str) -> tuple[Fraction, bool]:
    """The unsigned amount, and whether upstream's int64 fast path keeps it exactly."""
    significant = len(whole) + len(digits)
    if suffix in _BINARY:
        power = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}[suffix]
        amount = number * _BINARY[suffix]
        exact = not digits and 15 - len(whole) - power * 3 // 10 - 1 >= 0 and amount <= MAX_AMOUNT
        return amount, exact
    if suffix in _DECIMAL_EXPONENTS:
        power = _DECIMAL_EXPONENTS[suffix]
    else:
        exponent = _EXPONENT.fullmatch(suffix)
        if exponent is None or not -_INT32 <= int(exponent.group(1)) < _INT32:
            raise QuantityError(SUFFIX_ERROR)
        power = int(exponent.group(1))
    exact = 18 - significant >= 0 and power - len(digits) >= -9
    if number and power - len(digits) > 40:
        # Far beyond anything a resource holds; not worth building a huge integer.
        return MAX_AMOUNT + 1, False
    if number and power + len(whole) < -10:
        return Fraction(1, _NANO), True  # below a nano: rounds up to one
    return number * Fraction(10) ** power, exact


def format_amount(amount: Fraction) -> str:
    """A readable canonical form: integers as is, otherwise in milli units rounded up."""
    if amount.denominator == 1:
        return str(amount.numerator)
    milli = _ceil_away_from_zero(amount * 1000)
    return f"{milli}m"
