r"""The weights of multi-head attention in ``torch.nn.MultiheadAttention``'s layout, and the
projections into and out of its heads: what the full attention
(:class:`~pyplay.nn.multihead.MultiheadAttention`) and incremental decoding
(:mod:`pyplay.nn.multihead_step`) share.

With ``h`` heads of size :math:`d = E / h`, an input :math:`X` (B, T, F) is projected and split
into heads, and the heads' outputs are merged and projected back:

.. math::

    Q = X_q W_q^\top + b_q \;\to\; (B, h, T, d), \qquad
    Y = [\mathrm{head}_1; \dots; \mathrm{head}_h]\, W_o^\top + b_o,

likewise :math:`K` and :math:`V` from the keys and values. The parameters keep torch's names,
shapes and order: ``in_proj_weight`` (3E, E) (rows q, k, v) when ``kdim`` and ``vdim`` equal
``E``, else ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight``; ``in_proj_bias`` (3E,),
``out_proj.weight`` (E, E), ``out_proj.bias`` (E,).

``value_function="identity"`` drops the value projection (Solberg's TEK5040 lecture, "Single-head
attention" without a value function: the output is a weighted sum of the inputs themselves),
:math:`V = X_v` split into heads, so head :math:`n` averages the n-th block of ``d`` features of
the values. Then ``in_proj_weight`` is (2E, E) (rows q, k), ``in_proj_bias`` (2E,), there is no
``v_proj_weight``, and ``vdim`` must equal ``E``. torch has no such option: no parity there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_array, check_choice, check_dtype, check_int
from pyplay.nn import init
from pyplay.nn._ops import matmul

__all__ = ["VALUE_FUNCTIONS", "MultiheadProjections"]

VALUE_FUNCTIONS = ("linear", "identity")  # V = X_v W_v^T + b_v, or V = X_v (no parameters)


class MultiheadProjections:
    """The parameters of multi-head attention, the checks of its inputs and the projections
    into and out of its heads; the base of :class:`~pyplay.nn.multihead.MultiheadAttention`,
    which documents the parameters.
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        bias: bool = True,
        kdim: int | None = None,
        vdim: int | None = None,
        dtype: Any = np.float32,
        rng: np.random.Generator | int | None = 0,
        value_function: str = "linear",
    ) -> None:
        E = self.embed_dim = check_int("embed_dim", embed_dim, min_value=1)
        h = self.num_heads = check_int("num_heads", num_heads, min_value=1)
        if E % h:
            raise ValueError(f"embed_dim must be divisible by num_heads={h}, got embed_dim={E}")
        self.head_dim = E // h
        if not isinstance(bias, bool):
            raise TypeError(f"bias must be True or False, got {bias!r}")
        self.kdim = E if kdim is None else check_int("kdim", kdim, min_value=1)
        self.vdim = E if vdim is None else check_int("vdim", vdim, min_value=1)
        self.dtype = check_dtype("dtype", dtype)
        self.value_function = check_choice("value_function", value_function, VALUE_FUNCTIONS)
        n = self._n_proj = 3 if self.value_function == "linear" else 2  # q, k (and v) projected
        if n == 2 and self.vdim != E:
            raise ValueError(
                f"value_function='identity' needs vdim equal to embed_dim={E} (the values "
                f"are the heads' output), got vdim={self.vdim}"
            )
        gen = as_generator(rng)

        def xavier(name: str, shape: tuple[int, int]) -> np.ndarray:
            a = np.sqrt(6.0 / (shape[0] + shape[1]))
            return init.uniform(gen, -a, a, shape, self.dtype, f"MultiheadAttention {name}")

        self.same_embed_dim = self.kdim == E and self.vdim == E
        self.params: dict[str, np.ndarray] = {}
        if self.same_embed_dim:
            self.params["in_proj_weight"] = xavier(
                f"in_proj_weight ({n} * embed_dim, embed_dim)", (n * E, E)
            )
        else:
            self.params["q_proj_weight"] = xavier("q_proj_weight (embed_dim, embed_dim)", (E, E))
            self.params["k_proj_weight"] = xavier("k_proj_weight (embed_dim, kdim)", (E, self.kdim))
            if n == 3:
                what = "v_proj_weight (embed_dim, vdim)"
                self.params["v_proj_weight"] = xavier(what, (E, self.vdim))
        if bias:
            self.params["in_proj_bias"] = np.zeros(n * E, dtype=self.dtype)
        k = 1.0 / np.sqrt(E)
        what = "MultiheadAttention out_proj.weight (embed_dim, embed_dim)"
        self.params["out_proj.weight"] = init.uniform(gen, -k, k, (E, E), self.dtype, what)
        if bias:
            self.params["out_proj.bias"] = np.zeros(E, dtype=self.dtype)

    def _projections(self) -> list[tuple[np.ndarray | None, np.ndarray | None]]:
        """``(W, b)`` for q, k, v: views of the packed parameters; ``(None, None)`` for v
        with ``value_function="identity"``."""
        p, E = self.params, self.embed_dim
        if self.same_embed_dim:
            Ws = [p["in_proj_weight"][n * E : (n + 1) * E] for n in range(self._n_proj)]
        else:
            Ws = [p[f"{c}_proj_weight"] for c in "qkv"[: self._n_proj]]
        b = p.get("in_proj_bias")
        out: list[tuple[np.ndarray | None, np.ndarray | None]] = [
            (W, None if b is None else b[n * E : (n + 1) * E]) for n, W in enumerate(Ws)
        ]
        return out + [(None, None)] * (3 - self._n_proj)

    def _check_query(self, query: Any, layout: str) -> np.ndarray:
        X_q = check_array("query", query, ndim=3, dtype=self.dtype, layout=layout)
        if X_q.shape[2] != self.embed_dim:
            raise ValueError(
                f"query must have embed_dim={self.embed_dim} features, got {X_q.shape}"
            )
        return X_q

    def _check_key_value(
        self, key: Any, value: Any, B: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """``key`` (B, Tk, kdim) and ``value`` (B, Tk, vdim); ``B`` the queries', if given."""
        X_k = check_array("key", key, ndim=3, dtype=self.dtype, layout="(B, Tk, kdim)")
        X_v = check_array("value", value, ndim=3, dtype=self.dtype, layout="(B, Tk, vdim)")
        Tk = X_k.shape[1]
        if Tk == 0:
            raise ValueError(
                f"key must have at least one step to attend to (Tk >= 1), got shape {X_k.shape}"
            )
        if B is None:  # keys alone, any batch size
            B = X_k.shape[0]
            if X_k.shape[2] != self.kdim:
                raise ValueError(f"key must have shape (B, Tk, kdim={self.kdim}), got {X_k.shape}")
        elif X_k.shape != (B, Tk, self.kdim):
            raise ValueError(f"key must have shape (B={B}, Tk, kdim={self.kdim}), got {X_k.shape}")
        if X_v.shape != (B, Tk, self.vdim):
            raise ValueError(
                f"value must have shape (B={B}, Tk={Tk}, vdim={self.vdim}), got {X_v.shape}"
            )
        return X_k, X_v

    def _split(self, x: np.ndarray) -> np.ndarray:
        B, T, _ = x.shape
        return x.reshape(B, T, self.num_heads, self.head_dim).transpose(0, 2, 1, 3)  # (B, h, T, d)

    def _merge(self, x: np.ndarray) -> np.ndarray:
        B, _, T, _ = x.shape
        return x.transpose(0, 2, 1, 3).reshape(B, T, self.embed_dim)  # (B, T, E)

    def _project(self, x: np.ndarray, W: np.ndarray | None, b: np.ndarray | None) -> np.ndarray:
        """``x W^T + b`` (B, T, F) -> split into heads (B, h, T, d); ``x`` itself split when
        ``W`` is None (no value function)."""
        if W is None:
            return self._split(x)  # (B, h, T, d), V = X
        B, T, F = x.shape
        y = matmul(x.reshape(-1, F), W.T)  # (B*T, E)
        if b is not None:
            y += b
        return self._split(y.reshape(B, T, self.embed_dim))  # (B, h, T, d)

    def _project_packed(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Self-attention's ``q, k, v`` (B, h, T, d) each from one input ``x`` (B, T, E): one
        product with the packed ``in_proj_weight`` (3E, E) instead of three (the same sums as
        :meth:`_project` with each third of it)."""
        B, T, E = x.shape
        h, d, n = self.num_heads, self.head_dim, self._n_proj
        y = matmul(x.reshape(-1, E), self.params["in_proj_weight"].T)  # (B*T, nE)
        if "in_proj_bias" in self.params:
            y += self.params["in_proj_bias"]
        qkv = y.reshape(B, T, n, h, d).transpose(2, 0, 3, 1, 4)  # (n, B, h, T, d)
        return qkv[0], qkv[1], qkv[2] if n == 3 else self._split(x)

    def _out_proj(self, heads: np.ndarray) -> np.ndarray:
        """``Y = [heads] W_o^T + b_o``, (B, T, E) -> (B, T, E)."""
        B, T, E = heads.shape
        out = matmul(heads.reshape(-1, E), self.params["out_proj.weight"].T)  # (B*T, E)
        if "out_proj.bias" in self.params:
            out += self.params["out_proj.bias"]
        return out.reshape(B, T, E)  # (B, T, E)
