r"""Long short-term memory (Hochreiter & Schmidhuber 1997) in PyTorch's layout and gate order.

:class:`LSTM` is :class:`~pyplay.nn.recurrent.Recurrent` with the kernel
:class:`~pyplay.nn.lstm_cell.LSTMCell` (its module docstring has the BPTT equations, and
:mod:`pyplay.nn.reference` the plain step, one line per equation). Beyond ``torch.nn.LSTM``,
the variants of the lecture: diagonal peepholes (``peephole=True``), the original LSTM without a
forget gate (``forget_gate=False``), an initial forget-gate bias (``forget_bias``), and the
truncated gradient through the constant error carousel only (``backward(..., gradient="cec")``).
"""

from __future__ import annotations

from typing import Any, final

import numpy as np

from pyplay._checks import check_float
from pyplay.nn.cell import check_flag
from pyplay.nn.lstm_cell import LSTMCell
from pyplay.nn.recurrent import Recurrent

__all__ = ["LSTM", "LSTMCell"]


@final
class LSTM(Recurrent[tuple[np.ndarray, np.ndarray]]):
    """Multi-layer (bidirectional) LSTM; batch-first ``(B, T, F)``, PyTorch's parameter names.

    :class:`~pyplay.nn.recurrent.Recurrent` with the :class:`LSTMCell`; ``forward`` and
    ``backward`` are documented there (state: a tuple ``(h, c)``; record: ``i, f, g, o, c, h``,
    without ``f`` when there is no forget gate). ``backward(..., gradient="cec")`` returns
    Hochreiter & Schmidhuber's truncated gradient (error flows back in time through the cell
    state only; see :mod:`pyplay.nn.lstm_cell`), ``gradient="full"`` (default) the true one.

    Parameters
    ----------
    input_size, hidden_size, num_layers, bias, dropout, bidirectional, dtype, rng
        As :class:`~pyplay.nn.recurrent.Recurrent` (``torch.nn.LSTM``'s, always ``batch_first``),
        in that order.
    peephole : bool, keyword only
        Add diagonal peepholes ``weight_ci_l{k}``, ``weight_cf_l{k}``, ``weight_co_l{k}`` (H,):
        ``i`` and ``f`` see ``c_{t-1}``, ``o`` sees ``c_t``. No torch counterpart.
    forget_gate : bool, keyword only
        False: the original LSTM of Hochreiter & Schmidhuber (1997), without a forget gate:
        ``c_t = c_{t-1} + i_t g_t``. The weights then have ``3H`` rows, gates in
        torch's order without ``f`` (``i, g, o``), and a peephole LSTM has no ``weight_cf``.
        No torch counterpart.
    forget_bias : float, keyword only
        The forget gate's initial bias, the lecture's "initialise it to 1 or more" (Gers et al.
        2000; Jozefowicz et al. 2015): added to the f rows of ``bias_ih`` at initialisation;
        ``bias_hh`` is left as initialised, so the gate's bias :math:`b_f = b_{if} + b_{hf}`
        starts at ``forget_bias`` plus torch's small uniform noise (mean ``forget_bias``).
        A plain parameter afterwards. A torch ``nn.LSTM`` whose ``bias_ih_l{k}[H:2H]`` is
        shifted the same way computes the same (``tests/nn/test_lstm_variants.py``). Needs
        ``bias=True`` and a forget gate.

    Attributes
    ----------
    params : dict of str to ndarray
        ``weight_ih_l{k}`` (4H, F), ``weight_hh_l{k}`` (4H, H), ``bias_ih_l{k}``,
        ``bias_hh_l{k}`` (4H,), with ``_reverse`` for the backward direction; rows in gate
        order i, f, g, o (3H rows, i, g, o, without a forget gate). Updated in place by
        optimisers.
    """

    def __init__(
        self,
        *args: Any,
        peephole: bool = False,
        forget_gate: bool = True,
        forget_bias: float = 0.0,
        **kwargs: Any,
    ) -> None:
        self.peephole = check_flag("peephole", peephole)  # read by _make_cell
        self.forget_gate = check_flag("forget_gate", forget_gate)  # read by _make_cell
        self.forget_bias = check_float("forget_bias", forget_bias)
        if self.forget_bias and not self.forget_gate:
            raise ValueError(
                f"forget_bias needs a forget gate (forget_gate=True), got {forget_bias!r}"
            )
        super().__init__(*args, **kwargs)
        if self.forget_bias and not self.bias:
            raise ValueError(
                f"forget_bias needs bias=True (it initialises bias_ih), got {forget_bias!r}"
            )
        H = self.hidden_size
        for name, value in self.params.items():
            if name.startswith("bias_ih"):
                value[H : 2 * H] += self.forget_bias  # the f rows

    def _make_cell(self) -> LSTMCell:
        return LSTMCell(self.peephole, self.forget_gate)
