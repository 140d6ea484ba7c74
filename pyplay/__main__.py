"""Command line: ``python -m pyplay train --task adding --model lstm``.

Trains a model on a toy task and prints a progress line every ``--log-every`` steps, then an
evaluation on fresh data; ``--save`` writes the model, its optimiser state and settings to an
``.npz`` file that :func:`pyplay.io.load_model` (and the playground's Load button) read back.

Nothing is lost and nothing fails late: every argument, ``--save``'s path included, is checked
before training starts, and a refused one ends the command with one line (``error: ...``) and
exit code 2, never a traceback. Ctrl-C or SIGTERM stops the run after the step under way; with
``--save`` the model reached so far is saved, and the command says where and exits with
128 + the signal's number (130, 143). A second Ctrl-C or SIGTERM stops at once.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn

from pyplay._checks import check_int
from pyplay.io import save_model
from pyplay.models.sequence import CELLS, SequenceModel
from pyplay.tasks import TASKS, make_task
from pyplay.train import OPTIMIZERS, Trainer

STOPPING = (signal.SIGINT, signal.SIGTERM)


class _Parser(argparse.ArgumentParser):
    """argparse, but a refused argument is one line (no usage block) and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} (python -m pyplay train --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m pyplay", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    train = sub.add_parser("train", help="train a model on a toy task")
    train.add_argument("--task", choices=sorted(TASKS), default="adding")
    train.add_argument("--model", choices=CELLS, default="lstm", help="recurrent cell")
    train.add_argument("--steps", type=int, default=1000)
    train.add_argument("--seq-len", type=int, default=None, help="sequence length of the task")
    train.add_argument("--hidden-size", type=int, default=64)
    train.add_argument("--layers", type=int, default=1)
    train.add_argument("--bidirectional", action="store_true")
    train.add_argument("--optimizer", choices=sorted(OPTIMIZERS), default="adam")
    train.add_argument("--lr", type=float, default=1e-2)
    train.add_argument("--batch-size", type=int, default=32)
    train.add_argument("--clip", type=float, default=1.0, help="global-norm clip (0: off)")
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--log-every", type=int, default=100)
    train.add_argument("--save", default=None, help="write the trained model to this .npz")
    return parser


def check_save_path(path: str | None) -> str | None:
    """``path`` if a model file can be written there (None: nothing is saved); checked before
    training, so that a run is never lost to a path that cannot be written."""
    if path is None:
        return None
    if not path.strip():
        raise ValueError("--save must name a file (say model.npz), got an empty path")
    if os.path.isdir(path):
        raise ValueError(f"--save must name a file, got the folder {path!r}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"--save {path!r}: the folder {folder!r} does not exist")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise ValueError(f"--save {path!r}: it cannot be written (permissions)")
    return path


@contextmanager
def _stop_requests() -> Iterator[list[int]]:
    """While active, Ctrl-C (SIGINT) and SIGTERM ask the run to stop after the step under way
    (the returned list receives the signal's number); a second one stops at once
    (KeyboardInterrupt). The earlier handlers are put back on leaving."""
    asked: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        if asked:
            raise KeyboardInterrupt
        asked.append(signum)

    if threading.current_thread() is not threading.main_thread():
        yield asked  # only the main thread may handle signals: they keep their handlers
        return
    kept = [sig for sig in STOPPING if signal.getsignal(sig) is not signal.SIG_IGN]
    previous = {sig: signal.signal(sig, handler) for sig in kept}  # an ignored one stays so
    try:
        yield asked
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def train_command(args: argparse.Namespace) -> int:
    """Run the ``train`` command; returns the process exit code."""
    path = check_save_path(args.save)
    check_int("--steps", args.steps, min_value=0)
    task_kwargs: dict[str, object] = {"rng": args.seed}
    if args.seq_len is not None:
        task_kwargs["seq_len"] = args.seq_len
    task = make_task(args.task, **task_kwargs)
    model = SequenceModel.for_task(
        task,
        args.model,
        hidden_size=args.hidden_size,
        num_layers=args.layers,
        bidirectional=args.bidirectional,
        rng=args.seed,
    )
    trainer = Trainer(
        model,
        task,
        optimizer=args.optimizer,
        lr=args.lr,
        batch_size=args.batch_size,
        clip=args.clip or None,
    )
    print(f"task {task.name}: {task.describe().splitlines()[0]}")
    print(
        f"model {args.model}: {model.num_parameters()} parameters; "
        f"trivial baseline loss {task.baseline_loss():.4f}"
    )
    with _stop_requests() as asked:
        try:
            stopped = _train(trainer, args, asked)
            if not stopped:
                result = trainer.evaluate()
                scores = "  ".join(f"{k} {v:.4f}" for k, v in result.items())
                print(f"evaluation on fresh data: {scores}")
        except KeyboardInterrupt:  # a second request, during the evaluation
            stopped = int(signal.SIGINT)
        if stopped or asked:
            return _interrupted(trainer, task, path, stopped or asked[0])
        if path:
            _save(path, trainer, task)
            print(f"saved to {path}")
    return 0 if not trainer.message else 1


def _train(trainer: Trainer, args: argparse.Namespace, asked: list[int]) -> int:
    """Run the steps, printing progress; the number of the signal that stopped the run (a
    KeyboardInterrupt counts as SIGINT), else 0. The model is left as it was after a whole
    step (the trainer undoes an update that an interruption cut short)."""
    every = max(1, args.log_every)
    elapsed = 0.0
    try:
        for record in trainer.run(args.steps):
            elapsed += record.seconds
            if record.status != "ok":
                print(record.message, file=sys.stderr)
                break
            if record.step % every == 0 or record.step == args.steps:
                metrics = "  ".join(f"{k} {v:.4f}" for k, v in record.metrics.items())
                print(
                    f"step {record.step:>6}/{args.steps}  loss {record.loss:.4f}  "
                    f"grad-norm {record.grad_norm:.3f}  lr {record.lr:.1e}  {metrics}  "
                    f"{record.step / max(elapsed, 1e-9):.1f} steps/s",
                    flush=True,
                )
            if asked:
                return asked[0]
    except KeyboardInterrupt:
        return int(signal.SIGINT)
    return asked[0] if asked else 0


def _save(path: str, trainer: Trainer, task: Any) -> None:
    meta = {"task": task.name}
    save_model(path, trainer.model, optimizer=trainer.optimizer, step=trainer.step_count, meta=meta)


def _interrupted(trainer: Trainer, task: Any, path: str | None, signum: int) -> int:
    """Save what was reached (when ``--save`` was given), say so; the exit code."""
    name = signal.Signals(signum).name
    where = f"stopped by {name} at step {trainer.step_count}"
    if path:
        _save(path, trainer, task)
        print(f"{where}: the model reached so far is saved to {path}", file=sys.stderr)
    else:
        print(f"{where}: nothing saved (no --save given)", file=sys.stderr)
    return 128 + signum


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m pyplay``."""
    args = _parser().parse_args(argv)
    try:
        return train_command(args)
    except (ValueError, TypeError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # before the run started (during it, train_command saves)
        print("error: interrupted before training started; nothing saved", file=sys.stderr)
        return 128 + int(signal.SIGINT)


if __name__ == "__main__":
    sys.exit(main())
