"""Optimisers over a parameter dict (updated in place), clipping and learning-rate schedules."""

from pyplay.optim.adam import Adam, AdamW
from pyplay.optim.clip import clip_grad_norm, global_norm
from pyplay.optim.optimizer import Optimizer
from pyplay.optim.rmsprop import RMSprop
from pyplay.optim.schedules import CosineAnnealingLR, LinearWarmup, StepLR
from pyplay.optim.sgd import SGD

__all__ = [
    "SGD",
    "Adam",
    "AdamW",
    "CosineAnnealingLR",
    "LinearWarmup",
    "Optimizer",
    "RMSprop",
    "StepLR",
    "clip_grad_norm",
    "global_norm",
]
