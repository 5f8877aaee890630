"""The repository's workshop: what keeps the course and its book honest, beside
the engine it keeps, and not installed with it (``pip install minicb`` is the
engine). The notebooks and ``make`` use it from the repository's root.

- ``report``: a run's sizes (``scale``), its figures and their sidecars
  (``figures``, ``plots``, ``redraw``), and ``make test``'s own record (``timed``);
- ``measure``: what the notebooks and the GPU run measure: the benchmarks
  (``benchmarks``), the decode step against its roofline (``decode_step``), the
  step's profile (``step_profile``), the cost model fitted to a machine (``calibrate``);
- ``book``: every number the book shows, rendered from where it is set
  (``numbers``), and found where it is not (``accounted``);
- ``gpu``: ``make gpu``'s parts, plan and archives (``parts``, ``plan``, ``run``),
  and every launch compiled for the GPUs this machine lacks (``compile_check``);
- ``mutants``: mutation testing of the course's checks (``make mutants``).

Nothing in ``minicb/`` imports it (tests/repository/test_house.py).
"""
