"""The batching stages, one module each, and the one table of their names."""
from .continuous import ContinuousEngine
from .dynamic import DynamicEngine
from .overlap import AsyncPagedEngine
from .paged import PagedEngine
from .single import SingleEngine
from .static import StaticEngine

STAGES = {"single": SingleEngine, "static": StaticEngine, "dynamic": DynamicEngine,
          "continuous": ContinuousEngine, "paged": PagedEngine}


def engine_class(config):
    """The class that runs config.engine: stage 5 with async scheduling and
    with decode steps from CUDA graphs, if the config asks for them."""
    engine = AsyncPagedEngine if config.async_scheduling else STAGES[config.engine]
    if config.cuda_graphs and issubclass(engine, PagedEngine):      # stage 5 only (chapter 7)
        from ..cuda_graphs import with_decode_graphs     # here: that module imports stage 5's
        engine = with_decode_graphs(engine)
    return engine
