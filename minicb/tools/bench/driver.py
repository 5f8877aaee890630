"""Replaying a workload against an engine on its clock, as a server sees it.

Each request is submitted at its arrival time; between arrivals the engine
steps. A request's latency counts from its arrival, so time spent queued
behind a running batch is part of it. Stages 1-3 take whatever has arrived
whenever they start a batch; stages 4-5 admit arrivals every step.
"""

from tqdm.auto import tqdm

from ...llm import LLMEngine
from ...metrics import RunMetrics
from .workload import Workload


# ANCHOR: replay
def replay(engine: LLMEngine, workload: Workload, use_tqdm=False) -> RunMetrics:
    order = sorted(range(len(workload.prompts)),
                   key=lambda i: workload.arrival_times[i])
    pending = [(workload.arrival_times[i], workload.prompts[i], workload.params[i])
               for i in order]
    requests, next_up, clock = [], 0, engine.clock
    start = clock()
    with (tqdm(total=len(pending), desc=engine.config.engine,
               disable=not use_tqdm) as bar,
          engine.stage.measuring(bar) as steps):
        while next_up < len(pending) or engine.has_unfinished_requests():
            now = clock() - start
            while next_up < len(pending) and pending[next_up][0] <= now:
                arrival, prompt, params = pending[next_up]
                request_id = engine.add_request(prompt, params,
                                                arrival_time=start + arrival)
                # the engine lets go of it once done
                requests.append(engine.requests[request_id])
                next_up += 1
            if engine.step():
                continue
            if not engine.has_unfinished_requests() and next_up < len(pending):
                clock.sleep(pending[next_up][0] - now)    # idle until the next arrival
            else:
                clock.sleep(2e-4)             # a batch window still open
    wall_time = clock() - start
    return RunMetrics.from_run(requests, steps, wall_time)
# ANCHOR_END: replay
