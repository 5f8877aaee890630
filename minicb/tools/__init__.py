"""The tools around the engine, in rooms named for what they hold.

Nothing in the engine (``minicb/``, its stages and its executors) imports a
tool; each tool drives the engine through ``LLM`` or ``LLMEngine``. A room
imports only from the rooms listed before it (tests/test_house.py):

- ``report``: what a run leaves behind: its sizes and record (``scale``), its
  figures and their sidecars (``figures``, ``plots``), its claims about time
  judged from its repeats (``claims``), and ``make test``'s own record (``timed``);
- ``serve``: ``minicb serve``, an OpenAI-compatible HTTP server, and the engine
  options as command-line flags (``options``);
- ``bench``: measuring: request lengths (``workload``), replaying them in real
  time (``driver``), ``minicb bench`` (``offline``) and ``bench serve``
  (``serving``), the notebooks' measurements, transformers on the same requests
  (``peers``), the cost model fitted to a machine (``calibrate``);
- ``course``: ``minicb check``, the exercises, their cases, hints and stubs, the
  mutation testing of their checks, and ``make demo``;
- ``book``: the book's measured numbers, rendered from the runs that measured them;
- ``gpu``: what only the repository's own GPU runs need: ``make gpu``'s parts,
  plan and archives, and the kernels compiled for GPUs this machine lacks.

``minicb/cli.py`` (``python -m minicb``) is their door.
"""
