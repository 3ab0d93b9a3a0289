"""Quantity parsing, after apimachinery pkg/api/resource/quantity_test.go (TestQuantityParse).

Amounts round up to nano precision and saturate at 2^63-1, as upstream's do; where a manifest is
read, past 2^63-1 is refused.
"""

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedviz.kube.decode import decode_object
from schedviz.kube.errors import InvalidObjectError
from schedviz.kube.quantity import QUANTITY_FORMAT_ERROR, Quantity, QuantityError

KI, MI, GI, TI, PI, EI = (1024**n for n in range(1, 7))

PARSE_CASES = [
    ("0", 0),
    ("0n", 0),
    ("0u", 0),
    ("0m", 0),
    ("0Ki", 0),
    ("0k", 0),
    ("0Mi", 0),
    ("0M", 0),
    ("0Gi", 0),
    ("0G", 0),
    ("0Ti", 0),
    ("0T", 0),
    ("1", 1),
    # binary suffixes
    ("1Ki", KI),
    ("8Ki", 8 * KI),
    ("7Mi", 7 * MI),
    ("6Gi", 6 * GI),
    ("5Ti", 5 * TI),
    ("4Pi", 4 * PI),
    ("3Ei", 3 * EI),
    ("10Ti", 10 * TI),
    ("100Ti", 100 * TI),
    # decimal suffixes
    ("5n", Fraction(5, 10**9)),
    ("4u", Fraction(4, 10**6)),
    ("3m", Fraction(3, 1000)),
    ("9", 9),
    ("8k", 8000),
    ("50k", 50_000),
    ("7M", 7 * 10**6),
    ("6G", 6 * 10**9),
    ("5T", 5 * 10**12),
    ("40T", 40 * 10**12),
    ("300T", 300 * 10**12),
    ("2P", 2 * 10**15),
    ("1E", 10**18),
    ("12E", 12 * 10**18),
    # decimal exponents
    ("1E-3", Fraction(1, 1000)),
    ("1e3", 1000),
    ("1E6", 10**6),
    ("1e9", 10**9),
    ("1E12", 10**12),
    ("1e15", 10**15),
    ("1E18", 10**18),
    ("1e14", 10**14),
    ("1e13", 10**13),
    ("100.035k", 100_035),
    # things that look like floating point
    ("0.001", Fraction(1, 1000)),
    ("0.0005k", Fraction(1, 2)),
    ("0.005", Fraction(5, 1000)),
    ("0.05", Fraction(5, 100)),
    ("0.5", Fraction(1, 2)),
    ("0.00050k", Fraction(1, 2)),
    ("0.00500", Fraction(5, 1000)),
    ("0.05000", Fraction(5, 100)),
    ("0.50000", Fraction(1, 2)),
    ("0.5e0", Fraction(1, 2)),
    ("0.5e-1", Fraction(5, 100)),
    ("0.5e-2", Fraction(5, 1000)),
    ("10.035M", 10_035_000),
    ("1.2e3", 1200),
    ("1.3E+6", 1_300_000),
    ("1.40e9", 1_400_000_000),
    ("1.53E12", 153 * 10**10),
    ("1.6e15", 16 * 10**14),
    ("1.7E18", 17 * 10**17),
    ("9.01", Fraction(901, 100)),
    ("8.1k", 8100),
    ("7.123456M", 7_123_456),
    ("6.987654321G", 6_987_654_321),
    ("5.444T", 5444 * 10**9),
    ("40.1T", 401 * 10**11),
    ("300.2T", 3002 * 10**11),
    ("2.5P", 25 * 10**14),
    ("1.01E", 101 * 10**16),
    # fractional binary
    ("100.035Ki", Fraction(10243584, 100)),
    ("0.5Mi", MI // 2),
    ("0.05Gi", Fraction(536870912, 10)),
    ("0.025Ti", Fraction(274877906944, 10)),
    # written by trolls
    (".001", Fraction(1, 1000)),
    (".0001k", Fraction(1, 10)),
    ("1.", 1),
    ("1.G", 10**9),
]

# Upstream rounds up to nano precision and saturates at 2^63-1.
ROUNDING_CASES = [
    ("3.001n", Fraction(4, 10**9)),
    ("1.1E-9", Fraction(2, 10**9)),
    ("0.0000000001", Fraction(1, 10**9)),
    ("0.0000000005", Fraction(1, 10**9)),
    ("0.00000000050", Fraction(1, 10**9)),
    ("0.5e-9", Fraction(1, 10**9)),
    ("0.9n", Fraction(1, 10**9)),
    ("0.00000012345", Fraction(124, 10**9)),
    ("0.00000012354", Fraction(124, 10**9)),
    ("0.000000000001Ki", Fraction(2, 10**9)),
    ("9Ei", 2**63 - 1),
    ("9223372036854775807Ki", 2**63 - 1),
]

# parseQuantityString refuses these with ErrFormatWrong (the regular expression message).
INVALID_FORMAT = ["", "1.1.M", "1+1.0M", "0.1am", "aoeu", " 1", "1 ", "1.5.3", "Non-Numeric"]
# These have a well-formed suffix that means nothing: upstream says ErrSuffix.
INVALID_SUFFIX = ["0.1mi", ".5i", "1i", "-3.01i", "-3.01e-", "1e4294967297"]
ERR_SUFFIX = "unable to parse quantity's suffix"


@pytest.mark.parametrize(("text", "amount"), PARSE_CASES)
def test_it_parses_upstream_quantities(text: str, amount: Fraction | int) -> None:
    assert Quantity.parse(text).amount == amount


@pytest.mark.parametrize(("text", "amount"), PARSE_CASES)
def test_it_parses_signed_quantities(text: str, amount: Fraction | int) -> None:
    assert Quantity.parse("-" + text).amount == -amount
    assert Quantity.parse("+" + text).amount == amount


@pytest.mark.parametrize(("text", "amount"), ROUNDING_CASES)
def test_it_rounds_and_saturates_like_upstream(text: str, amount: Fraction | int) -> None:
    assert Quantity.parse(text).amount == amount


@pytest.mark.parametrize("text", INVALID_FORMAT)
def test_it_rejects_malformed_quantities_with_upstream_message(text: str) -> None:
    with pytest.raises(QuantityError) as error:
        Quantity.parse(text)
    assert str(error.value) == QUANTITY_FORMAT_ERROR


@pytest.mark.parametrize("text", INVALID_SUFFIX)
def test_it_rejects_unknown_suffixes(text: str) -> None:
    with pytest.raises(QuantityError):
        Quantity.parse(text)


@pytest.mark.parametrize("text", INVALID_SUFFIX)
def test_it_rejects_unknown_suffixes_with_err_suffix(text: str) -> None:
    with pytest.raises(QuantityError) as error:
        Quantity.parse(text)
    assert str(error.value) == ERR_SUFFIX


@pytest.mark.parametrize("text", [".", "-.", "+."])
def test_a_lone_point_is_zero(text: str) -> None:
    assert Quantity.parse(text).amount == 0


@pytest.mark.parametrize(
    ("text", "value", "milli"),
    [
        ("1.5m", 1, 2),
        ("-1.5m", -1, -2),
        ("100m", 1, 100),
        ("0.1", 1, 100),
        ("1", 1, 1000),
        ("1.0001", 2, 1001),
        ("1n", 1, 1),
        ("-1n", -1, -1),
        ("1Ki", 1024, 1024000),
        ("0", 0, 0),
    ],
)
def test_value_and_milli_value_round_away_from_zero(text: str, value: int, milli: int) -> None:
    quantity = Quantity.parse(text)
    assert quantity.value() == value
    assert quantity.milli_value() == milli


def test_comparisons_are_exact() -> None:
    assert Quantity.parse("100m") > Quantity.parse("50m")
    assert Quantity.parse("10000T") > Quantity.parse("100Gi")
    assert Quantity.parse("1000m") == Quantity.parse("1")
    assert Quantity.parse("1Ki") + Quantity.parse("1Ki") == Quantity.parse("2Ki")


SUFFIXES = {
    "": 1,
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
    "Ki": KI,
    "Mi": MI,
    "Gi": GI,
    "Ti": TI,
    "Pi": PI,
    "Ei": EI,
}


@given(st.integers(min_value=-(10**12), max_value=10**12), st.sampled_from(sorted(SUFFIXES)))
def test_an_integer_with_a_suffix_is_the_integer_times_the_multiplier(n: int, suffix: str) -> None:
    expected = n * SUFFIXES[suffix]
    if suffix.endswith("i") and abs(expected) > 2**63 - 1:
        # Past int64 a binary amount takes upstream's slow path, which saturates.
        expected = (2**63 - 1) * (1 if n > 0 else -1)
    assert Quantity.parse(f"{n}{suffix}").amount == expected


# Past int64 in magnitude: saturated by the parser (upstream's cap), refused where a manifest is
# read (the module docstring of schedviz/kube/quantity.py).
OUT_OF_RANGE = [
    "1e1000000",
    "1e308",
    "9" * 40 + "Ei",
    "9Ei",
    "9223372036854775808",
    "9223372036854775807001m",
    "-1e308",
]
IN_RANGE = [("9223372036854775807", 2**63 - 1), ("7Ei", 7 * EI), ("1e18", 10**18)]
RANGE_MESSAGE = "must be between -9223372036854775807 and 9223372036854775807, inclusive"


@pytest.mark.parametrize("text", OUT_OF_RANGE)
def test_a_manifests_quantity_past_int64_is_refused_not_capped(text: str) -> None:
    with pytest.raises(QuantityError) as refused:
        Quantity.parse(text, in_range=True)
    assert str(refused.value) == RANGE_MESSAGE
    assert abs(Quantity.parse(text).amount) == 2**63 - 1  # the parser alone saturates


@pytest.mark.parametrize(("text", "amount"), IN_RANGE)
def test_a_manifests_quantity_up_to_int64_is_kept(text: str, amount: int) -> None:
    assert Quantity.parse(text, in_range=True).amount == amount


@pytest.mark.parametrize("text", ["1e1000000", "1e308", "9" * 40 + "Ei"])
def test_a_pod_asking_for_a_quantity_past_int64_is_invalid_naming_the_field(text: str) -> None:
    doc = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "greedy"},
        "spec": {
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": text}}}]
        },
    }
    with pytest.raises(InvalidObjectError) as refused:
        decode_object(doc)
    assert str(refused.value) == (
        'Pod "greedy" is invalid: spec.containers[0].resources.requests[cpu]: '
        f'Invalid value: "{text}": {RANGE_MESSAGE}'
    )
