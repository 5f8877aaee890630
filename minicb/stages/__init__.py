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
    """The class that runs config.engine: stage 5 with async scheduling, if the
    config asks for it."""
    return AsyncPagedEngine if config.async_scheduling else STAGES[config.engine]
