"""Elementary functions that give the same bits on every CPU.

numpy chooses the loops of its transcendental functions for the CPU it runs on
(``numpy.lib.introspect.opt_func_info``): on a CPU with AVX-512, float64 ``np.exp``
and ``np.log`` run numpy's AVX512F code and ``np.log1p``, ``np.expm1`` and ``np.power``
Intel's SVML, where a CPU with AVX2 only runs the C library's (``np.tanh`` differs on
the baseline loops). All are accurate to about one unit in the last place (ulp), but
not to the same bits: on numpy 2.4 the AVX-512 and AVX2 loops differ in the last bit for
a few percent of inputs (``python scripts/benchmarks/bench_portable.py --dispatch``
counts them). A table's calibrated scale and block parameters computed with them then
differ between an AVX2 and an AVX-512 machine, and so do its file's bytes.

The functions here are built from the operations IEEE 754 rounds exactly, the same way
in every SIMD loop (``+ - * /``, ``rint``, ``ldexp``, comparisons and integer operations
on the float's bits): the same input gives the same output bits on any CPU, at any of
numpy's dispatch levels and with any C library. ``exp`` and ``log`` follow fdlibm's
algorithms and coefficients (Sun Microsystems' freely distributable libm, also in
FreeBSD and musl): error below one ulp. ``expm1`` is fdlibm's near 0 and Kahan's
formulation on ``exp`` and ``log`` beyond, ``log1p`` Goldberg's on ``log``; ``tanh`` and
``power`` are built on those: within a few ulp. They cost ten to thirty times numpy's
loops, so they serve where a value is stored or decides
a draw of the data (a model's parameters at a scale, the calibration's first guess, the
draws of sparse tables); the inference engine's inner loops keep numpy's
(docs/releases.md, "The same bytes on another CPU").

Examples
--------
>>> import lbm_bench._portable as portable
>>> float(portable.exp(0.0)), float(portable.log(1.0)), float(portable.expm1(0.0))
(1.0, 0.0, 0.0)
>>> import math
>>> # an ulp apart here: the point is the same bits everywhere
>>> float(portable.exp(1.0)), math.exp(1.0)
(2.7182818284590455, 2.718281828459045)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["exp", "expm1", "log", "log1p", "power", "tanh"]

# fdlibm e_exp.c: ln2 split in a high part with 21 trailing zero bits (k * _LN2_HI is exact
# for |k| < 2**21) and the low part; the coefficients of its rational approximation.
_LN2_HI = 6.93147180369123816490e-01  # 0x3fe62e42 fee00000
_LN2_LO = 1.90821492927058770002e-10  # 0x3dea39ef 35793c76
_INV_LN2 = 1.44269504088896338700e00  # 0x3ff71547 652b82fe
_P1 = 1.66666666666666019037e-01  # 0x3FC55555 5555553E
_P2 = -2.77777777770155933842e-03  # 0xBF66C16C 16BEBD93
_P3 = 6.61375632143793436117e-05  # 0x3F11566A AF25DE2C
_P4 = -1.65339022054652515390e-06  # 0xBEBBBD41 C5D26BF1
_P5 = 4.13813679705723846039e-08  # 0x3E663769 72BEA4D0
_EXP_OVERFLOW = 7.09782712893383973096e02  # exp(x) is inf above
_EXP_UNDERFLOW = -7.45133219101941108420e02  # exp(x) is 0 below
# fdlibm s_expm1.c: the coefficients of its rational approximation; below -56 ln2, -1.
_Q1 = -3.33333333333331316428e-02  # 0xBFA11111 111110F4
_Q2 = 1.58730158725481460165e-03  # 0x3F5A01A0 19FE5585
_Q3 = -7.93650757867487942473e-05  # 0xBF14CE19 9EAADBB7
_Q4 = 4.00821782732936239552e-06  # 0x3ED0CFCA 86E65239
_Q5 = -2.01099218183624371326e-07  # 0xBE8AFDB7 6E09C32D
_EXPM1_MINUS_ONE = -38.816242111356935  # -56 ln2
_HALF_LN2 = 0.34657359027997264  # ln2 / 2: k = 0 below

# fdlibm e_log.c: coefficients of log(1 + f) = f - f^2 / 2 + s (f^2 / 2 + R(s^2)), s = f / (2 + f).
_LG1 = 6.666666666666735130e-01  # 0x3FE55555 55555593
_LG2 = 3.999999999940941908e-01  # 0x3FD99999 9997FA04
_LG3 = 2.857142874366239149e-01  # 0x3FD24924 94229359
_LG4 = 2.222219843214978396e-01  # 0x3FCC71C5 1D8E78AF
_LG5 = 1.818357216161805012e-01  # 0x3FC74664 96CB03DE
_LG6 = 1.531383769920937332e-01  # 0x3FC39A09 D078C69F
_LG7 = 1.479819860511658591e-01  # 0x3FC2F112 DF3E5244
_SQRT2_MANTISSA = np.int64(0x6A09E667F3BCD)  # the fraction bits of sqrt(2)
_SMALLEST_NORMAL = 2.2250738585072014e-308
_TWO_54 = 18014398509481984.0
_MANTISSA = np.int64(0x000FFFFFFFFFFFFF)
_ONE_BITS = np.int64(0x3FF0000000000000)


#: Elements per block: a function's temporaries (a dozen arrays of a block) stay in the
#: cache; longer inputs go through block by block (the same bits: elementwise).
_BLOCK = 4096


def _elementwise(kernel: Callable[[np.ndarray], np.ndarray]) -> Callable[[Any], np.ndarray]:
    """The function of any array-like of ``kernel`` (1-d float64 in, 1-d float64 out),
    applied block by block; the result has the input's shape (0-d for a scalar)."""

    @functools.wraps(kernel)
    def function(x: Any) -> np.ndarray:
        array = np.asarray(x, dtype=np.float64)
        flat = array.reshape(-1)
        if flat.size <= _BLOCK:
            return kernel(flat).reshape(array.shape)
        out = np.empty(flat.size)
        for start in range(0, flat.size, _BLOCK):
            out[start : start + _BLOCK] = kernel(flat[start : start + _BLOCK])
        return out.reshape(array.shape)

    return function


@_elementwise
def exp(x: np.ndarray) -> np.ndarray:
    """``e ** x``, the same bits on every CPU (fdlibm's algorithm, error below 1 ulp).

    Parameters
    ----------
    x : array-like of float

    Returns
    -------
    ndarray of float64, the shape of ``x`` (0-d for a scalar)
    """
    ordinary = (x >= _EXP_UNDERFLOW) & (x <= _EXP_OVERFLOW)  # False for NaN
    plain = bool(ordinary.all())
    xs = x if plain else np.where(ordinary, x, 0.0)
    # exp(x) = 2^k exp(r), |r| <= ln2 / 2, r = hi - lo; in place, each step rounded as written
    k = np.multiply(xs, _INV_LN2)
    np.rint(k, out=k)
    hi = np.multiply(k, _LN2_HI)
    np.subtract(xs, hi, out=hi)
    lo = np.multiply(k, _LN2_LO)
    r = np.subtract(hi, lo)
    t = np.multiply(r, r)
    c = np.multiply(t, _P5)  # c = r - t (P1 + t (P2 + t (P3 + t (P4 + t P5))))
    for coefficient in (_P4, _P3, _P2, _P1):
        c += coefficient
        c *= t
    np.subtract(r, c, out=c)
    y = np.subtract(2.0, c, out=t)  # y = 1 - ((lo - r c / (2 - c)) - hi)
    np.multiply(r, c, out=r)
    np.divide(r, y, out=y)
    np.subtract(lo, y, out=y)
    y -= hi
    np.subtract(1.0, y, out=y)
    out = np.ldexp(y, k.astype(np.int32), out=y)  # exact, but for a subnormal result (one rounding)
    if not plain:
        out = np.where(ordinary, out, np.where(x > 0.0, np.inf, 0.0))
        out[np.isnan(x)] = np.nan
    return out


@_elementwise
def log(x: np.ndarray) -> np.ndarray:
    """Natural logarithm, the same bits on every CPU (fdlibm's algorithm, error below 1 ulp).

    ``-inf`` at 0, NaN below 0 (without numpy's warnings).

    Parameters
    ----------
    x : array-like of float

    Returns
    -------
    ndarray of float64, the shape of ``x`` (0-d for a scalar)
    """
    ordinary = (x >= _SMALLEST_NORMAL) & (x < np.inf)  # False for NaN
    plain = bool(ordinary.all())
    shift = 0
    if plain:
        bits = x.view(np.int64) if x.flags.c_contiguous else np.ascontiguousarray(x).view(np.int64)
    else:
        subnormal = (x > 0.0) & (x < _SMALLEST_NORMAL)
        xs = np.where(ordinary | subnormal, x, 1.0) * np.where(subnormal, _TWO_54, 1.0)  # exact
        bits = xs.view(np.int64)
        shift = np.where(subnormal, 54, 0)
    # x = 2^k m with sqrt(2) / 2 <= m < sqrt(2): m's exponent bits are those of 1 <= m < 2
    # (1023), or 1022 from sqrt(2) on (m halved, exactly)
    fraction = bits & _MANTISSA
    high = (fraction >= _SQRT2_MANTISSA).astype(np.int64)
    dk = ((bits >> 52) - 1023 + high - shift).astype(np.float64)
    high <<= 52
    np.subtract(_ONE_BITS, high, out=high)
    f = np.bitwise_or(fraction, high, out=fraction).view(np.float64)
    f -= 1.0  # exact
    # log(1 + f) = f - hfsq + s (hfsq + R), s = f / (2 + f), R = t2 + t1; in place
    s = np.add(f, 2.0)
    np.divide(f, s, out=s)
    z = np.multiply(s, s)
    w = np.multiply(z, z)
    t1 = np.multiply(w, _LG6)  # t1 = w (LG2 + w (LG4 + w LG6))
    t1 += _LG4
    t1 *= w
    t1 += _LG2
    t1 *= w
    t2 = np.multiply(w, _LG7)  # t2 = z (LG1 + w (LG3 + w (LG5 + w LG7)))
    for coefficient in (_LG5, _LG3):
        t2 += coefficient
        t2 *= w
    t2 += _LG1
    t2 *= z
    t2 += t1  # R
    hfsq = np.multiply(f, f, out=w)
    hfsq *= 0.5  # 0.5 f f: halving is exact, so the order does not matter
    t2 += hfsq
    t2 *= s
    out = np.multiply(dk, _LN2_LO, out=t1)  # ((((s (hfsq + R)) + k ln2_lo) - hfsq) + f) + k ln2_hi
    np.add(t2, out, out=out)
    out -= hfsq
    out += f
    np.multiply(dk, _LN2_HI, out=dk)
    out += dk
    if not plain:
        special = np.where(x == 0.0, -np.inf, np.where(x == np.inf, np.inf, np.nan))  # NaN below 0
        out = np.where(ordinary | subnormal, out, special)
    return out


@_elementwise
def log1p(x: np.ndarray) -> np.ndarray:
    """``log(1 + x)``, accurate for small ``x``, the same bits on every CPU (a few ulp).

    Goldberg's formulation: with ``u = 1 + x`` rounded, ``log(u) * (x / (u - 1))``
    (``x`` itself when ``u`` rounds to 1).

    Parameters
    ----------
    x : array-like of float

    Returns
    -------
    ndarray of float64
    """
    u = 1.0 + x
    d = u - 1.0
    ordinary = (d != 0.0) & (x > -1.0) & (x < np.inf)  # False for NaN
    if ordinary.all():
        return log(u) * (x / d)
    out = log(np.where(ordinary, u,
                       1.0)) * (np.where(ordinary, x, 0.0) / np.where(ordinary, d, 1.0))
    special = np.where(x == -1.0, -np.inf, np.where(x < -1.0, np.nan, x))  # x: tiny, inf or NaN
    return np.where(ordinary, out, special)


def _expm1_near(x: np.ndarray) -> np.ndarray:
    """fdlibm's ``expm1`` for ``|x| <= ln2 / 2`` (its case k = 0): ``x - (x e - x^2 / 2)``."""
    hfx = np.multiply(x, 0.5)
    hxs = np.multiply(x, hfx)
    r1 = np.multiply(hxs, _Q5)  # r1 = 1 + hxs (Q1 + hxs (Q2 + hxs (Q3 + hxs (Q4 + hxs Q5))))
    for coefficient in (_Q4, _Q3, _Q2, _Q1):
        r1 += coefficient
        r1 *= hxs
    r1 += 1.0
    t = np.multiply(r1, hfx, out=hfx)
    np.subtract(3.0, t, out=t)  # t = 3 - r1 hfx
    e = np.subtract(r1, t, out=r1)  # e = hxs ((r1 - t) / (6 - x t))
    t *= x
    np.subtract(6.0, t, out=t)
    e /= t
    e *= hxs
    e *= x
    e -= hxs
    return np.subtract(x, e, out=e)


@_elementwise
def expm1(x: np.ndarray) -> np.ndarray:
    """``exp(x) - 1``, accurate for small ``x``, the same bits on every CPU (within 2 ulp).

    fdlibm's rational approximation for ``|x| <= ln2 / 2`` (error below 1 ulp); beyond,
    Kahan's formulation on :func:`exp` and :func:`log`: with ``u = exp(x)`` rounded,
    ``(u - 1) * (x / log(u))``. -1 below ``-56 ln2``.

    Parameters
    ----------
    x : array-like of float

    Returns
    -------
    ndarray of float64
    """
    near = np.abs(x) <= _HALF_LN2  # False for NaN
    if near.all():
        return _expm1_near(x)
    out = np.empty_like(x)
    out[near] = _expm1_near(x[near])
    far = ~near & (x >= _EXPM1_MINUS_ONE) & (x <= _EXP_OVERFLOW)
    u = exp(x[far])
    out[far] = (u - 1.0) * (x[far] / log(u))
    rest = ~(near | far)
    # NaN stays NaN
    out[rest] = np.where(x[rest] > 0.0, np.inf, np.where(x[rest] < 0.0, -1.0, np.nan))
    return out


def tanh(x: Any) -> np.ndarray:
    """Hyperbolic tangent, the same bits on every CPU (a few ulp): ``-e / (2 + e)`` with
    ``e = expm1(-2 |x|)``, with the sign of ``x``.

    Parameters
    ----------
    x : array-like of float

    Returns
    -------
    ndarray of float64
    """
    x = np.asarray(x, dtype=np.float64)
    e = expm1(-2.0 * np.abs(x))
    return np.copysign(-e / (2.0 + e), x)


def power(base: Any, exponent: Any) -> np.ndarray:
    """``base ** exponent`` for positive ``base``, as ``exp(exponent * log(base))``: the
    same bits on every CPU, error below ``2 |exponent log(base)| + 1`` ulp (the rounding of
    the product, carried by ``exp``).

    Parameters
    ----------
    base : array-like of float, positive
    exponent : array-like of float

    Returns
    -------
    ndarray of float64, the broadcast shape
    """
    return exp(np.asarray(exponent, dtype=np.float64) * log(base))
