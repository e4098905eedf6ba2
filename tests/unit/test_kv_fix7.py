"""fix7: review rev7's kv findings (B5, B2, B3, B4, D1), expected values by hand.

B5. The CUDA buffer's padded rows are the plan's own figure on one GPU too: kv_buffer = kv_total + pad x the layers on
    the GPU that hold KV, and the total carries them. DeepSeek-R1, q8_0, 32768 cells: 61 layers x 512 B = 31,232 B.
B2. ik_llama.cpp's source (git rev-list --count): #208 (1140b4568, build 3561) made K and the default build's MLA latent
    2-D together (MLA_USE_TRANSPOSED_CACHE 1 since #205, build 3556); #234/#235 (3574/3575) changed only the
    non-transposed variant. So build 3570 pads the latent (512 B) and build 3560 does not (576 x 32768 = 36,864 x 512).
B3. ik_build reads every form fork() accepts; a date is no build number.
B4. --mla-cache full (ik -mla 0): per-head K, 2-D, ne0 = 128 + 64 = 192: (512 - 192) x 34/32 = 340 -> 384 B; V 1-D,
    128 x 128 x cells = 32 x 512 x cells: no pad.
D1. Beside --gguf-types, --weights-dtype accepts only an ik file type; a mainline tensor type stays refused."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import ik_build
from gpu_garden.memory.llm.runtimes.llamacpp import kv_buffer_pad

MiB = 1 << 20
TYPES = {"f32": 361, "q8_0": 612, "q2_k_r4": 116, "q3_k_r4": 58}


def _plan(version="ik_llama.cpp 3597 (68a5b604)", weights_dtype="Q2_K_R4", **kw):
    return llm.plan(llm.describe(model="deepseek-ai/DeepSeek-R1"), "llama.cpp", ctx=32768, parallel=1, kv_dtype="q8_0",
                    weights_dtype=weights_dtype, vram=int(47.99 * 1024 * MiB), runtime_version=version, ngl=63,
                    flash_attn="on", override_tensor=["exps=CPU"], gguf_types=TYPES, **kw)


def test_hand_figures():
    assert 61 * 512 == 31_232
    assert (512 - 192) * 34 // 32 == 340 and -(-340 // 128) * 128 == 384
    assert 576 * 32768 % 512 == 0 and 128 * 128 % 512 == 0


def test_one_gpu_plan_carries_the_padded_rows():
    r = _plan()
    assert r["kv_total"] == 61 * 576 * 32768 * 34 // 32
    assert r["kv_buffer_pad"] == 31_232
    assert r["kv_buffer"] == r["kv_total"] + 31_232
    assert round(r["kv_buffer"] / MiB, 2) == 1166.65        # #258's 'CUDA0 KV buffer size = 1166.65 MiB'


def test_total_includes_the_padded_rows():
    r, old = _plan(), _plan(version="ik_llama.cpp 3475 (ac156500)")
    assert old["kv_buffer_pad"] == 0 and old["kv_total"] == r["kv_total"]
    assert r["total"] - old["total"] == 31_232


@pytest.mark.parametrize("version,pad", [("ik_llama.cpp 3570 (x)", 512), ("ik_llama.cpp 3560 (x)", 0),
                                         ("ik_llama.cpp 3561 (x)", 512)])
def test_one_gate_for_k_and_latent(version, pad):
    r = _plan(version=version)
    assert r["kv_per_layer"]["device_buffer"] - r["kv_per_layer"]["full"] == pad


@pytest.mark.parametrize("text,build", [("ik_llama.cpp 3475 (ac156500)", 3475), ("ik_llama.cpp build 3475", 3475),
                                        ("ik_llama.cpp version: 3475 (ac156500)", 3475), ("ik_llama.cpp: 3475", 3475),
                                        ("ik_llama.cpp b3561", 3561), ("ik_llama.cpp 2025-02-19", None),
                                        ("ik_llama.cpp (May 2025)", None)])
def test_ik_build_forms(text, build):
    assert ik_build(text) == build


def test_build_form_gates_the_pad():
    r = _plan(version="ik_llama.cpp build 3475")
    assert r["kv_per_layer"]["device_buffer"] == r["kv_per_layer"]["full"]


def test_mla_cache_full_pads_the_per_head_k():
    ds = llm.describe(model="deepseek-ai/DeepSeek-R1")
    assert kv_buffer_pad(ds, "q8_0", None, 32768, True, None, "full") == 384
    assert kv_buffer_pad(ds, "q8_0", None, 32768, True, None, "latent") == 512
    r = _plan(mla_cache="full")
    assert r["kv_per_layer"]["device_buffer"] - r["kv_per_layer"]["full"] == 384


@pytest.mark.parametrize("dtype", ["Q4_K", "TQ1_0"])  # F32 is a file type (LLAMA_FTYPE_ALL_F32): accepted
def test_mainline_tensor_type_beside_gguf_types_refused(dtype):
    with pytest.raises(UserError):
        _plan(weights_dtype=dtype)


def test_only_layers_holding_kv_are_padded():
    # Qwen3-Next-80B-A3B: 48 layers, 12 of full attention (the rest linear attention, no KV). K 2-D, ne0 = head_dim 256:
    # (512 - 256) x 34/32 = 272 -> 384 B a layer; V 1-D, 2 x 256 x 16384 cells: no pad. 12 x 384 = 4608 B, not 48 x 384
    assert (512 - 256) * 34 // 32 == 272 and 12 * 384 == 4608
    spec = llm.describe(model="Qwen/Qwen3-Next-80B-A3B-Instruct")
    kw = dict(ctx=16384, parallel=1, kv_dtype="q8_0", weights_dtype="Q4_K_M", vram=80 * 1024 * MiB,
              runtime_version="ik_llama.cpp 3800 (x)")
    r = llm.plan(spec, "llama.cpp", **kw)
    assert r["kv_buffer_pad"] == 4608 and r["kv_buffer"] == r["kv_total"] + 4608
    two = llm.plan(spec, "llama.cpp", num_gpus=2, **kw)
    assert sum(d["kv"] for d in two["devices"]) == two["kv_detail"]["full_layers"] + 4608
