"""Lookup table ``y = E[x]``, PyTorch's ``torch.nn.Embedding`` (with ``padding_idx``).

The gradient scatters back: :math:`\\partial L / \\partial E_v = \\sum_{n: x_n = v} \\delta y_n`,
with repeated indices accumulating, and no gradient for the ``padding_idx`` row.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyplay._checks import as_generator, check_array, check_dtype, check_indices, check_int
from pyplay.nn import init
from pyplay.nn._ops import scatter_rows
from pyplay.nn.token_input import TokenInput

__all__ = ["Embedding"]


class Embedding:
    """``num_embeddings`` vectors of size ``embedding_dim``, initialised N(0, 1) like torch.

    ``padding_idx``, if given, is a row initialised to zero that never receives gradient.
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        dtype: Any = np.float32,
        rng: np.random.Generator | int | None = 0,
    ) -> None:
        self.num_embeddings = check_int("num_embeddings", num_embeddings, min_value=1)
        self.embedding_dim = check_int("embedding_dim", embedding_dim, min_value=1)
        if padding_idx is not None:
            padding_idx = (
                check_int(
                    "padding_idx",
                    padding_idx,
                    min_value=-num_embeddings,
                    max_value=num_embeddings - 1,
                )
                % num_embeddings
            )
        self.padding_idx = padding_idx
        self.dtype = check_dtype("dtype", dtype)
        shape = (self.num_embeddings, self.embedding_dim)
        what = "Embedding weight (num_embeddings, embedding_dim)"
        weight = init.normal(as_generator(rng), shape, self.dtype, what)  # (V, E)
        if padding_idx is not None:
            weight[padding_idx] = 0.0
        self.params: dict[str, np.ndarray] = {"weight": weight}

    def forward(self, input: Any) -> tuple[np.ndarray, np.ndarray]:
        """Rows of the table for integer ``input`` of any shape: (...) -> (..., embedding_dim)."""
        idx = check_indices("input", input, self.num_embeddings)
        return self.params["weight"][idx], idx  # (..., E)

    def tokens(self, input: Any) -> TokenInput:
        """Integer ``input`` (B, T) and this table, unread: a recurrent stack projects the table
        instead of its rows (:mod:`pyplay.nn.token_input`). Its gradient comes back as the
        table's, (V, E), which :meth:`weight_gradient` turns into this layer's gradients."""
        idx = check_indices("input", input, self.num_embeddings)
        if idx.ndim != 2:
            raise ValueError(f"input must be token ids (B, T), got shape {idx.shape}")
        return TokenInput(idx, self.params["weight"])

    def backward(self, dy: Any, cache: np.ndarray) -> tuple[None, dict[str, np.ndarray]]:
        """No input gradient (indices); the table's gradient, accumulated over repeats."""
        idx = cache
        dy = check_array("dy", dy, dtype=self.dtype)
        if dy.shape != (*idx.shape, self.embedding_dim):
            raise ValueError(
                f"dy must have shape {(*idx.shape, self.embedding_dim)}, got {dy.shape}"
            )
        flat_idx = idx.reshape(-1)  # (N,)
        flat_dy = dy.reshape(-1, self.embedding_dim)  # (N, E)
        return None, self.weight_gradient(scatter_rows(flat_dy, flat_idx, self.num_embeddings))

    def grads_from(self, dx: np.ndarray, cache: np.ndarray | TokenInput) -> dict[str, np.ndarray]:
        """This layer's gradients from what the recurrent stack after it returned: the table's
        gradient (V, E) when it read :meth:`tokens` (``cache`` is that TokenInput), else dL/dx
        (B, T, E [+ more features]) for the rows :meth:`forward` read (``cache``)."""
        if isinstance(cache, TokenInput):
            return self.weight_gradient(dx)
        return self.backward(np.ascontiguousarray(dx[..., : self.embedding_dim]), cache)[1]

    def weight_gradient(self, dW: np.ndarray) -> dict[str, np.ndarray]:
        """``{"weight": dW}`` for a table gradient (V, E), its ``padding_idx`` row zeroed (in
        place): :meth:`backward`'s result, and that of a stack that read :meth:`tokens`."""
        if self.padding_idx is not None:
            dW[self.padding_idx] = 0.0
        return {"weight": dW}
