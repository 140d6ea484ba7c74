"""The PyTorch twin in "show as code" scripts of the recurrent and CTC lessons.

:func:`torch_part` writes the lines that build the lesson's ``SequenceModel`` as a PyTorch
module (``nn.Embedding`` + ``nn.LSTM`` / ``nn.GRU`` / ``nn.RNN`` + ``nn.Linear``), load its
weights by name from the checkpoint the script saved (pyplay's parameter names are PyTorch's
``state_dict`` names), and print how far the two outputs are apart in float64. Values are
checked and written with :func:`pyplay.ui.code_values.literal`.
"""

from __future__ import annotations

from typing import Any

from pyplay.ui.code_values import literal

__all__ = ["torch_part"]

_TORCH_CELLS = {"lstm": "LSTM", "gru": "GRU", "rnn": "RNN"}


def torch_part(state: Any) -> list[str]:
    """The same ``SequenceModel`` in PyTorch, weights loaded by name from the checkpoint."""
    c = state.model.config
    if c["cell"] == "rnn" and c["nonlinearity"] == "linear":
        return ["# PyTorch's nn.RNN has no linear units: no PyTorch twin for this model."]
    if c.get("peephole") or not c.get("forget_gate", True):
        what = "peepholes" if c.get("peephole") else "LSTM without a forget gate"
        return [f"# PyTorch's nn.LSTM has no {what}: no PyTorch twin for this model."]
    if c.get("residual") and c["num_layers"] > 1:
        return ["# PyTorch's recurrent layers have no residual connections: no PyTorch twin."]
    if c.get("delay"):
        return [
            f"# A time-delay net (its output read {int(c['delay'])} steps late): PyTorch's "
            "recurrent layers have no such option, so no PyTorch twin for this model."
        ]
    H, L, bi = c["hidden_size"], c["num_layers"], c["bidirectional"]
    rnn_in = c["embedding_dim"] if c["input_kind"] == "tokens" else c["input_size"]
    K = int(c.get("feedforward_layers", 0))  # tanh layers before the recurrent stack
    ff_in, rnn_in = rnn_in, (H if K else rnn_in)
    rnn_args = f"{rnn_in}, {H}, num_layers={L}, batch_first=True, bidirectional={bi!r}"
    if c["dropout"]:
        rnn_args += f", dropout={literal(c['dropout'], 'dropout')}"
    if c["cell"] == "rnn":
        rnn_args += f", nonlinearity={literal(c['nonlinearity'], 'nonlinearity')}"
    tokens = c["input_kind"] == "tokens"
    lines = [
        "",
        "# The same network in PyTorch, its weights loaded by name from the checkpoint",
        "# (pyplay's parameter names are PyTorch's state_dict names). Runs if torch is installed.",
        "try:",
        "    import torch",
        "except ImportError:",
        "    torch = None",
        "if torch is not None:",
        "",
        "    class TorchModel(torch.nn.Module):",
        "        def __init__(self):",
        "            super().__init__()",
    ]
    if tokens:
        lines.append(
            f"            self.embedding = torch.nn.Embedding({c['input_size']}, {rnn_in})"
        )
    if K:
        ff = [f"torch.nn.Linear({ff_in if k == 0 else H}, {H}), torch.nn.Tanh()" for k in range(K)]
        lines.append(f"            self.feedforward = torch.nn.Sequential({', '.join(ff)})")
    directions = 2 if bi else 1
    rnn_reads = "self.embedding(x)" if tokens else "x"
    if K:
        rnn_reads = f"self.feedforward({rnn_reads})"
    lines += [
        f"            self.rnn = torch.nn.{_TORCH_CELLS[c['cell']]}({rnn_args})",
        f"            self.head = torch.nn.Linear({directions * H}, {c['output_size']})",
        "",
        "        def forward(self, x):",
        f"            h, _ = self.rnn({rnn_reads})",
        "            return self.head(h)",
        "",
        "    net = TorchModel().double().eval()",
        "    ckpt = load(SAVE_TO)",
        "    net.load_state_dict({k: torch.from_numpy(v.astype(np.float64))",
        "                         for k, v in ckpt.params.items()})",
        '    twin = SequenceModel.from_config({**ckpt.meta["model"], "dtype": "float64"})',
        "    twin.load_params(ckpt.params)",
        "    x = task.batch(4).inputs" + (".astype(np.int64)" if tokens else ".astype(np.float64)"),
        "    ours, _, _ = twin.forward(x, training=False)",
        "    with torch.no_grad():",
        "        theirs = net(torch.from_numpy(x)).numpy()",
        "    gap = np.abs(ours - theirs).max()",
        '    print(f"PyTorch vs pyplay (float64): max difference {gap:.3e}")',
    ]
    return lines
