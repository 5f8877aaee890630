"""The fused kernels of the fast step (kernels/norm.py, activation.py, rotary.py, argmax.py)
against their naive twins (kernels/reference.py), which compute what the plain
model computes. In the interpreter on a CPU: fp32 and fp16 (bf16 on a GPU)."""
import pytest
import torch

from minicb import LLM, SamplingParams
from minicb.config import EngineConfig
from minicb.kernels import reference
from minicb.kernels.activation import silu_mul
from minicb.kernels.argmax import finite_argmax
from minicb.kernels.norm import add_rms_norm
from minicb.kernels.rotary import rotary
from minicb.model import RMSNorm, Rotary

from ..conftest import ARCHS, DEVICE, PROMPTS
from .test_kernels import DTYPES, TOLERANCE


def rand(*shape, dtype):
    return torch.randn(*shape, device=DEVICE).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("hidden", [64, 80, 2048])
@pytest.mark.parametrize("with_residual", [True, False])
def test_add_rms_norm_matches_its_twin(dtype, hidden, with_residual):
    torch.manual_seed(0)
    x, residual = rand(5, hidden, dtype=dtype), rand(5, hidden, dtype=dtype) if with_residual else None
    weight = rand(hidden, dtype=dtype)
    out, new_residual = add_rms_norm(x, residual, weight, 1e-5)
    expected, expected_residual = reference.add_rms_norm(x, residual, weight, 1e-5)
    torch.testing.assert_close(new_residual, expected_residual, atol=0, rtol=0)   # one rounding, the same
    torch.testing.assert_close(out, expected, **TOLERANCE[dtype])


def test_add_rms_norm_reads_rows_with_a_stride():
    wide = rand(4, 96, dtype=torch.float32)
    x, residual, weight = wide[:, :64], rand(4, 64, dtype=torch.float32), rand(64, dtype=torch.float32)
    out, _ = add_rms_norm(x, residual, weight, 1e-6)
    torch.testing.assert_close(out, reference.add_rms_norm(x, residual, weight, 1e-6)[0])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("width", [48, 1024, 2600])
def test_silu_mul_matches_its_twin_on_halves_of_one_tensor(dtype, width):
    torch.manual_seed(1)
    gate_up = rand(3, 2 * width, dtype=dtype)                     # as one matmul of gate and up gives them
    gate, up = gate_up[:, :width], gate_up[:, width:]
    torch.testing.assert_close(silu_mul(gate, up), reference.silu_mul(gate, up), **TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("heads,kv_heads,head_dim", [(4, 2, 64), (6, 6, 48), (32, 8, 128)])
def test_rotary_matches_its_twin_in_place(dtype, heads, kv_heads, head_dim):
    torch.manual_seed(2)
    q, k = rand(7, heads, head_dim, dtype=dtype), rand(7, kv_heads, head_dim, dtype=dtype)
    cfg = type("Shape", (), dict(head_dim=head_dim, rope_theta=10000.0, rope_scaling=None))
    cos, sin = Rotary(cfg).cos_sin(torch.tensor([0, 1, 5, 9, 100, 2000, 3], device=DEVICE), dtype)
    expected_q, expected_k = reference.rotary(q, k, cos, sin)
    got_q, got_k = rotary(q.clone(), k.clone(), cos, sin)
    torch.testing.assert_close(got_q, expected_q, **TOLERANCE[dtype])
    torch.testing.assert_close(got_k, expected_k, **TOLERANCE[dtype])


def test_the_twins_compute_what_the_plain_model_computes():
    """The references are the model's own operations, not a second version of them."""
    torch.manual_seed(3)
    norm = RMSNorm(64, 1e-5)
    norm.weight.data = torch.randn(64)
    x, residual = torch.randn(5, 64), torch.randn(5, 64)
    out, summed = reference.add_rms_norm(x, residual, norm.weight, 1e-5)
    assert torch.equal(summed, x + residual) and torch.equal(out, norm(x + residual))
    x = torch.randn(3, 64)
    assert torch.equal(reference.add_rms_norm(x, None, norm.weight, 1e-5)[0], norm(x))     # layer 0


def test_fused_kernels_refuse_a_strided_last_axis():
    x = rand(4, 64, dtype=torch.float32)
    with pytest.raises(ValueError, match="contiguous"):
        add_rms_norm(x.t().contiguous().t(), None, rand(64, dtype=torch.float32), 1e-5)
    with pytest.raises(ValueError, match="contiguous"):
        silu_mul(x[:, ::2], x[:, ::2])
    with pytest.raises(ValueError, match="contiguous"):
        q = rand(2, 16, 4, dtype=torch.float32).transpose(1, 2)
        rotary(q, q, rand(2, 16, dtype=torch.float32), rand(2, 16, dtype=torch.float32))


@pytest.mark.parametrize("arch,engine", [(arch, "paged") for arch in ARCHS]
                         + [("llama", "single"), ("llama", "static")])
def test_the_fused_model_gives_the_plain_models_tokens(checkpoints, arch, engine):
    """In fp32 the fused kernels and the plain operations agree token for token, in
    every architecture (Qwen2's q/k/v bias, Qwen3's q/k norms) and every kind of step
    (packed, one sequence, a padded batch)."""
    params = SamplingParams(max_tokens=6, ignore_eos=True)
    options = dict(engine=engine, attention_backend="triton", max_model_len=64)
    plain = LLM(checkpoints[arch], fused_ops=False, **options).generate(PROMPTS, params)
    fused_llm = LLM(checkpoints[arch], fused_ops=True, **options)
    assert fused_llm.llm_engine.executor.model.ops.rotary is rotary            # the kernels ran
    assert fused_llm.llm_engine.stage.sampler.finite_argmax is finite_argmax
    fused = fused_llm.generate(PROMPTS, params)
    assert [o.output_token_ids for o in fused] == [o.output_token_ids for o in plain]


def test_fused_ops_are_on_by_default_only_where_they_pay():
    """On by default with CUDA and the Triton backend; in Triton's interpreter (a CPU),
    or with another backend, the plain model runs."""
    assert EngineConfig(engine="paged", attention_backend="sdpa").fused_ops is False
    on_a_gpu = torch.cuda.is_available()
    assert EngineConfig(engine="paged", attention_backend="triton").fused_ops is on_a_gpu


def test_fused_ops_need_the_triton_backend():
    with pytest.raises(ValueError, match="fused_ops=True needs attention_backend 'triton'"):
        EngineConfig(engine="paged", fused_ops=True, attention_backend="sdpa")


# A fused decoder layer's launches, attention aside: one kernel each for the two norms,
# rotary and SiLU x up, and four matmuls; the plain layer launches at least 4 times as many.
FUSED_KERNELS = dict(add_rms_norm=2, rotary=1, silu_mul=1)
FUSED_MATMULS = 4
PLAIN_OVER_FUSED = 4
# The plain layer's, attention aside, as this CPU counts them: 7 projections, and the
# norms', rotary's, residual adds' and SiLU's small operations.
PLAIN_LAUNCHES = dict(linear=7, add=6, mul=9, pow=2, mean=2, rsqrt=2, neg=2, cat=2, silu=1)


def test_a_fused_layer_launches_a_quarter_of_what_the_plain_one_does(llama):
    """Counted, not timed: a decoder layer's launches, attention aside. Fused: four
    matmuls (q/k/v joined, o, gate/up joined, down) and one kernel each for the two
    norms, rotary and SiLU x up."""
    from minicb.checkpoint import load_model
    from minicb.layer_ops import LAYER_OP_NAMES
    from workshop.measure.benchmarks import layer_launches

    plain = layer_launches(load_model(llama, "float16", DEVICE))
    fused = layer_launches(load_model(llama, "float16", DEVICE, fused_ops=True))
    assert {name: fused[name] for name in LAYER_OP_NAMES} == FUSED_KERNELS
    assert sum(n for name, n in fused.items() if name not in LAYER_OP_NAMES) == FUSED_MATMULS    # the matmuls
    assert not any(plain[name] for name in LAYER_OP_NAMES)          # the plain ops, counted in parts
    assert {name: n for name, n in plain.items() if n} == PLAIN_LAUNCHES
    assert sum(plain.values()) >= PLAIN_OVER_FUSED * sum(fused.values()), (plain, fused)


def test_joined_projections_share_the_weights_memory_and_compute_the_same(llama):
    from minicb.checkpoint import load_model

    plain, fused = load_model(llama), load_model(llama, fused_ops=True)
    attn, mlp = fused.layers[0].self_attn, fused.layers[0].mlp
    # the separate linears gave their weights to the joined ones: nothing doubled
    assert not any(hasattr(attn, name) for name in ("q_proj", "k_proj", "v_proj"))
    assert not any(hasattr(mlp, name) for name in ("gate_proj", "up_proj"))
    assert sum(p.numel() for p in fused.parameters()) == sum(p.numel() for p in plain.parameters())
    x = torch.randn(3, fused.config.hidden_size)
    reference_attn = plain.layers[0].self_attn
    for joined, linear in zip(attn.qkv(x), (reference_attn.q_proj, reference_attn.k_proj, reference_attn.v_proj)):
        torch.testing.assert_close(joined, linear(x))


def test_joining_the_projections_frees_the_separate_weights(llama):
    """A loaded weight requires grad: a join that kept cat's graph would hold every
    separate q, k, v, gate and up weight beside the joined copy (8.5 GiB on the 8B
    shape, memory the KV budget does not count)."""
    import gc
    import weakref

    from minicb.checkpoint import load_model

    model = load_model(llama)
    separate = [weakref.ref(linear.weight) for layer in model.layers
                for linear in (layer.self_attn.q_proj, layer.self_attn.k_proj, layer.self_attn.v_proj,
                               layer.mlp.gate_proj, layer.mlp.up_proj)]
    model.join_projections()
    gc.collect()
    assert [ref() for ref in separate] == [None] * len(separate)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
@pytest.mark.parametrize("vocab", [7, 1024, 2500])
def test_finite_argmax_matches_its_twin_ties_and_broken_rows_included(dtype, vocab):
    logits = rand(6, vocab, dtype=dtype)
    logits[1, vocab // 3] = logits[1, vocab - 1] = logits[1].max() + 1       # a tie: the first wins
    logits[2, vocab // 2] = float("nan")
    logits[3, 0] = float("inf")
    logits[4, vocab - 1] = float("-inf")
    logits[5] = float("-inf")                                                 # nothing finite at all
    tokens = finite_argmax(logits)
    assert tokens.tolist() == reference.finite_argmax(logits).tolist()
    assert tokens[1] == vocab // 3 and tokens[2] == tokens[3] == tokens[4] == tokens[5] == -1
    with pytest.raises(ValueError, match="contiguous last axis"):
        finite_argmax(logits.t())


class CountedKernel:
    """A Triton kernel that counts its launches (kernel[grid](...))."""

    def __init__(self, kernel):
        self.kernel, self.launches = kernel, 0

    def __getitem__(self, grid):
        self.launches += 1
        return self.kernel[grid]


# The plain greedy pick's launches: argmax, isfinite as an abs and three comparisons,
# all, a negation and a masked fill.
GREEDY_PLAIN_LAUNCHES = 8


def test_the_greedy_pick_and_its_check_are_one_launch_fused_and_eight_plain(monkeypatch):
    """Counted as for a layer: argmax, isfinite (an abs and three comparisons as
    PyTorch dispatches it), all, a negation and a masked fill, against one kernel."""
    from workshop.measure.benchmarks import Launches
    logits = rand(4, 300, dtype=torch.float32)
    with Launches() as plain:
        reference.finite_argmax(logits)
    assert sum(plain.count.values()) == GREEDY_PLAIN_LAUNCHES and {"argmax", "all", "masked_fill"} <= set(plain.count)
    from minicb.kernels import argmax
    counted = CountedKernel(argmax._finite_argmax_kernel)
    monkeypatch.setattr(argmax, "_finite_argmax_kernel", counted)
    assert finite_argmax(logits).tolist() == reference.finite_argmax(logits).tolist()
    assert counted.launches == 1
