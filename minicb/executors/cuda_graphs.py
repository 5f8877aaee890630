"""An executor that replays steps from CUDA graphs (every stage on a GPU).

A decode step of a small model is hundreds of small kernels, and launching
them from Python can take longer than running them. A CUDA graph records
the launches of one forward pass once; replaying it is a single call.

A graph replays fixed shapes at fixed addresses, so this executor keeps
static buffers: the step's tokens and positions, and each tensor of its
stage's attention metadata (stages 1-2's lengths, stage 4's slot starts,
stage 5's block tables, ...), which the metadata's class declares by the kind
of its rows (``rows``: minicb/attention.py). A step is padded to a shape, and
there is one graph per shape:

- a decode step (one query a sequence) to a bucket of sequences (1, 2, 4, 8,
  then multiples of 16, up to the most sequences a step holds: one in stage 1,
  ``max_batch_size`` in stages 2-3, ``max_num_seqs`` in 4-5);
- with speculative decoding (stage 6), a verify step (each sequence's last
  token and its drafts, at most k + 1 queries) to the same buckets of
  sequences, with k + 1 token rows for each;
- with ``prompt_graphs=True`` (stage 5), a step that carries prompt tokens to
  a bucket of tokens (64, 128, ... 2,048) and every sequence row, its attention
  over a fixed grid (the kernels' ``fixed_grid`` variants, whose extra
  programs exit at once). Other such steps vary in shape every step, and run
  eagerly.

Padding rows write no K/V that a sequence reads and attend to one key; each
padding sequence owns at most one padding token; their outputs are never read.
The first step of a kind captures every shape of that kind, largest first (the
smaller graphs then fit in the memory the largest reserved), each on the first
sequences of the step that fit it: they write the K/V the step writes anyway.

Stages 1-3 make a KV cache for each batch. A graph would keep writing to the
first one it captured, so here every batch's cache is a view of one buffer
this executor keeps (``new_batch_kv_cache``), as wide as the widest batch so far and
with a row for every padding row too.

With ``capture=False`` the executor runs the model on the same padded buffers
without capturing: on a CPU, that is how the tests check the padding.

The stage never learns of any of this: it hands this executor the same
inputs it hands the plain one.
"""
import dataclasses
from contextlib import contextmanager

import torch

from ..attention import fields_by_rows, replayable
from .plain import Executor


def bucket_sizes(max_num_seqs: int) -> list[int]:
    sizes = [b for b in (1, 2, 4, 8) if b < max_num_seqs]
    sizes += list(range(16, max_num_seqs, 16))
    return sizes + [max_num_seqs]


# The token counts prompt-carrying steps are padded to (prompt_graphs=True); a larger
# step runs eagerly, its launches small beside its work.
PROMPT_BUCKETS = (64, 128, 256, 512, 1024, 2048)


def prompt_buckets(config) -> list[int]:
    """The token buckets of stage 5's prompt steps, none without prompt_graphs."""
    if not config.prompt_graphs:
        return []
    # (a budget unset until the model's length is known: its default, 2,048 or more)
    budget = config.max_num_batched_tokens or PROMPT_BUCKETS[-1]
    # every bucket below the budget, and the first that holds a step of the whole budget
    return ([b for b in PROMPT_BUCKETS if b < budget]
            + [b for b in PROMPT_BUCKETS if b >= budget][:1])


# What a padding row holds, by the kind of its rows: a slot of -1 writes no K/V, and
# a length of 1 attends to one key; any other kind holds 0.
PADDING = {"slots": -1, "lengths": 1}


@dataclasses.dataclass(frozen=True)
class Shape:
    """What a step is padded to: its token rows, its sequence rows, and the most
    queries a sequence may have (1: a decode step's)."""
    tokens: int
    sequences: int
    max_query_len: int


# ANCHOR: graph_executor
class GraphExecutor(Executor):
    """The plain executor, with steps padded to fixed shapes and replayed from
    CUDA graphs. Which tensors a step's attention metadata holds, and what
    their rows are, its class declares (``rows``: minicb/attention.py)."""

    def __init__(self, model, config, max_sequences: int, capture=True):
        """max_sequences: the most sequences one of the stage's steps holds
        (its ``sequences_per_step``), which the largest bucket holds."""
        super().__init__(model)
        self.capture = capture
        self.buckets = bucket_sizes(max_sequences)
        self.prompt_buckets = prompt_buckets(config)     # stage 5 with prompt_graphs
        # stage 6: a verify step's most queries a sequence, k drafts and the last token
        spec = config.speculative_config
        self.verify_queries = spec["num_speculative_tokens"] + 1 if spec else None
        self.device = model.embed_tokens.weight.device
        self.max_model_len = config.max_model_len
        self.buffers = {}               # made at the first padded step
        self.padded_kv = None           # stages 1-3: the buffer every batch's K/V view
        self.graphs, self.outputs, self.pool = {}, {}, None

    def close(self):
        """Drop the graphs, their memory pool and the static buffers, then the model."""
        self.graphs, self.outputs, self.pool = {}, {}, None
        self.buffers, self.padded_kv = {}, None
        super().close()

    def new_batch_kv_cache(self, batch, capacity):
        """Stages 1-3 ask for every batch: they get a view of one buffer of
        max_batch_size rows and max_model_len columns, whose address every graph
        captures (a static batch's classic reservation). A batch wider than that
        (its longest prompt and its longest output may come from different
        requests) replaces it, and the graphs, which wrote to the old one."""
        if self.padded_kv is None or self.padded_kv[0].shape[2] < capacity:
            self.graphs, self.outputs, self.pool, self.padded_kv = {}, {}, None, None
            width = max(capacity, self.max_model_len)
            self.padded_kv = self.new_kv_cache(self.buckets[-1], width)
        return tuple(cache[:, :batch, :capacity] for cache in self.padded_kv)

    def execute(self, input_ids, positions, attn, sample_rows):
        step = Step(input_ids, positions, attn)
        shape = self.padded_shape(step)
        if shape is None:                   # a prompt step, with no bucket for it
            return super().execute(input_ids, positions, attn, sample_rows)
        if self.capture and shape not in self.graphs:
            shapes = self.shapes_like(shape)                  # largest first
            with all_or_none(shapes, self.graphs, self.outputs):
                for each in shapes:
                    self.fill(each, step.first_that_fit(each))
                    self.graphs[each], self.outputs[each] = self.captured(
                        lambda each=each: self.forward(each, attn))
        self.fill(shape, step)
        if self.capture:
            self.graphs[shape].replay()                   # one call for every launch
            hidden = self.outputs[shape]
        else:
            hidden = self.forward(shape, attn)
        return self.model.compute_logits(hidden[:step.tokens][sample_rows])

    def padded_shape(self, step) -> Shape | None:
        """A decode step's: the bucket of its sequences. A verify step's: that
        bucket, k + 1 token rows a sequence. A step that carries prompt tokens:
        the bucket of its tokens, with every sequence row; None where there is
        none (prompt_graphs off, or a step larger than them)."""
        if step.max_query_len == 1 or step.max_query_len <= (self.verify_queries or 0):
            queries = 1 if step.max_query_len == 1 else self.verify_queries
            bucket = next(b for b in self.buckets if b >= step.sequences)
            return Shape(bucket * queries, bucket, queries)
        bucket = next((b for b in self.prompt_buckets if b >= step.tokens), None)
        return None if bucket is None else Shape(bucket, self.buckets[-1], bucket)

    def shapes_like(self, shape) -> list[Shape]:
        """Every shape of the same kind as this one, largest first."""
        if shape.max_query_len in (1, self.verify_queries):
            queries = shape.max_query_len
            return [Shape(b * queries, b, queries) for b in reversed(self.buckets)]
        return [Shape(b, self.buckets[-1], b) for b in reversed(self.prompt_buckets)]

    def fill(self, shape, step):
        """The step into the first rows of the static buffers; the shape's other
        rows padding, each padding sequence owning at most one padding token
        (its boundaries climb by one, up to the shape's last token row)."""
        buffers, kinds = self.made_buffers(step.attn), fields_by_rows(step.attn)
        tokens, sequences = step.tokens, step.sequences
        per_token = [("input_ids", step.input_ids, 0), ("positions", step.positions, 0)]
        per_token += [(field.name, step.rows(field), PADDING["slots"])
                      for field in kinds["slots"]]
        for name, value, padding in per_token:
            buffers[name][:tokens].copy_(value)
            buffers[name][tokens:shape.tokens] = padding
        for kind in ("lengths", "sequences", "tables"):
            for field in kinds[kind]:
                value, buffer = step.rows(field), buffers[field.name]
                columns = slice(0, value.shape[1]) if kind == "tables" else ...
                buffer[:sequences, columns].copy_(value)
                buffer[sequences:shape.sequences] = PADDING.get(kind, 0)
        for field in kinds["boundaries"]:
            buffer, padding = buffers[field.name], shape.sequences - sequences
            buffer[:sequences + 1].copy_(step.rows(field))
            if padding:
                ends = torch.arange(padding, device=self.device) + tokens + 1
                buffer[sequences + 1:shape.sequences + 1] = ends.clamp(max=shape.tokens)

    def made_buffers(self, attn) -> dict:
        """The static buffers, made at the first padded step: the inputs and the
        slots a row per token of the largest shape, the others a row per
        sequence (boundaries one more), a table as many columns as a
        max_model_len request needs. A batch's cache is the buffer above."""
        if self.buffers:
            return self.buffers
        sequences = self.buckets[-1]
        tokens = max([sequences * (self.verify_queries or 1), *self.prompt_buckets])
        self.buffers = {name: torch.zeros(tokens, dtype=torch.long, device=self.device)
                        for name in ("input_ids", "positions")}
        for kind, declared in fields_by_rows(attn).items():
            for field in declared if kind != "cache" else ():
                shape = {"slots": (tokens,), "boundaries": (sequences + 1,)}.get(
                    kind, (sequences,))
                if kind == "tables":
                    shape = (sequences, self.table_columns(attn, field))
                dtype = getattr(attn, field.name).dtype
                self.buffers[field.name] = torch.full(
                    shape, PADDING.get(kind, 0), dtype=dtype, device=self.device)
        return self.buffers

    def table_columns(self, attn, field) -> int:
        """A table's widest: the columns of a max_model_len request, each covering
        the keys its table declares (a block's)."""
        keys_per_column = getattr(attn, field.metadata["keys_per_column"])
        return -(-self.max_model_len // keys_per_column)

    def forward(self, shape, attn):
        """The model on the shape's rows of the static buffers: the step's
        attention metadata (its caches and sizes), with its tensors swapped for
        views of the buffers, a batch's cache for the shape's rows of the buffer
        it is a view of, and its kernels for ones that replay at a fixed size."""
        kinds, views = fields_by_rows(attn), {}
        rows = {"slots": shape.tokens, "boundaries": shape.sequences + 1}
        for kind, declared in kinds.items():
            if kind != "cache":
                size = rows.get(kind, shape.sequences)
                views |= {f.name: self.buffers[f.name][:size] for f in declared}
        # a batch's cache: [layers, rows, columns, ...]
        caches = zip(kinds["cache"], self.padded_kv or ())
        views |= {field.name: cache[:, :shape.sequences] for field, cache in caches}
        ops = replayable(attn.ops, shape.max_query_len)
        on_buffers = dataclasses.replace(attn, ops=ops,
                                         max_query_len=shape.max_query_len, **views)
        tokens = slice(0, shape.tokens)
        return self.model(self.buffers["input_ids"][tokens],
                          self.buffers["positions"][tokens], on_buffers)

    def captured(self, run):
        """Run once outside the graph (Triton compiles, allocations settle), then
        capture. Returns the graph and the output tensor it writes."""
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            run()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self.pool):
            output = run()
        # every graph shares one memory pool: each output is read before the next replay
        self.pool = graph.pool()
        return graph, output
# ANCHOR_END: graph_executor


# ANCHOR: step
@dataclasses.dataclass
class Step:
    """One step as the stage hands it over: its tokens' inputs and its attention
    metadata, or its first sequences (``first_that_fit`` a smaller shape)."""
    input_ids: torch.Tensor
    positions: torch.Tensor
    attn: object
    sequences: int = None

    def __post_init__(self):
        self.tokens = self.input_ids.shape[0]
        if self.sequences is None:          # every metadata has a length per sequence
            lengths = fields_by_rows(self.attn)["lengths"][0]
            self.sequences = getattr(self.attn, lengths.name).shape[0]
        self.max_query_len = self.attn.max_query_len

    def rows(self, field):
        """The step's rows of one metadata tensor: its tokens' or its sequences'
        (the boundaries one more)."""
        kind = field.metadata["rows"]
        count = {"slots": self.tokens, "boundaries": self.sequences + 1}.get(
            kind, self.sequences)
        return getattr(self.attn, field.name)[:count]

    def first_that_fit(self, shape) -> "Step":
        """The step's first sequences that fit the shape, with their tokens: a
        step of the shape's own to capture it on (a decode step's first rows;
        a prompt step's sequences whose tokens all fit)."""
        sequences = min(self.sequences, shape.sequences)
        boundaries = fields_by_rows(self.attn)["boundaries"]
        if boundaries:
            ends = getattr(self.attn, boundaries[0].name).tolist()
            while ends[sequences] > shape.tokens:
                sequences -= 1
            tokens = ends[sequences]
        else:
            tokens = sequences * self.max_query_len
        return Step(self.input_ids[:tokens], self.positions[:tokens], self.attn,
                    sequences)
# ANCHOR_END: step


@contextmanager
def all_or_none(shapes, *captured):
    """Keep the graphs of every shape captured inside, or none: where one capture
    fails (out of memory, say), the step raises and the next step captures them
    all again, instead of finding some shapes missing."""
    try:
        yield
    except BaseException:
        for graphs in captured:
            for shape in shapes:
                graphs.pop(shape, None)
        raise
