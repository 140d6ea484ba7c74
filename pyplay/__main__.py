"""Command line: ``python -m pyplay train --task adding --model lstm``.

Trains a model on a toy task and prints a progress line every ``--log-every`` steps, then an
evaluation on fresh data; ``--save`` writes the parameters, optimiser state and settings to an
``.npz`` file that :func:`pyplay.io.load` (and the playground's Load button) read back.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pyplay.io import save
from pyplay.models.sequence import CELLS, SequenceModel
from pyplay.tasks import TASKS, make_task
from pyplay.train import OPTIMIZERS, Trainer


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pyplay", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
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


def train_command(args: argparse.Namespace) -> int:
    """Run the ``train`` command; returns the process exit code."""
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
    every = max(1, args.log_every)
    elapsed = 0.0
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
    result = trainer.evaluate()
    print("evaluation on fresh data: " + "  ".join(f"{k} {v:.4f}" for k, v in result.items()))
    if args.save:
        save(
            args.save,
            model.params,
            optimizer_state=trainer.optimizer.state_dict(),
            meta={"model": model.config, "task": task.name, "step": trainer.step_count},
        )
        print(f"saved to {args.save}")
    return 0 if not trainer.message else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m pyplay``."""
    args = _parser().parse_args(argv)
    try:
        return train_command(args)
    except (ValueError, TypeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
