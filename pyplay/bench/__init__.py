"""Benchmarks, a developer's tool: ``python -m pyplay.bench``.

Developer-only: nothing in the library, the app or the page imports this package, and the
wheel the static site serves leaves it out (``web/tools/sitebuild``); ``web/measure.py`` copies
it into the page only to time the step there.

Times one training step (forward, backward, Adam update) of a character model, Embedding ->
recurrent cell -> Linear with cross-entropy, for pyplay and, when PyTorch is installed, for the
same model in PyTorch with one thread, and prints their ratio; then an attention
encoder-decoder training step against its PyTorch twin and a beam-search decode. Figures are
ratios measured in the same process, never absolute thresholds.

- :mod:`pyplay.bench.recurrent`: the character-model cases (LSTM and GRU, B=32 and B=1,
  T=32, H=64, V=32, float32) and their steps;
- :mod:`pyplay.bench.seq2seq`: the sequence-to-sequence cases;
- :mod:`pyplay.bench.transformer`: the Transformers lesson's training step at its defaults, as
  its Train button runs it (no PyTorch twin: compare versions of pyplay with it);
- :mod:`pyplay.bench.report`: timing, peak memory, the table, the in-page steps
  (``prepare_steps``, ``time_once``) and the command line.

Both sides use one thread: torch via ``torch.set_num_threads(1)``, NumPy's BLAS via
``OPENBLAS_NUM_THREADS=1`` etc., set by ``python -m pyplay.bench`` before NumPy is imported (on
a busy 2-core machine, multi-threaded BLAS on these small matrices is several times slower and
its timings swing wildly). This package's ``__init__`` imports nothing, so that holds.
"""
