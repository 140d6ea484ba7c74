"""Dynamic nets in the notation of Hagan's *Neural Network Design* (and MATLAB's toolbox).

- :mod:`~pyplay.dynamic.transfer`: tansig, logsig, purelin, poslin, softmax by name, with
  derivatives for backpropagation.
- :mod:`~pyplay.dynamic.tdl`: the delay, tapped delay lines (TDL) and their stacked form.
- :mod:`~pyplay.dynamic.spec`: the declarative description of an LDDN (plain data, validated).
- :mod:`~pyplay.dynamic.lddn`: the layered digital dynamic network, forward and BPTT.
- :mod:`~pyplay.dynamic.initial`: its initial conditions by layer (Hagan's a(0)) and their
  gradients.
- :mod:`~pyplay.dynamic.networks`: timedelaynet, distdelaynet, layrecnet, narxnet, closeloop,
  openloop, preparets.
- :class:`Windows` of a series, the LDDN's task, and :class:`LDDNObjective`, its training
  objective (mean squared error) for :class:`pyplay.train.Trainer`: named here, they live in
  :mod:`pyplay.objectives.lddn` with the other objectives.
- :mod:`~pyplay.dynamic.train`: :func:`fit`, a generator of losses over the trainer.
- :mod:`~pyplay.dynamic.book_lstm`, :mod:`~pyplay.dynamic.book_gru`: the lecture's LSTM and
  GRU as six-layer networks (CEC, gates, differencing layer), views of :class:`pyplay.nn.LSTM`
  and :class:`pyplay.nn.GRU` (``reset_after=False``, the slide's reset before
  :math:`LW^{1,3}`): the core's parameters and record under the book's names, the core's BPTT;
  ``book_output`` their read-out layer 7 and loss.
- :mod:`~pyplay.dynamic.rtrl`: real-time recurrent learning beside BPTT, and their costs.
- :mod:`~pyplay.dynamic.adaptive`: the adaptive filter (a TDL adapting online by LMS) and the
  noise-cancellation setting.
- :mod:`~pyplay.dynamic.stability`: eigenvalues / spectral radius of LW^{1,1}, impulse
  response, gradient through time.

Importing the package registers :class:`LDDN` with :func:`pyplay.models.registry.register`, so
that :func:`pyplay.io.load_model` rebuilds an LDDN from its file.
"""

from pyplay.dynamic.book_gru import BookGRU
from pyplay.dynamic.book_lstm import BookLSTM
from pyplay.dynamic.initial import delayed_layers, initial_gradients, initial_outputs
from pyplay.dynamic.lddn import LDDN, LDDNCache, LDDNGrads
from pyplay.dynamic.networks import (
    Prepared,
    closeloop,
    distdelaynet,
    layrecnet,
    narxnet,
    openloop,
    preparets,
    timedelaynet,
)
from pyplay.dynamic.spec import LDDNSpec, parse_spec, to_dict
from pyplay.dynamic.tdl import TDL, Delay, TDL_hstack
from pyplay.dynamic.train import fit, mse
from pyplay.dynamic.transfer import TRANSFERS, Transfer, get_transfer
from pyplay.models.registry import register
from pyplay.objectives.lddn import LDDNObjective, WindowBatch, Windows

register(LDDN)  # model files may name it (pyplay.io.load_model)

__all__ = [
    "LDDN",
    "TDL",
    "TRANSFERS",
    "BookGRU",
    "BookLSTM",
    "Delay",
    "LDDNCache",
    "LDDNGrads",
    "LDDNObjective",
    "LDDNSpec",
    "Prepared",
    "TDL_hstack",
    "Transfer",
    "WindowBatch",
    "Windows",
    "closeloop",
    "delayed_layers",
    "distdelaynet",
    "fit",
    "get_transfer",
    "initial_gradients",
    "initial_outputs",
    "layrecnet",
    "mse",
    "narxnet",
    "openloop",
    "parse_spec",
    "preparets",
    "timedelaynet",
    "to_dict",
]
