"""The tools around the engine: what serves it, measures it and draws it.

Nothing in the engine (``minicb/``, its stages and its executors) imports a
tool; each tool drives the engine through ``LLM`` or ``LLMEngine``.

- serving: ``server`` (an OpenAI-compatible HTTP server), ``cli``
  (``python -m minicb``) and ``options`` (its flags);
- measuring: ``workload`` (request lengths), ``driver`` (replaying a workload
  in real time), ``bench`` and ``bench_serve`` (``minicb bench``),
  ``benchmarks`` (the notebooks' kernel and step measurements), ``peers``
  (transformers on the same requests);
- drawing: ``plots``, ``figures`` (saving figures with their sidecars),
  ``scale`` (each notebook's sizes) and ``gpu_run`` (a GPU run in one
  command); ``demo`` (a real model through every stage).
"""
