"""State of the "Recursive networks" lesson: a recursive net learns to evaluate expression trees
(or the sentiment of parsed phrases) while a chain LSTM reads the same examples as bracketed
text, step for step; the learner types an expression and sees the tree, every node's vector,
its prediction and the gradient reaching it. No Panel here; errors become messages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import param

from pyplay.losses import cross_entropy, softmax
from pyplay.models import SequenceModel
from pyplay.models.recursive import RecursiveNet
from pyplay.tasks.binary_tree import Tree, batch_trees, parse, parse_expression
from pyplay.tasks.trees import ExpressionTrees, SentimentTrees, TreeTask
from pyplay.train import Trainer
from pyplay.ui.base_state import LessonBase, lr_param, seed_param
from pyplay.ui.trainer_lesson import TrainerLesson, carry_over

__all__ = ["EXAMPLES", "RecursiveLessonState", "TreeView"]

EXAMPLES = {"expressions": "(3-4)*2+7", "sentiment": "((not (very good)) movie)"}


@dataclass(frozen=True)
class TreeView:
    """One typed tree as the model reads it, node by node (children before parents):
    ``x``, ``y`` where to draw each node (leaves left to right, height up), ``parent`` (-1 at
    the root), ``text`` its token (or "·"), ``target`` / ``predicted`` its class and the
    probability of the predicted one, ``vectors`` (N, H) the nodes' h, ``grads`` (N, H)
    d(loss)/dh of the root's loss, ``chain`` the chain LSTM's answer for the whole text
    (None without it)."""

    x: np.ndarray
    y: np.ndarray
    parent: np.ndarray
    text: list[str]
    target: np.ndarray
    predicted: np.ndarray
    probability: np.ndarray
    vectors: np.ndarray
    grads: np.ndarray
    chain: int | None
    bracketed: str


def _layout(tree: Tree) -> tuple[list[float], list[int], list[int]]:
    """x (leaves at 0, 1, 2 ... left to right, a parent above the middle of its children), the
    height and the parent's row of every node, in the order of :meth:`Tree.nodes`."""
    xs: list[float] = []
    hs: list[int] = []
    parents: list[int] = []
    leaf = 0

    def visit(node: Tree) -> int:
        nonlocal leaf
        rows = [visit(c) for c in node.children]
        if rows:
            x, h = (xs[rows[0]] + xs[rows[1]]) / 2, 1 + max(hs[r] for r in rows)
        else:
            x, h, leaf = float(leaf), 0, leaf + 1
        xs.append(x)
        hs.append(h)
        parents.append(-1)
        for r in rows:
            parents[r] = len(xs) - 1
        return len(xs) - 1

    visit(tree)
    return xs, hs, parents


class RecursiveLessonState(TrainerLesson, LessonBase):
    """Settings and actions of the Recursive networks lesson (the recursive net is
    :attr:`model`, the chain LSTM beside it :attr:`chain_trainer`'s model)."""

    accuracy_metric = "root_accuracy"  # the whole tree's label, over the last steps trained
    task = param.Selector(objects=["expressions", "sentiment"], default="expressions")
    max_depth = param.Integer(default=3, softbounds=(1, 5))
    hidden_size = param.Integer(default=32, softbounds=(4, 64))
    compare_chain = param.Boolean(default=True, doc="train a chain LSTM beside it")
    lr = lr_param(0.01)
    seed = seed_param()
    model: RecursiveNet | None

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.chain_trainer: Trainer | None = None
        self.history = {"step": [], "loss": [], "chain": []}
        self._start(rebuild=["task", "max_depth", "hidden_size", "seed"])

    # ------------------------------------------------------------------ building
    def _make_task(self, form: str = "tree") -> TreeTask:
        if self.task == "sentiment":
            return SentimentTrees(form=form, rng=self.seed)
        return ExpressionTrees(
            max_depth=self.max_depth, operators="+-*", modulus=10, form=form, rng=self.seed
        )

    def _build_model(self, task: Any) -> RecursiveNet:
        return RecursiveNet(
            len(task.vocab), task.num_classes, hidden_size=self.hidden_size, rng=self.seed
        )

    def _make_trainer(self, model: Any, task: Any) -> Trainer:
        return Trainer(model, task, lr=self.lr, batch_size=32, clip=5.0)

    def _chain(self, lstm: Any = None, task: Any = None) -> Trainer:
        """The chain LSTM's trainer on the same examples (the same seed draws the same trees):
        a new LSTM as wide as the recursive net, or ``lstm`` on ``task``."""
        task = task or self._make_task("chain")
        if lstm is None:
            lstm = SequenceModel.for_task(task, "lstm", hidden_size=self.hidden_size, rng=self.seed)
        return self._make_trainer(lstm, task)

    def _on_lr(self, *_: Any) -> None:
        """A new learning rate applies to both models, which keep their progress."""
        super()._on_lr()
        old = self.chain_trainer
        if old is not None and self.trainer is not None and self.trainer.optimizer.lr == self.lr:
            self.chain_trainer = carry_over(old, self._chain(old.model, old.task))

    def _built(self, task: Any, model: Any) -> None:
        """The chain LSTM for the new task, before the views explain an example with it."""
        self.chain_trainer = self._chain()

    def _forget_progress(self) -> None:
        super()._forget_progress()
        self.history["chain"] = []

    def _built_message(self, task: Any, model: Any) -> str:
        return (
            f"{task.describe()} A recursive net of width {self.hidden_size} "
            f"({model.num_parameters():,} parameters) composes each node from its children; "
            "the chain LSTM beside it reads the same examples as bracketed text."
        )

    # ------------------------------------------------------------------ training
    def train(self, steps: int | None = None, budget_s: float | None = None) -> list[Any]:
        """The recursive net's steps (:meth:`run_trainer`), then as many chain LSTM steps on
        the same examples when comparing (its losses in ``history["chain"]``)."""
        records = super().train(steps, budget_s)
        for _ in records:
            loss = float("nan")
            if self.compare_chain and self.chain_trainer is not None:
                chain = next(iter(self.chain_trainer.run(1)))
                loss = chain.loss if chain.status == "ok" else float("nan")
            self.history["chain"].append(loss)
        if records:  # the status line with the chain LSTM's loss
            self.status = self._status_text()
        return records

    def _untrained_note(self) -> str:
        assert self.task_obj is not None
        return f". Uniform guess: {self.task_obj.baseline_loss():.3f}"

    def _status_extra(self) -> str:
        text = "" if self.accuracy is None else f", root accuracy {self.accuracy:.2f}"
        chain = self.history["chain"][-1] if self.history["chain"] else float("nan")
        return text + (f", chain LSTM loss {chain:.4f}" if np.isfinite(chain) else "")

    # ------------------------------------------------------------------ looking inside
    def read(self, text: str) -> Tree | None:
        """The typed ``text`` as a labelled tree of the current task; None and a message
        naming what does not fit otherwise."""
        task = self.task_obj
        if task is None:
            return None
        try:
            if isinstance(task, ExpressionTrees):
                return task.label(parse_expression(text))
            tree = SentimentTrees.label(parse(text))
            unknown = sorted({t for t in tree.leaves() if t not in task.vocab})
            if unknown:
                raise ValueError(
                    f"the words {unknown} are not in the lesson's vocabulary: "
                    f"{', '.join(t for t in task.tokens)}"
                )
            return tree
        except (ValueError, TypeError) as err:
            self.notify(f"Cannot read {text!r}: {err}", "warning")
            return None

    def explain(self, text: str) -> TreeView | None:
        """Every node of the typed tree: its vector, class, and the gradient of the root's
        loss reaching it (backpropagation through structure)."""
        tree = self.read(text)
        if tree is None or self.model is None or self.task_obj is None:
            return None
        batch = batch_trees([tree], self.task_obj.vocab, supervise="root")
        scores, cache = self.model.forward(batch)  # (N, C)
        _, dscores = cross_entropy(scores, batch.targets, mask=batch.mask)
        grads = self.model.backward(dscores, cache).record or {}
        probs = softmax(scores, axis=-1)  # (N, C)
        xs, hs, parents = _layout(tree)
        chain = None
        if self.compare_chain and self.chain_trainer is not None:
            chain_task: Any = self.chain_trainer.task
            b = chain_task.chains([tree])
            out, _, _ = self.chain_trainer.model.forward(b.inputs, None, b.lengths, training=False)
            chain = int(out[0, int(b.lengths[0]) - 1].argmax())
        return TreeView(
            x=np.array(xs),
            y=np.array(hs, dtype=float),
            parent=np.array(parents),
            text=[n.token if n.token is not None else "·" for n in tree.nodes()],
            target=batch.targets,
            predicted=probs.argmax(axis=1),
            probability=probs.max(axis=1),
            vectors=cache.h,
            grads=grads["node_grad"],
            chain=chain,
            bracketed=tree.text(),
        )
