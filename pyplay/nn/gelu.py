r"""The transformer's feed-forward activations, each with its derivative: relu and the exact
(erf) gelu, and the normal CDF that gelu needs, as a few whole-array NumPy calls.

.. math::

    \mathrm{gelu}(a) = a\,\Phi(a), \qquad
    \Phi(a) = \tfrac12\big(1 + \mathrm{erf}(a/\sqrt2)\big), \qquad
    \mathrm{gelu}'(a) = \Phi(a) + a\,\varphi(a), \quad
    \varphi(a) = \frac{e^{-a^2/2}}{\sqrt{2\pi}} .

NumPy has no ``erf``. :func:`normal_cdf_reference` applies :func:`math.erf` to every element
(exact to double precision, but one Python call per element: 35 ms for the lesson's (32, 10,
128) activations). :func:`normal_cdf` evaluates the same function with Cephes' rational
approximations (Moshier, ``ndtr.c``), accurate to a few units in the last place of float64,
on whole arrays: with :math:`x = a/\sqrt2` and :math:`z = |x|`,

.. math::

    \mathrm{erf}(x) = x\,\frac{T(z^2)}{U(z^2)} \quad (z < 1), \qquad
    \mathrm{erfc}(z) = e^{-z^2}\,\frac{P(z)}{Q(z)} \quad (1 \le z \le 8),

then :math:`\Phi = \tfrac12 + \tfrac12\mathrm{erf}(x)` for :math:`z < 1`, and
:math:`\Phi = \tfrac12\mathrm{erfc}(z)` (:math:`x < 0`) or :math:`1 - \tfrac12\mathrm{erfc}(z)`
(:math:`x > 0`) beyond. Past :math:`z = 8`, :math:`\mathrm{erfc}(z) < 10^{-28}`: ``z`` is
clipped to 8 in :math:`P/Q` there (an absolute error below :math:`10^{-28}`, far under
float64's resolution of :math:`\Phi` near 1; :func:`math.erf` itself returns exactly
:math:`\pm 1`). The factor :math:`e^{-z^2} = e^{-a^2/2}` is computed once and serves the
density :math:`\varphi` of the derivative too.

The arithmetic runs in the input's dtype. In float32 (the page's dtype) Cephes' degree-8
:math:`P/Q`, accurate to float64's last place, is more than the result can hold, so one
shorter rational serves every :math:`z` (no ``erf`` branch):

.. math::

    \tfrac12\,\mathrm{erfc}(z) = e^{-z^2}\,\frac{P_4(z)}{Q_5(z)}, \qquad 0 \le z \le 8,

with :math:`P_4` of degree 4 and :math:`Q_5` monic of degree 5, all coefficients positive
(Horner's rule adds no cancellation), and :math:`P_4/Q_5 \to 1/(2\sqrt\pi\,z)` as erfc's
asymptote wants. Its coefficients (:data:`_P32`, :data:`_Q32`) are a minimax fit of the
*relative* error of :math:`\tfrac12\mathrm{erfc}(z)\,e^{z^2}` on :math:`[0, 8]` (Lawson's
iteratively reweighted least squares against :func:`math.erfc`): at most
:math:`3.5 \times 10^{-9}` in exact arithmetic, so float32's own rounding (about
:math:`10^{-7}` of :math:`\Phi`) is the whole error, as it was with Cephes' formula; it costs
17 whole-array calls where Cephes' took 31. The tests check the fit's claim in float64 and
both dtypes against the reference.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["ACTIVATIONS", "activate", "normal_cdf", "normal_cdf_reference"]

ACTIVATIONS = ("relu", "gelu")

# Cephes ndtr.c: erf(x) = x T(x^2) / U(x^2) for |x| < 1 (U monic: its leading 1 left out)
_T = (9.60497373987051638749e0, 9.00260197203842689217e1, 2.23200534594684319226e3,
      7.00332514112805075473e3, 5.55923013010394962768e4)  # fmt: skip
_U = (3.35617141647503099647e1, 5.21357949780152679795e2, 4.59432382970980127987e3,
      2.26290000613890934246e4, 4.92673942608635921086e4)  # fmt: skip
# erfc(z) = exp(-z^2) P(z) / Q(z) for 1 <= z < 8 (Q monic)
_P = (2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0,
      4.86371970985681366614e1, 1.96520832956077098242e2, 5.26445194995477358631e2,
      9.34528527171957607540e2, 1.02755188689515710272e3, 5.57535335369399327526e2)  # fmt: skip
_Q = (1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2,
      9.75708501743205489753e2, 1.82390916687909736289e3, 2.24633760818710981792e3,
      1.65666309194161350182e3, 5.57535340817727675546e2)  # fmt: skip

# float32: erfc(z) / 2 = exp(-z^2) P(z) / Q(z) on 0 <= z <= 8 (the module docstring's fit;
# highest degree first, Q monic)
_P32 = (0.28210069061123927, 2.014243869090151, 6.530959000571953, 11.200800981038832,
        9.199836995305564)  # fmt: skip
_Q32 = (7.1410113413068474, 23.641244493346715, 43.36683316444954, 43.163417357690406,
        18.399673927091854)  # fmt: skip

_erf = np.frompyfunc(math.erf, 1, 1)  # exact to double precision, one Python call per element


def _horner(x: np.ndarray, coefs: tuple[float, ...], monic: bool) -> np.ndarray:
    """The polynomial with ``coefs`` (highest degree first; a leading 1 first when ``monic``)
    at ``x``, by Horner's rule in place: two calls per coefficient."""
    y = x + coefs[0] if monic else x * coefs[0]  # (...)
    if not monic:
        y += coefs[1]
    for c in coefs[1 if monic else 2 :]:
        y *= x
        y += c
    return y


def normal_cdf_reference(a: np.ndarray) -> np.ndarray:
    """:math:`\\Phi(a)` by :func:`math.erf` on every element (the plain version, slow)."""
    return 0.5 * (1.0 + np.asarray(_erf(a * math.sqrt(0.5)), dtype=a.dtype))  # (...)


def _cdf_and_gauss(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(Phi(a), exp(-a^2 / 2))``: the normal CDF by the approximations of the module
    docstring, and the Gaussian factor that its erfc branch and the density share (one ``exp``
    for both). Every call is a cheap one in Pyodide's NumPy: ``copysign(x, 1)`` for ``|x|``,
    ``minimum`` for the clip and ``where`` for the sign (``abs``, ``clip`` and a cast of a
    boolean mask each cost as much as an ``exp`` there)."""
    x = a * a.dtype.type(math.sqrt(0.5))  # (...) x = a / sqrt(2)
    z = np.copysign(x, 1.0)  # |x|
    zc = np.minimum(z, 8.0)  # the erfc branch's range (its values elsewhere are not used)
    single = a.dtype.itemsize < 8  # float32: one rational serves every z
    if single:
        tail = _horner(zc, _P32, False)
        tail /= _horner(zc, _Q32, True)  # erfc(z) exp(z^2) / 2
    else:
        np.maximum(zc, 1.0, out=zc)
        tail = _horner(zc, _P, False)
        tail /= _horner(zc, _Q, True)
        tail *= 0.5  # erfc(z) exp(z^2) / 2
    gauss = np.multiply(x, x)  # x^2 = a^2 / 2 (not clipped: past z = 8 both are below 1e-28)
    np.negative(gauss, out=gauss)
    np.exp(gauss, out=gauss)  # exp(-a^2 / 2)
    tail *= gauss  # erfc(z) / 2 = Phi(-|a|)
    cdf = np.where(x > 0.0, 1.0 - tail, tail)  # Phi(|a|) = 1 - Phi(-|a|) where a > 0
    if single:  # float32: done, within float32's rounding
        return cdf.astype(a.dtype, copy=False), gauss  # (...)
    x2 = x * x
    small = _horner(x2, _T, False)  # x T(x^2) / U(x^2): erf(x) for |x| < 1
    small *= x
    small /= _horner(x2, _U, True)
    small *= 0.5
    small += 0.5  # Phi for |x| < 1
    return np.where(z < 1.0, small, cdf).astype(a.dtype, copy=False), gauss  # (...)


def normal_cdf(a: np.ndarray) -> np.ndarray:
    """:math:`\\Phi(a)` (the standard normal CDF) elementwise, in ``a``'s float dtype, by the
    rational approximations of the module docstring (about 75 whole-array calls; 27 in
    float32, where one shorter rational serves the whole line)."""
    return _cdf_and_gauss(a)[0]


def activate(name: str, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(phi(a), phi'(a))`` for ``"relu"`` or the exact (erf) ``"gelu"``, same shape as ``a``."""
    if name == "relu":
        return np.maximum(a, 0.0), (a > 0.0).astype(a.dtype)
    Phi, varphi = _cdf_and_gauss(a)  # (..., F) normal CDF, exp(-a^2/2)
    varphi *= 1.0 / math.sqrt(2.0 * math.pi)  # normal density, in place
    varphi *= a
    varphi += Phi  # Phi + a varphi
    return a * Phi, varphi
