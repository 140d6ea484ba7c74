"""The recursive network over binary trees: trees read and written, the level-by-level kernel
against the plain per-node recursion, backpropagation through structure against central
differences (float64), and both tree tasks learned with a fixed seed."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import assert_grad_close, numeric_grad
from pyplay.losses import cross_entropy
from pyplay.models.recursive import RecursiveNet, reference_forward
from pyplay.tasks.binary_tree import Tree, batch_trees, parse, parse_expression
from pyplay.tasks.trees import ExpressionTrees, SentimentTrees
from pyplay.train import Trainer


def test_bracketed_text_round_trips() -> None:
    for text in ("((2 + 3) * 4)", "(not (very good))", "x", "((a b) (c d))"):
        assert parse(text).text() == text
    tree = parse("((2 + 3) * 4)")
    assert tree.token == "*" and [c.token for c in tree.children[0].children] == ["2", "3"]
    assert tree.leaves() == ["2", "3", "4"] and len(tree) == 5 and tree.height() == 2


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "empty string"),
        ("(a b", "1 bracket"),
        ("a b)", "token 2 'b' comes after its end"),
        ("(a b c d)", "must hold two trees"),
        ("(a)", "got 1 items"),
        (")", "token 1 '\\)' closes a bracket"),
    ],
)
def test_bad_bracketed_text_is_refused_saying_where(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        parse(text)


def test_expressions_are_read_with_precedence_and_left_to_right() -> None:
    assert parse_expression("2+3*4").text() == "(2 + (3 * 4))"
    assert parse_expression("(2+3)*4").text() == "((2 + 3) * 4)"
    assert parse_expression("8-3-1").text() == "((8 - 3) - 1)"
    assert parse_expression(" 7 ").text() == "7"
    task = ExpressionTrees(operators="+-*")
    assert task.evaluate_tree(parse_expression("8-3-1")) == 4
    assert task.evaluate_tree(parse_expression("2+3*4")) == 4  # 14 mod 10


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("2+", "a digit or '\\(' at the end"),
        ("2 x 3", "an operator at character 3 'x'"),
        ("(2+3", "'\\)' at the end"),
        ("12", "an operator at character 2 '2'"),
        ("", "empty string"),
    ],
)
def test_bad_expressions_name_the_first_character_that_does_not_fit(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        parse_expression(text)


def test_the_batch_lays_children_before_parents() -> None:
    trees = [parse("((a b) c)"), parse("(a + b)")]
    b = batch_trees(trees, {"a": 0, "b": 1, "c": 2, "+": 3})
    assert b.roots.tolist() == [4, 7]
    assert b.height.tolist() == [0, 0, 1, 0, 2, 0, 0, 1]
    assert b.token.tolist() == [0, 1, -1, 2, -1, 0, 1, 3]
    internal = b.left >= 0
    assert (b.left[internal] < np.flatnonzero(internal)).all()  # a child comes first
    assert (b.right[internal] < np.flatnonzero(internal)).all()
    with pytest.raises(ValueError, match="the token 'z', which vocab lacks"):
        batch_trees([parse("(a z)")], {"a": 0})


def _vocab() -> dict[str, int]:
    return {t: i for i, t in enumerate("0123456789+-*")}


def test_the_kernel_computes_the_per_node_recursion() -> None:
    task = ExpressionTrees(max_depth=4, operators="+-*", rng=3)
    trees = task.trees(6)
    model = RecursiveNet(len(task.vocab), 10, hidden_size=7, dtype=np.float64, rng=1)
    # the task's vocabulary starts with the brackets; the reference reads the same ids
    _, cache = model.forward(batch_trees(trees, task.vocab))
    row = 0
    for tree in trees:
        ref = reference_forward(model.params, tree, task.vocab)
        for node in tree.nodes():
            np.testing.assert_allclose(cache.h[row], ref[id(node)], rtol=0, atol=1e-13)
            row += 1
    assert row == cache.h.shape[0]


@pytest.mark.parametrize("supervise", ["all", "root"])
def test_backpropagation_through_structure_matches_central_differences(supervise: str) -> None:
    task = SentimentTrees(supervise=supervise, rng=2)
    model = RecursiveNet(len(task.vocab), 3, hidden_size=4, dtype=np.float64, rng=5)
    trees = task.trees(3)
    batch = batch_trees(trees, task.vocab, supervise)

    def loss() -> float:
        scores, _ = model.forward(batch)
        return float(cross_entropy(scores, batch.targets, mask=batch.mask)[0])

    scores, cache = model.forward(batch)
    _, dscores = cross_entropy(scores, batch.targets, mask=batch.mask)
    grads = model.backward(dscores, cache).grads
    for name, value in model.params.items():
        assert_grad_close(grads[name], numeric_grad(loss, value), name)
    # internal nodes with their own token (operators) take the embedding's gradient too
    expr = ExpressionTrees(max_depth=3, operators="+*", rng=4)
    model2 = RecursiveNet(len(expr.vocab), 10, hidden_size=3, dtype=np.float64, rng=6)
    batch2 = batch_trees(expr.trees(2), expr.vocab)
    scores2, cache2 = model2.forward(batch2)
    R = np.random.default_rng(0).normal(size=scores2.shape)
    g2 = model2.backward(R, cache2).grads
    for name, value in model2.params.items():
        numeric = numeric_grad(lambda: float((model2.forward(batch2)[0] * R).sum()), value)
        assert_grad_close(g2[name], numeric, name)
    operators = [expr.vocab[o] for o in "+*"]
    assert np.abs(g2["embedding.weight"][operators]).sum() > 0


def test_wrong_inputs_are_refused_by_name() -> None:
    model = RecursiveNet(3, 2, hidden_size=4)
    with pytest.raises(TypeError, match="batch must be a TreeBatch"):
        model.forward(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="token id 3, but vocab_size is 3"):
        model.forward(batch_trees([parse("(a d)")], {"a": 0, "d": 3}))
    _, cache = model.forward(batch_trees([parse("(a b)")], {"a": 0, "b": 1}))
    with pytest.raises(ValueError, match=r"dscores must have shape \(N, num_classes\)"):
        model.backward(np.zeros((2, 2)), cache)
    with pytest.raises(ValueError, match="num_classes must be >= 2"):
        RecursiveNet(3, 1)
    with pytest.raises(ValueError, match="operators must be some of"):
        ExpressionTrees(operators="/")


def test_sentiment_labels_follow_the_rules() -> None:
    task = SentimentTrees(rng=0)
    for tree in task.trees(200):
        for node in tree.nodes():
            if node.is_leaf or node.label is None:
                continue
            left, right = node.children
            if left.token == "not":
                assert node.label == 2 - int(right.label or 0)
            elif left.token in ("very", "but", "and"):
                assert node.label == right.label
    phrase = Tree(None, (Tree("good", (), 2), Tree("movie", (), 1)), 2)
    assert phrase.text() == "(good movie)"


@pytest.mark.slow
def test_a_recursive_net_learns_sentiment_on_every_phrase() -> None:
    task = SentimentTrees(rng=0)
    model = RecursiveNet(len(task.vocab), 3, hidden_size=24, rng=0)
    trainer = Trainer(model, task, lr=0.02, batch_size=32)
    for _ in trainer.run(300):
        pass
    result = trainer.evaluate(batch_size=400)
    assert result["root_accuracy"] >= 0.95, result
    assert result["accuracy"] >= 0.97, result


@pytest.mark.slow
def test_a_recursive_net_learns_to_evaluate_expression_trees() -> None:
    task = ExpressionTrees(max_depth=3, operators="+-", modulus=5, rng=0)
    model = RecursiveNet(len(task.vocab), 5, hidden_size=32, rng=0)
    trainer = Trainer(model, task, lr=0.01, batch_size=32)
    for _ in trainer.run(800):
        pass
    result = trainer.evaluate(batch_size=500)
    assert result["root_accuracy"] >= 0.9, result  # chance: 0.2


def test_the_chain_form_reads_the_same_trees_as_bracketed_tokens() -> None:
    tree_task = ExpressionTrees(rng=7)
    chain_task = ExpressionTrees(form="chain", rng=7)
    trees = tree_task.trees(3)
    batch = chain_task.batch(3)  # the same draws: the same trees
    ids = {i: t for t, i in chain_task.vocab.items()}
    for b, tree in enumerate(trees):
        n = int(batch.lengths[b])
        assert [ids[int(i)] for i in batch.inputs[b, :n]] == tree.tokens()
        assert batch.mask[b].tolist() == [k == n - 1 for k in range(batch.inputs.shape[1])]
        assert batch.targets[b, n - 1] == tree.label
