"""lbm_bench._portable: elementary functions with the same bits on every CPU (issue 35).

Accuracy is measured against the C library (Python's math), which rounds correctly in
nearly all cases; the bits are compared across numpy's dispatch levels, emulated here
(tests/cpu_levels.py).
"""

import hashlib
import json
import math
import warnings

import numpy as np
import pytest

from lbm_bench import _portable
from tests.cpu_levels import available_levels, run_at_level

FUNCTIONS = {"exp": math.exp, "log": math.log, "log1p": math.log1p, "expm1": math.expm1, "tanh": math.tanh}


def _samples() -> dict[str, np.ndarray]:
    """Seeded arguments over each function's range: wide, near the interesting points, tiny
    (built by exact operations: np.exp's own bits follow the CPU)."""
    rng = np.random.default_rng(35)
    wide = np.ldexp(rng.uniform(1.0, 2.0, 20000), rng.integers(-1000, 1000, 20000))
    return {
        "exp": np.concatenate([rng.uniform(-745, 709.7, 20000), rng.uniform(-1, 1, 20000),
                               rng.uniform(-1e-9, 1e-9, 2000)]),
        "log": np.concatenate([wide, rng.uniform(0.5, 2.0, 20000), rng.uniform(1 - 1e-6, 1 + 1e-6, 2000),
                               [5e-324, 1e-310, 2.2250738585072014e-308, 1.7976931348623157e308]]),
        "log1p": np.concatenate([rng.uniform(-0.9999, 10, 20000), rng.uniform(-1e-6, 1e-6, 2000), wide]),
        "expm1": np.concatenate([rng.uniform(-60, 60, 20000), rng.uniform(-1e-6, 1e-6, 2000),
                                 rng.uniform(-1, 1, 20000), rng.uniform(600, 709.7, 1000)]),
        "tanh": np.concatenate([rng.uniform(-25, 25, 20000), rng.uniform(-1e-5, 1e-5, 2000)]),
    }


#: Largest distance to the C library's result, in units in the last place: fdlibm's exp and
#: log are within 1 ulp of the true value, as is the C library's; log1p and expm1 add a
#: rounding or two to them, tanh a few more.
ULPS = {"exp": 1, "log": 1, "log1p": 2, "expm1": 2, "tanh": 4}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_within_an_ulp_or_two_of_the_c_library(name):
    x = _samples()[name]
    got = getattr(_portable, name)(x)
    reference = np.array([FUNCTIONS[name](v) for v in x.tolist()])
    ulps = np.abs(got - reference) / np.spacing(np.abs(reference))
    assert ulps.max() <= ULPS[name]


def test_power_within_its_stated_rounding():
    rng = np.random.default_rng(1)
    base, exponent = rng.uniform(0.5, 1.5, 5000), rng.uniform(0.0, 20.0, 5000)
    got = _portable.power(base, exponent)
    reference = np.array([math.pow(b, e) for b, e in zip(base.tolist(), exponent.tolist(), strict=True)])
    ulps = np.abs(got - reference) / np.spacing(reference)
    assert np.all(ulps <= 2 * np.abs(exponent * np.log(base)) + 1)


SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1e-310, 709.78, 709.79, 710.0,
                    -745.13, -745.14, -746.0, 1.0, -1.0, -1.5, 2.0, 1e300, -1e300])


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_special_values_as_numpy_without_warnings(name):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        expected = getattr(np, name)(SPECIAL)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = getattr(_portable, name)(SPECIAL)
    same = (got == expected) | (np.isnan(got) & np.isnan(expected))
    finite = np.isfinite(got) & np.isfinite(expected)
    same[finite] |= np.abs(got[finite] - expected[finite]) <= 4 * np.spacing(np.abs(expected[finite]))
    assert np.all(same), SPECIAL[~same]


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_shapes_scalars_and_blocks(name):
    f = getattr(_portable, name)
    x = np.random.default_rng(2).uniform(0.01, 3.0, (3, 5000))  # longer than a block (4096)
    out = f(x)
    assert out.shape == x.shape and out.dtype == np.float64
    assert np.array_equal(out[1], f(x[1])) and np.array_equal(out[2, 17], f(float(x[2, 17])))
    assert f(0.5).shape == () and f([0.5, 0.25]).shape == (2,)
    assert np.array_equal(f(x[:, ::7]), out[:, ::7])  # strided input: elementwise, the same bits


def _digests() -> dict[str, str]:
    out = {}
    for name, x in sorted(_samples().items()):
        out[name] = hashlib.sha256(getattr(_portable, name)(x).tobytes()).hexdigest()
    return out


_DIGESTS_CODE = """
import json
from tests.test_portable import _digests
print(json.dumps(_digests()))
"""


@pytest.mark.parametrize("level", available_levels())
def test_the_same_bits_at_every_dispatch_level(level):
    """numpy's AVX-512, AVX2 and baseline loops (emulated) give the functions' same bits."""
    assert run_at_level(level, _DIGESTS_CODE) == json.loads(json.dumps(_digests()))
