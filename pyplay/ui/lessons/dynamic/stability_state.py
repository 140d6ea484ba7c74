r"""State of the "Stability and memory" sub-tab of the dynamic networks lesson: a recurrent
layer of two neurons, :math:`a^1(t) = f(IW^{1,1} p(t) + LW^{1,1} a^1(t-1))`, whose feedback
matrix has the eigenvalues :math:`\rho e^{\pm i\theta}` the learner sets,

.. math::

    LW^{1,1} = M \, \rho \begin{bmatrix} \cos\theta & -\sin\theta \\ \sin\theta & \cos\theta
    \end{bmatrix} M^{-1}, \qquad M = \begin{bmatrix} 1 & 0.5 \\ 0 & 1 \end{bmatrix}

(:math:`M` makes the matrix look like any other, not like a rotation, without changing its
eigenvalues). The impulse response and the gradient through time come from
:mod:`pyplay.dynamic.stability`; the eigenvalues shown are
:func:`pyplay.dynamic.stability.eigenvalues` of the matrix shown.

A "step" moves the time cursor :math:`t` one step along the response (Run plays it to
:math:`T`); the settings (``radius`` :math:`\rho`, ``angle`` :math:`\theta` in degrees,
``steps`` :math:`T`, ``transfer``) are the sub-lesson's address parameters (key
``"stability"``). No Panel here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import param

from pyplay.dynamic.stability import (
    eigenvalues,
    gradient_through_time,
    impulse_response,
    spectral_radius,
)
from pyplay.ui.base_state import LessonBase

__all__ = ["IW", "M", "Memory", "StabilityState", "feedback_matrix"]

M = np.array([[1.0, 0.5], [0.0, 1.0]])  # the change of basis
IW = np.array([1.0, 0.0])  # IW^{1,1}: the impulse reaches the first neuron


def feedback_matrix(radius: float, angle_deg: float) -> np.ndarray:
    """:math:`LW^{1,1}` (2, 2) with eigenvalues ``radius`` :math:`e^{\\pm i\\theta}`."""
    th = np.deg2rad(angle_deg)
    rot = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])  # (2, 2)
    return M @ (radius * rot) @ np.linalg.inv(M)  # (2, 2)


@dataclass(frozen=True)
class Memory:
    """What the view draws: ``LW`` (2, 2), its eigenvalues ``lam`` (2,) (complex), the spectral
    radius ``rho``, ``t`` (T,) = 1..T, the impulse response ``a`` (T, 2) and the gradient
    ``grad`` (T, 2) = :math:`\\partial F / \\partial a^1(t)` with the error at :math:`T` only."""

    LW: np.ndarray
    lam: np.ndarray
    rho: float
    t: np.ndarray
    a: np.ndarray
    grad: np.ndarray


class StabilityState(LessonBase):
    """The eigenvalues' radius and angle, the length, the transfer function and the cursor."""

    radius = param.Number(default=0.9, bounds=(0.0, 1.3), doc="ρ = |λ|, the spectral radius")
    angle = param.Number(default=30.0, bounds=(0.0, 180.0), doc="θ, the eigenvalues' angle (°)")
    steps = param.Integer(default=30, bounds=(5, 80), doc="T, the length of the sequence")
    transfer = param.Selector(objects=["purelin", "tansig"], default="purelin")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.cursor = 0  # the time step shown (0: none yet)
        self.memory = self.compute()
        self.param.watch(lambda *_: self._changed(), ["radius", "angle", "steps", "transfer"])
        self.status = self._status_text()

    def compute(self) -> Memory:
        """The matrix, its eigenvalues, the response and the gradient for the settings."""
        LW = feedback_matrix(float(self.radius), float(self.angle))
        T = int(self.steps)
        a = impulse_response(LW, T, IW, self.transfer)  # (T, 2)
        grad = gradient_through_time(LW, T, IW, self.transfer)  # (T, 2)
        lam = eigenvalues(LW)  # (2,)
        return Memory(LW, lam, spectral_radius(LW), np.arange(1, T + 1), a, grad)

    def _changed(self) -> None:
        self.memory = self.compute()
        self.cursor = min(self.cursor, int(self.steps))
        self.version += 1
        self.status = self._status_text()

    def reset(self) -> None:
        """The cursor back before t = 1."""
        self.running = False
        self.cursor = 0
        self.version += 1
        self.status = self._status_text()

    def train(self, steps: int | None = None, budget_s: float | None = None) -> list[int]:
        """Move the cursor ``steps`` (default 1) time steps on; Run stops at :math:`T` (a
        step from :math:`T` starts again at :math:`t = 1`). Returns the times passed."""
        passed = []
        for _ in range(1 if steps is None else int(steps)):
            self.cursor = self.cursor % int(self.steps) + 1
            passed.append(self.cursor)
            if self.cursor == int(self.steps):
                self.running = False
                break
        self.status = self._status_text()
        return passed

    def verdict(self) -> str:
        m = self.memory
        lam = ", ".join(_complex(x) for x in m.lam)
        with np.printoptions(precision=4, suppress=True):
            rows = [" ".join(f"{x:+.4f}" for x in row) for row in m.LW]
        if abs(m.rho - 1.0) < 1e-9:
            what = "on the unit circle: the response neither decays nor grows"
        elif m.rho < 1:
            what = "inside the unit circle: stable, the response and the gradient decay"
        else:
            what = "outside the unit circle: unstable, the response and the gradient explode"
        if self.transfer == "tansig" and m.rho > 1:
            what += " (tansig keeps |a¹| < 1: the response saturates instead)"
        return (
            f"LW¹˒¹ = [{rows[0]}; {rows[1]}]\n"
            f"eigenvalues λ = {lam} (numpy.linalg.eigvals of this matrix)\n"
            f"spectral radius ρ = max|λ| = {m.rho:.4f}: {what}\n"
            f"a¹(T) = {_vec(m.a[-1])},  ∂F/∂a¹(1) = {_vec(m.grad[0])}"
        )

    def _status_text(self) -> str:
        m = self.memory
        if self.cursor == 0:
            return "Before t = 1. Run plays the response; Step moves one time step."
        k = self.cursor - 1
        return (
            f"Step {self.cursor}: t = {self.cursor} of T = {int(self.steps)}, a¹(t) = "
            f"{_vec(m.a[k])}, ‖a¹(t)‖ = {np.linalg.norm(m.a[k]):.4g}, ‖∂F/∂a¹(t)‖ = "
            f"{np.linalg.norm(m.grad[k]):.4g}"
        )


def _vec(v: np.ndarray) -> str:
    return "[" + " ".join(f"{x:+.4g}" for x in v) + "]"


def _complex(z: complex) -> str:
    z = complex(z)
    sign = "−" if z.imag < 0 else "+"
    return f"{z.real:+.4f} {sign} {abs(z.imag):.4f}i (|λ| = {abs(z):.4f})"
