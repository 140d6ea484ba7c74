"""What a beam search keeps besides the beam width: a count per node and a score threshold.

Wand's lecture lists the ways to limit the hypotheses of a search: keep "a fixed number of most
probable ones" (the beam width of :class:`~pyplay.decode.beam.BeamSearch`), "a fixed number of
hypotheses per node", "other heuristic/adaptive criteria", "or all of the above". A
:class:`Pruning` adds the last two to the beam width:

* **per node** (``per_node = n``): at most :math:`n` live hypotheses sit at one node of the
  search. The node of a hypothesis is the node of the prefix tree it reached when the search
  runs under a lexicon constraint (the constraint's state: several hypotheses with different
  word histories can reach the same node), else the token it just wrote (the node of the
  time-synchronous trellis at this step).
* **threshold** (``threshold = d``): a candidate whose score is more than :math:`d` below the
  best candidate of the same step is dropped,

  .. math::

      s(y) < \\max_{y'} s(y') - d \\;\\Rightarrow\\; \\text{pruned},

  so the beam is adaptive: narrow where one hypothesis stands out, wide where many are close.

Candidates are walked best first, as for the beam width; one dropped by either rule takes no
slot. Either rule may drop the best final hypothesis, as a narrow beam may; with neither set
the search is unchanged.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from pyplay._checks import check_float, check_int
from pyplay.limits import MAX_BEAM_WIDTH

__all__ = ["PRUNING_FATES", "Pruning", "node_of"]

PRUNING_FATES = (
    "per_node",  # its node already holds per_node live hypotheses
    "below_threshold",  # its score is more than threshold below the step's best
)


@dataclass(frozen=True)
class Pruning:
    """Limits of a beam search beside its width (module docstring).

    Parameters
    ----------
    per_node : int >= 1, optional
        Most live hypotheses per node; ``None``: no limit.
    threshold : float >= 0, optional
        Drop candidates whose score is more than this below the step's best; ``None``: off.
    """

    per_node: int | None = None
    threshold: float | None = None

    def __post_init__(self) -> None:
        if self.per_node is not None:
            check_int("per_node", self.per_node, min_value=1, max_value=MAX_BEAM_WIDTH)
        if self.threshold is not None:
            check_float("threshold", self.threshold, min_value=0.0)

    @property
    def active(self) -> bool:
        """Whether any limit is set."""
        return self.per_node is not None or self.threshold is not None

    def cut(self, best: float) -> float:
        """The lowest score kept at a step whose best candidate scores ``best``."""
        return -float("inf") if self.threshold is None else best - self.threshold

    def describe(self) -> str:
        """The limits in words, for a listing ("" when none is set)."""
        parts = []
        if self.per_node is not None:
            parts.append(f"at most {self.per_node} per node")
        if self.threshold is not None:
            parts.append(f"scores within {self.threshold:g} of the best")
        return ", ".join(parts)


def node_of(token: int, constraint_state: Hashable | None) -> Hashable:
    """The node of a hypothesis that just wrote ``token``: its constraint state (the prefix
    tree's node under a lexicon) when the search has a constraint, else the token."""
    return ("token", int(token)) if constraint_state is None else ("node", constraint_state)
