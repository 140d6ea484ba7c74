r"""2-D convolution, ``torch.nn.Conv2d`` in NumPy: PyTorch's names, layout and output size.

For an input :math:`x` (B, C, H, W) zero-padded by :math:`p` on each side, a kernel ``weight``
:math:`W` (C_out, C, kH, kW), ``bias`` :math:`b` (C_out,) and stride :math:`s`:

.. math::

    y_{b,o,m,n} = b_o + \sum_{c,k,l} W_{o,c,k,l}\; x^{\mathrm{pad}}_{b,\,c,\,s m + k,\,s n + l},
    \qquad H_{out} = \lfloor (H + 2p - kH) / s \rfloor + 1

(cross-correlation, as every deep-learning library computes it; rows and columns beyond the
last full window are never read). The backward pass is the same sum read the other way:

.. math::

    \frac{\partial L}{\partial W_{o,c,k,l}} = \sum_{b,m,n} \delta y_{b,o,m,n}\,
        x^{\mathrm{pad}}_{b,c,sm+k,sn+l}, \qquad
    \frac{\partial L}{\partial b_o} = \sum_{b,m,n} \delta y_{b,o,m,n}, \qquad
    \frac{\partial L}{\partial x^{\mathrm{pad}}_{b,c,sm+k,sn+l}} \mathrel{+}=
        \sum_o \delta y_{b,o,m,n}\, W_{o,c,k,l},

and :math:`\partial L / \partial x` is the padded gradient without its border.

Two implementations sit side by side (as nanoGPT keeps its plain attention beside the fused
one). :func:`conv2d_reference` and :func:`conv2d_reference_backward` are the sums above, one
loop over the output positions :math:`(m, n)`: read them first. :class:`Conv2d` runs the fast
form, *im2col*: every window is copied into one column of a matrix ``cols``
(C kH kW, B H_out W_out) by kH kW strided slices, so that the convolution is one matrix
product :math:`y = W_{flat}\, \mathrm{cols}`, :math:`\delta W_{flat} = \delta y\,
\mathrm{cols}^\top`, and the input gradient is :math:`W_{flat}^\top \delta y` added back into
the windows by the same kH kW slices (*col2im*). ``tests/nn/test_conv2d.py`` holds the two to each
other, to central differences and to PyTorch.

Not supported (refused by name): dilation, groups, padding modes other than zeros, and
``padding="same"``/``"valid"`` (give the number).
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_array, check_dtype, check_int
from pyplay.nn import init
from pyplay.nn._ops import matmul

__all__ = ["Conv2d", "Conv2dCache", "conv2d_reference", "conv2d_reference_backward"]


def _pair(name: str, value: Any, min_value: int) -> tuple[int, int]:
    """An int or a pair of ints (torch's ``_pair``), each at least ``min_value``."""
    if isinstance(value, tuple | list):
        if len(value) != 2:
            raise ValueError(f"{name} must be an integer or a pair of integers, got {value!r}")
        a, b = (check_int(f"{name}[{k}]", v, min_value=min_value) for k, v in enumerate(value))
        return a, b
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an integer or a pair of integers, got {value!r}")
    v = check_int(name, value, min_value=min_value)
    return v, v


def _out_size(H: int, k: int, s: int, p: int) -> int:
    return (H + 2 * p - k) // s + 1


def _pad(x: np.ndarray, padding: tuple[int, int]) -> np.ndarray:
    pH, pW = padding
    if not pH and not pW:
        return x
    B, C, H, W = x.shape
    xp = np.zeros((B, C, H + 2 * pH, W + 2 * pW), dtype=x.dtype)  # (B, C, Hp, Wp)
    xp[:, :, pH : pH + H, pW : pW + W] = x
    return xp


# ---------------------------------------------------------------------------- reference
def conv2d_reference(
    x: np.ndarray,
    weight: np.ndarray,
    bias: np.ndarray | None,
    stride: tuple[int, int] = (1, 1),
    padding: tuple[int, int] = (0, 0),
) -> np.ndarray:
    """The convolution of the module docstring, one output position at a time: ``x``
    (B, C, H, W), ``weight`` (C_out, C, kH, kW) -> (B, C_out, H_out, W_out)."""
    B, _, H, W = x.shape
    C_out, _, kH, kW = weight.shape
    (sH, sW), (pH, pW) = stride, padding
    xp = _pad(x, padding)  # (B, C, Hp, Wp)
    Ho, Wo = _out_size(H, kH, sH, pH), _out_size(W, kW, sW, pW)
    y = np.zeros((B, C_out, Ho, Wo), dtype=x.dtype)
    for m in range(Ho):
        for n in range(Wo):
            window = xp[:, :, m * sH : m * sH + kH, n * sW : n * sW + kW]  # (B, C, kH, kW)
            y[:, :, m, n] = np.einsum("bckl,ockl->bo", window, weight)  # (B, C_out)
    if bias is not None:
        y += bias[:, None, None]
    return y


def conv2d_reference_backward(
    dy: np.ndarray,
    x: np.ndarray,
    weight: np.ndarray,
    stride: tuple[int, int] = (1, 1),
    padding: tuple[int, int] = (0, 0),
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(dx, dweight, dbias)`` of :func:`conv2d_reference` from ``dy`` (B, C_out, H_out,
    W_out), one output position at a time (the module docstring's sums)."""
    _, _, kH, kW = weight.shape
    (sH, sW), (pH, pW) = stride, padding
    xp = _pad(x, padding)  # (B, C, Hp, Wp)
    dxp = np.zeros_like(xp)  # (B, C, Hp, Wp)
    dW = np.zeros_like(weight)  # (C_out, C, kH, kW)
    for m in range(dy.shape[2]):
        for n in range(dy.shape[3]):
            rows, cols = slice(m * sH, m * sH + kH), slice(n * sW, n * sW + kW)
            d = dy[:, :, m, n]  # (B, C_out)
            dW += np.einsum("bo,bckl->ockl", d, xp[:, :, rows, cols])
            dxp[:, :, rows, cols] += np.einsum("bo,ockl->bckl", d, weight)  # (B, C, kH, kW)
    dx = dxp[:, :, pH : pH + x.shape[2], pW : pW + x.shape[3]]  # (B, C, H, W)
    return dx, dW, dy.sum(axis=(0, 2, 3))


# ---------------------------------------------------------------------------- im2col
def _im2col(xp: np.ndarray, k: tuple[int, int], s: tuple[int, int], out: tuple[int, int]) -> Any:
    """The windows of ``xp`` (B, C, Hp, Wp) as columns (C kH kW, B Ho Wo), by kH kW strided
    slices (one per kernel offset)."""
    B, C = xp.shape[:2]
    (kH, kW), (sH, sW), (Ho, Wo) = k, s, out
    x_cb = xp.transpose(1, 0, 2, 3)  # (C, B, Hp, Wp), a view
    cols = np.empty((C, kH, kW, B, Ho, Wo), dtype=xp.dtype)
    for i in range(kH):
        for j in range(kW):
            cols[:, i, j] = x_cb[:, :, i : i + sH * Ho : sH, j : j + sW * Wo : sW]  # (C, B, Ho, Wo)
    return cols.reshape(C * kH * kW, B * Ho * Wo)  # (C kH kW, B Ho Wo)


def _col2im(
    dcols: np.ndarray, shape: tuple[int, ...], k: tuple[int, int], s: tuple[int, int]
) -> np.ndarray:
    """The column gradients (C kH kW, B Ho Wo) added back into their windows: (C, B, Hp, Wp)."""
    C, B, Hp, Wp = shape
    (kH, kW), (sH, sW) = k, s
    Ho, Wo = _out_size(Hp, kH, sH, 0), _out_size(Wp, kW, sW, 0)
    d6 = dcols.reshape(C, kH, kW, B, Ho, Wo)
    dx_cb = np.zeros(shape, dtype=dcols.dtype)  # (C, B, Hp, Wp)
    for i in range(kH):
        for j in range(kW):
            dx_cb[:, :, i : i + sH * Ho : sH, j : j + sW * Wo : sW] += d6[:, i, j]
    return dx_cb


@dataclass(frozen=True)
class Conv2dCache:
    """What :meth:`Conv2d.backward` needs: the input's shape and the im2col matrix."""

    x_shape: tuple[int, ...]  # (B, C, H, W)
    cols: np.ndarray  # (C kH kW, B Ho Wo)


class Conv2d:
    """``torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, bias)`` in
    NumPy (module docstring), input (B, C, H, W).

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size : int or (int, int)
    stride : int or (int, int)
        At least 1.
    padding : int or (int, int)
        Zeros added on each side, at least 0.
    bias : bool
    dtype : numpy.float32 or numpy.float64
    rng : numpy.random.Generator or int seed
        Initialisation :math:`\\mathcal{U}(-k, k)`, :math:`k = 1/\\sqrt{C\\, kH\\, kW}`, for
        weight and bias, as torch's default.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, int],
        stride: int | tuple[int, int] = 1,
        padding: int | tuple[int, int] = 0,
        bias: bool = True,
        dtype: Any = np.float32,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        self.in_channels = C = check_int("in_channels", in_channels, min_value=1)
        self.out_channels = O = check_int("out_channels", out_channels, min_value=1)
        if isinstance(padding, str):
            raise TypeError(
                f"padding must be an integer or a pair of integers (zeros on each side), got "
                f"{padding!r}: 'same' and 'valid' are not supported, give the number"
            )
        self.kernel_size = kH, kW = _pair("kernel_size", kernel_size, 1)
        self.stride = _pair("stride", stride, 1)
        self.padding = _pair("padding", padding, 0)
        if not isinstance(bias, bool):
            raise TypeError(f"bias must be True or False, got {bias!r}")
        self.dtype = check_dtype("dtype", dtype)
        gen = as_generator(rng)
        k = 1.0 / np.sqrt(C * kH * kW)
        what = "Conv2d weight (out_channels, in_channels, kH, kW)"
        self.params: dict[str, np.ndarray] = {
            "weight": init.uniform(gen, -k, k, (O, C, kH, kW), self.dtype, what)
        }
        if bias:
            self.params["bias"] = init.uniform(gen, -k, k, O, self.dtype, "Conv2d bias")

    def output_shape(self, H: int, W: int) -> tuple[int, int]:
        """``(H_out, W_out)`` for an input of ``H`` x ``W`` (torch's floor formula)."""
        (kH, kW), (sH, sW), (pH, pW) = self.kernel_size, self.stride, self.padding
        return _out_size(H, kH, sH, pH), _out_size(W, kW, sW, pW)

    def _check_input(self, x: Any) -> np.ndarray:
        x = check_array("input", x, ndim=4, dtype=self.dtype, layout="(B, C, H, W)")
        if x.shape[1] != self.in_channels:
            raise ValueError(
                f"input must have in_channels={self.in_channels} channels (axis 1 of "
                f"(B, C, H, W)), got shape {x.shape}"
            )
        (kH, kW), (pH, pW) = self.kernel_size, self.padding
        if x.shape[2] + 2 * pH < kH or x.shape[3] + 2 * pW < kW:
            raise ValueError(
                f"input must be at least as large as the kernel {self.kernel_size} once padded "
                f"by {self.padding}, got (H, W) = {x.shape[2:]}"
            )
        return x

    def forward(self, x: Any) -> tuple[np.ndarray, Conv2dCache]:
        """``y`` (B, C_out, H_out, W_out) for ``x`` (B, C, H, W), and the cache."""
        x = self._check_input(x)
        B = x.shape[0]
        Ho, Wo = self.output_shape(*x.shape[2:])
        cols = _im2col(_pad(x, self.padding), self.kernel_size, self.stride, (Ho, Wo))
        W_flat = self.params["weight"].reshape(self.out_channels, -1)  # (C_out, C kH kW)
        y = matmul(W_flat, cols)  # (C_out, B Ho Wo)
        if "bias" in self.params:
            y += self.params["bias"][:, None]
        y = y.reshape(self.out_channels, B, Ho, Wo).transpose(1, 0, 2, 3)  # (B, C_out, Ho, Wo)
        return np.ascontiguousarray(y), Conv2dCache(x.shape, cols)

    def backward(self, dy: Any, cache: Conv2dCache) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """``dx`` (B, C, H, W) and the gradients of ``weight`` and ``bias`` from ``dy``
        (B, C_out, H_out, W_out)."""
        B, C, H, W = cache.x_shape
        Ho, Wo = self.output_shape(H, W)
        dy = check_array("dy", dy, ndim=4, dtype=self.dtype, layout="(B, C_out, H_out, W_out)")
        if dy.shape != (B, self.out_channels, Ho, Wo):
            raise ValueError(
                f"dy must have the output's shape {(B, self.out_channels, Ho, Wo)}, got {dy.shape}"
            )
        d2 = dy.transpose(1, 0, 2, 3).reshape(self.out_channels, B * Ho * Wo)  # (C_out, B Ho Wo)
        W_flat = self.params["weight"].reshape(self.out_channels, -1)  # (C_out, C kH kW)
        grads = {"weight": matmul(d2, cache.cols.T).reshape(self.params["weight"].shape)}
        if "bias" in self.params:
            grads["bias"] = d2.sum(axis=1)  # (C_out,)
        (pH, pW) = self.padding
        padded = (C, B, H + 2 * pH, W + 2 * pW)
        dx_cb = _col2im(matmul(W_flat.T, d2), padded, self.kernel_size, self.stride)
        dx = dx_cb[:, :, pH : pH + H, pW : pW + W].transpose(1, 0, 2, 3)  # (B, C, H, W)
        return np.ascontiguousarray(dx), grads
