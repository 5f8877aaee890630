"""The tools a user runs around the engine, in rooms named for what they hold.

Nothing in the engine (``minicb/``, its stages and its executors) imports a
tool; each tool drives the engine through ``LLM`` or ``LLMEngine``. A room
imports only from the rooms listed before it (tests/repository/test_house.py):

- ``serve``: ``minicb serve``, an OpenAI-compatible HTTP server, and the engine
  options as command-line flags (``options``);
- ``bench``: measuring: request lengths (``workload``), replaying them in real
  time (``driver``), ``minicb bench`` (``offline``) and ``bench serve``
  (``serving``), transformers on the same requests (``peers``), claims about
  time judged from repeats (``claims``), and a run's record (``run_record``);
- ``gpu``: a kernel's launch compiled for a GPU this machine lacks
  (``compile_for_gpu``);
- ``course``: ``minicb check``, the exercises, their cases, hints and stubs, and
  ``minicb demo``.

``minicb/cli.py`` (``python -m minicb``) is their door. The repository's own
upkeep (its figures, the book's numbers, the GPU run, the measurements behind
the notebooks, mutation testing) is ``workshop/``, beside the package.
"""
