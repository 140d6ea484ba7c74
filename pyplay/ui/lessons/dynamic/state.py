"""State of the "Dynamic networks" lesson: build a layered digital dynamic network (LDDN) from
presets (the book's worked examples) or a palette, see it as a diagram and as equations in the
book's notation, run it on a signal and train it to imitate a reference system.

No Panel here; every action validates its input and turns errors into messages, keeping the
network, its weights and what the user typed as they were.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import param

from pyplay.dynamic import LDDN, distdelaynet, layrecnet, timedelaynet
from pyplay.dynamic.initial import delayed_layers, initial_outputs
from pyplay.dynamic.spec import to_dict
from pyplay.dynamic.train import OPTIMIZERS
from pyplay.dynamic.transfer import TRANSFERS
from pyplay.tasks.signals import SYSTEMS, random_levels, signal
from pyplay.train import StepRecord
from pyplay.ui.base_state import LessonBase, lr_param, seed_param
from pyplay.ui.checkpoint import LoadedFile
from pyplay.ui.lddn_notation import Diagram, diagram, equations, sup
from pyplay.ui.trainer_lesson import FitLesson

__all__ = ["PRESETS", "LDDNLessonState", "Run"]


def _scalar_net(iw: list[float], lw: float | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """One purelin neuron without bias: IW on delays 0..len(iw)-1, LW(1) if ``lw`` is given."""
    desc: dict[str, Any] = {
        "inputs": [1],
        "layers": [{"size": 1, "transfer": "purelin", "bias": False}],
        "input_weights": [{"to": 1, "from": 1, "delays": list(range(len(iw)))}],
        "layer_weights": [] if lw is None else [{"to": 1, "from": 1, "delays": [1]}],
    }
    params = {"IW1,1": np.asarray(iw, dtype=np.float64).reshape(-1, 1, 1)}
    if lw is not None:
        params["LW1,1"] = np.full((1, 1, 1), lw)
    return desc, params


def _preset(name: str, seed: int) -> LDDN:
    if name == "moving average":
        desc, params = _scalar_net([1 / 3, 1 / 3, 1 / 3], None)
        return LDDN(desc, params=params)
    if name == "first order":
        desc, params = _scalar_net([0.5], 0.5)
        return LDDN(desc, params=params)
    if name == "impulse response":
        desc, params = _scalar_net([1.0], 0.5)
        return LDDN(desc, params=params)
    if name == "elman":
        return layrecnet((1,), (4,), rng=seed)
    if name == "dtdnn":  # a tapped delay line at the input of every layer
        return distdelaynet(((0, 1, 2), (0, 1, 2)), (4,), rng=seed)
    return timedelaynet((0, 1, 2), (4,), rng=seed)


PRESETS = {
    "Three-tap moving average": "moving average",
    "First-order recurrent (iw = lw = 1/2)": "first order",
    "Impulse response (lw = 0.5, iw = 1)": "impulse response",
    "Elman network (layrecnet)": "elman",
    "Focused time-delay network (timedelaynet)": "tdnn",
    "Distributed time-delay network (distdelaynet)": "dtdnn",
}
SYSTEM_LABELS = {
    "Moving average of three": "moving average",
    "First order: y(t) = y(t-1)/2 + p(t)/2": "first order",
    "Narendra plant": "narendra",
}
TRAIN_BATCH, TRAIN_STEPS = 32, 40


@dataclass(frozen=True)
class Run:
    """The network on one input: ``p`` (T,), every layer's output ``a[m]`` (T, S^m), the
    network output ``out`` (T, O), when training is set up the reference ``target`` (T,), and
    the layers whose :math:`a(0)` the run set (``initial``: those read through a delay)."""

    p: np.ndarray
    a: dict[int, np.ndarray]
    out: np.ndarray
    target: np.ndarray | None
    initial: tuple[int, ...] = ()


class LDDNLessonState(FitLesson, LessonBase):
    """Settings and actions of the LDDN part of the "Dynamic networks" lesson (files:
    ``save_bytes`` and ``load_bytes`` of :class:`~pyplay.ui.checkpoint.SavableLesson`: any
    LDDN loads, the network is not rebuilt from the settings)."""

    preset = param.Selector(objects=list(PRESETS.values()), default="moving average")
    signal = param.Selector(objects=["impulse", "step", "sine", "typed"], default="impulse")
    steps = param.Integer(default=12, bounds=(1, 200))
    a0 = param.Number(
        default=0.0,
        bounds=(-10.0, 10.0),
        softbounds=(-2.0, 2.0),
        doc="the initial output a(0) of every layer read through a delay (older ones 0)",
    )
    typed = param.String(default="1, 0, 0, 2, 0, 0, -1")
    system = param.Selector(objects=list(SYSTEM_LABELS.values()), default="first order")
    lr = lr_param(0.01)
    seed = seed_param()

    description = param.String(default="")  # the network as JSON (editable by the user)
    weights_version = param.Integer(default=0)  # bumped when the weights change

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.net: LDDN = _preset(self.preset, self.seed)
        self._fit: Any = None
        self._step = 0
        self._adopt(self.net)
        self.param.watch(self._quiet(self.load_preset), ["preset"])
        self.param.watch(self._quiet(self._restart_training), ["system", "lr", "seed"])

    # ------------------------------------------------------------------ the network
    def _adopt(self, net: LDDN) -> None:
        if getattr(self, "net", None) is not None:
            self._keep_before_replacing()  # autosave keeps a trained network
        self.net = net
        self.description = json.dumps(to_dict(net.spec))
        self.history = {"step": [], "loss": []}
        self._elapsed, self._step, self._fit, self._optimizer = 0.0, 0, None, None
        self.running = False
        self.version += 1
        self.status = self._status_text()

    def model_name(self) -> str:
        """What saved work calls this network, e.g. "1-layer LDDN imitating first order"."""
        layers = len(json.loads(self.description or "{}").get("layers", []))
        return f"{layers}-layer LDDN imitating {self.system}"

    def load_preset(self) -> None:
        """Replace the network by the chosen preset (the book's weights, or seeded ones)."""
        self._adopt(_preset(self.preset, self.seed))
        self.notify("Preset loaded: " + "; ".join(equations(self.net)), "info")

    def apply_description(self, text: str) -> bool:
        """Rebuild from a JSON description (parsed as data, never evaluated). Weights whose name
        and shape survive are kept; new ones are drawn from the seed."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            self.notify(
                f"Not applied: the description is not valid JSON ({err.msg}, line "
                f"{err.lineno} column {err.colno}).",
                "danger",
            )
            return False
        try:
            fresh = LDDN(data, rng=self.seed)
        except (ValueError, TypeError) as err:
            self.notify(f"Not applied: {err}", "danger")
            return False
        for name, value in self.net.params.items():
            if name in fresh.params and fresh.params[name].shape == value.shape:
                fresh.params[name][...] = value
        self._adopt(fresh)
        self.notify("Network rebuilt: " + str(len(fresh.spec.layers)) + " layer(s).", "success")
        return True

    def _edit(self, change: Any) -> bool:
        data = to_dict(self.net.spec)
        try:
            change(data)
        except (ValueError, TypeError, IndexError) as err:
            self.notify(f"Not applied: {err}", "danger")
            return False
        return self.apply_description(json.dumps(data))

    def add_layer(self, size: int, transfer: str, bias: bool = True) -> bool:
        """Palette: append a layer (it becomes the output layer)."""
        if transfer not in TRANSFERS:
            self.notify(f"transfer must be one of {', '.join(TRANSFERS)}, got {transfer!r}")
            return False

        def change(data: dict[str, Any]) -> None:
            data["layers"].append({"size": int(size), "transfer": transfer, "bias": bool(bias)})
            data["outputs"] = [len(data["layers"])]

        return self._edit(change)

    def remove_last_layer(self) -> bool:
        """Palette: drop the last layer and every connection to or from it."""

        def change(data: dict[str, Any]) -> None:
            M = len(data["layers"])
            if M == 1:
                raise ValueError("the network must keep at least one layer")
            data["layers"].pop()
            data["input_weights"] = [w for w in data["input_weights"] if w["to"] != M]
            data["layer_weights"] = [
                w for w in data["layer_weights"] if M not in (w["to"], w["from"])
            ]
            data["outputs"] = [m for m in data["outputs"] if m != M] or [M - 1]
            data["feedback"] = [f for f in data["feedback"] if f["layer"] != M]

        return self._edit(change)

    def connect(self, kind: str, to: int, source: int, delays: str) -> bool:
        """Palette: set the delays of ``IW^{to,source}`` or ``LW^{to,source}`` (``kind`` "IW"
        or "LW"), adding the connection if needed; ``delays`` like ``"0, 1, 2"``; an empty
        ``delays`` removes the connection."""
        field = {"IW": "input_weights", "LW": "layer_weights"}.get(kind)
        if field is None:
            self.notify(f"kind must be 'IW' or 'LW', got {kind!r}", "danger")
            return False
        try:
            ds = [int(d) for d in delays.replace(",", " ").split()]
        except ValueError:
            self.notify(f"delays must be whole numbers like '0, 1, 2', got {delays!r}", "danger")
            return False

        def change(data: dict[str, Any]) -> None:
            rest = [w for w in data[field] if (w["to"], w["from"]) != (to, source)]
            data[field] = rest + ([{"to": to, "from": source, "delays": ds}] if ds else [])

        return self._edit(change)

    def equations(self) -> list[str]:
        """The equations in the book's notation, scalar weights filled in."""
        return equations(self.net)

    def diagram(self) -> Diagram:
        return diagram(self.net)

    def weights_text(self) -> str:
        """Every weight and bias, rounded, one per line (delays listed for each matrix)."""
        lines = []
        with np.printoptions(precision=3, suppress=True):
            for name, value in self.net.params.items():
                lines.append(f"{name}: " + " ".join(str(v.tolist()) for v in np.round(value, 3)))
        return "\n".join(lines)

    # ------------------------------------------------------------------ running
    def run(self) -> Run | None:
        """The network on the chosen signal (every input element gets it); None (and a
        message) when the signal is not valid."""
        try:
            p = signal(self.signal, self.steps, self.typed)  # (T,)
        except (ValueError, TypeError) as err:
            self.notify(f"Input not used: {err}", "danger")
            return None
        net = self.net
        x = np.repeat(p[None, :, None], net.input_size, axis=2)  # (1, T, R)
        delayed = tuple(delayed_layers(net))
        a0 = initial_outputs(net, dict.fromkeys(delayed, self.a0))  # (1, DL, S)
        out, cache = net.forward(x, a0)  # (1, T, O)
        a = {m: A[net.num_layer_delays :, 0] for m, A in cache.A.items()}  # (T, S^m) each
        target = None
        if self._trainable() is None:
            target = SYSTEMS[self.system](p[None])[0]  # (T,) from rest
        return Run(p, a, out[0], target, delayed)

    def initial_text(self) -> str:
        """Which layers the a(0) setting starts, in the book's notation."""
        delayed = delayed_layers(self.net)
        if not delayed:
            return "No layer is read through a delay: a(0) is not used by this network."
        names = ", ".join(f"a{sup(m)}(0)" for m in delayed)
        older = " (older values 0)" if max(delayed.values()) > 1 else ""
        return f"Initial conditions: {names} = {self.a0:g}{older}; the reference starts at rest."

    def _trainable(self) -> str | None:
        """Why the network cannot be trained on a reference system, or None."""
        if self.net.input_size != 1 or self.net.output_size != 1:
            return (
                "training imitates a one-input, one-output system; this network has "
                f"{self.net.input_size} input element(s) and {self.net.output_size} output(s)"
            )
        return None

    # ------------------------------------------------------------------ files

    def _file_prepare(self, loaded: LoadedFile) -> Any:
        if not isinstance(loaded.model, LDDN):
            name = type(loaded.model).__name__
            raise ValueError(f"its model is a {name}, not a network of this lesson (LDDN)")
        optimizer = OPTIMIZERS["adam"](loaded.model.params, lr=self.lr)
        if loaded.optimizer_state:
            optimizer.load_state_dict(loaded.optimizer_state)
            optimizer.lr = float(self.lr)  # the rate the page shows, not one hidden in the file

        def commit() -> None:
            self._adopt(loaded.model)
            self._step, self._optimizer = loaded.step, optimizer

        return commit

    def _data(self) -> tuple[np.ndarray, np.ndarray]:
        u = random_levels(TRAIN_BATCH * 4, TRAIN_STEPS, rng=self.seed)  # (4B, N)
        y = SYSTEMS[self.system](u)  # (4B, N)
        return u[..., None], y[..., None]  # (4B, N, 1) each

    def train(self, steps: int | None = None, budget_s: float | None = None) -> list[StepRecord]:
        """Train on the reference system (Adam, mini-batches of windows of random levels)."""
        why = self._trainable()
        if why is not None:
            self.running = False
            self.notify(f"Not trained: {why}.", "warning")
            return []
        return super().train(steps, budget_s)

    def _fit_arguments(self) -> tuple[Any, Any, dict[str, Any]]:
        u, y = self._data()
        return u, y, {"batch_size": TRAIN_BATCH}

    loss_name = "mean squared error"

    def reset(self) -> None:
        """Back to the chosen preset (fresh weights)."""
        self.load_preset()
