"""The batching stages, one module each, and the one table of their names."""
from .continuous import ContinuousEngine
from .dynamic import DynamicEngine
from .overlap import AsyncPagedEngine, AsyncPrefixCachingEngine
from .paged import PagedEngine
from .prefix_caching import PrefixCachingEngine
from .single import SingleEngine
from .speculative import SpeculativeEngine, SpeculativePrefixCachingEngine
from .static import StaticEngine

STAGES = {"single": SingleEngine, "static": StaticEngine, "dynamic": DynamicEngine,
          "continuous": ContinuousEngine, "paged": PagedEngine}

# ANCHOR: engine_class
# Stage 5 with prefix caching (chapter 6), async scheduling (chapter 8), or both.
# Keyed by (enable_prefix_caching, async_scheduling).
PAGED_ENGINES = {(False, False): PagedEngine,
                 (True, False): PrefixCachingEngine,
                 (False, True): AsyncPagedEngine,
                 (True, True): AsyncPrefixCachingEngine}


# Stage 6: stage 5 with speculative decoding, keyed by enable_prefix_caching.
SPECULATIVE_ENGINES = {False: SpeculativeEngine, True: SpeculativePrefixCachingEngine}


def engine_class(config):
    """The class that runs config.engine, with the ideas the config turns on."""
    if config.engine != "paged":
        return STAGES[config.engine]
    if config.speculative_config is not None:
        return SPECULATIVE_ENGINES[config.enable_prefix_caching]
    return PAGED_ENGINES[config.enable_prefix_caching, config.async_scheduling]
# ANCHOR_END: engine_class
