"""Task ellm29: vLLM's --cpu-offload-gb N in `gpu-garden kv` (runtimes/vllm_offload.py). vLLM's UVAOffloader
(vllm/model_executor/offloader/uva.py) walks the decoder layers in order and moves each parameter whole to pinned host
memory while the running total is below N GiB; the token table and the head stay. Expected values are worked here by
hand from the models' geometry (bf16, 2 bytes a value), not taken from kv."""
import pytest

from gpu_garden.memory.cli import main
from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB, MiB

CAP = 12 * GiB  # 12,884,901,888 bytes


def _llama_moved():
    # Llama-3.1-8B: hidden 4096, 32 heads + 2 x 8 KV heads of 128, intermediate 14336, 32 layers. A layer in vLLM's
    # registration order: qkv_proj 6144 x 4096, o_proj 4096 x 4096, gate_up_proj 28672 x 4096, down_proj 4096 x 14336,
    # two norms of 4096
    qkv, o, gate_up, down, norms = (6144 * 4096 * 2, 4096 * 4096 * 2, 28672 * 4096 * 2, 4096 * 14336 * 2, 2 * 4096 * 2)
    layer = qkv + o + gate_up + down + norms  # 436,224,000
    moved, params = 0, [qkv, o, gate_up, down, norms] * 32
    for p in params:  # the check comes before each move (uva.py _maybe_offload_to_cpu)
        if moved >= CAP:
            break
        moved += p
    assert layer == 436_224_000 and moved == 29 * layer + qkv + o + gate_up == 12_969_263_104
    return moved


def _qwen_moved():
    # Qwen2.5-7B: hidden 3584, 28 heads + 2 x 4 KV heads of 128, intermediate 18944, 28 layers; qkv_proj has a bias
    qkv, bias, o = 4608 * 3584 * 2, 4608 * 2, 3584 * 3584 * 2
    gate_up, down, norms = 37888 * 3584 * 2, 3584 * 18944 * 2, 2 * 3584 * 2
    layer = qkv + bias + o + gate_up + down + norms  # 466,115,584
    assert 27 * layer < CAP <= 27 * layer + qkv + bias + o + gate_up
    return 27 * layer + qkv + bias + o + gate_up  # 12,915,431,424


def _plan(model, **k):
    # TheBuccaneer/vllm-offload-profiles fixd_*_gmem086_offload12.log (batch 60): vLLM 0.17.1 on an RTX 3090,
    # --max-model-len 8192 --gpu-memory-utilization 0.86 --cpu-offload-gb 12
    kw = dict(ctx=8192, vram=int(23.58 * GiB), gpu_memory_utilization=0.86, runtime_version="0.17.1",
              gpu_name="NVIDIA GeForce RTX 3090")
    kw.update(k)
    return llm.plan(llm.describe(model=model), "vllm", **kw)


# 1. Whole parameters, in order, until the total reaches the cap: 12.08 GiB of Llama-3.1-8B, not 12.00 (the log's
# 'Model loading took 2.91 GiB' against 14.99 without offload). Breaking it: taking the cap itself (offloaded_bytes
# returning int(cap)) misses by 84 MB. kv's blocks carry the final norm (hidden x 2 bytes), which it spreads over the
# layers: 256 bytes on each of the 29 whole layers moved.
def test_llama31_8b_moves_whole_parameters_past_the_cap():
    r, base = _plan("meta-llama/Llama-3.1-8B-Instruct", cpu_offload_gb=12), _plan("meta-llama/Llama-3.1-8B-Instruct")
    assert abs(r["host_offloaded"] - (_llama_moved() + 29 * 4096 * 2 // 32)) <= 64, r["host_offloaded"]
    assert base["weights"] - r["weights"] == r["host_offloaded"]
    assert "--cpu-offload-gb 12" in r["command"]


# Breaking it: dropping the bias from the layer's sequence moves 9,216 bytes less.
def test_qwen25_7b_counts_the_qkv_bias():
    r = _plan("Qwen/Qwen2.5-7B-Instruct", cpu_offload_gb=12)
    assert abs(r["host_offloaded"] - (_qwen_moved() + 27 * 3584 * 2 // 28)) <= 64, r["host_offloaded"]


# 2. The moved bytes reappear as KV pool (the offloaded part is not in 'Model loading took'). Breaking it: keeping the
# full weights in the evaluation (roles["total"] unchanged): the pools would be equal.
def test_the_kv_pool_grows_by_the_moved_bytes():
    r, base = _plan("meta-llama/Llama-3.1-8B-Instruct", cpu_offload_gb=12), _plan("meta-llama/Llama-3.1-8B-Instruct")
    grown = r["kv_capacity_bytes"] - base["kv_capacity_bytes"]
    assert abs(grown - r["host_offloaded"]) < 4 * MiB, (grown, r["host_offloaded"])  # one 2 MiB page each side


# 3. A cap past the decoder layers moves every layer and nothing else: the token table (128256 x 4096), the head (the
# same, untied), the final norm and the rotary tables stay. Breaking it: no min() with the blocks.
def test_a_cap_past_the_layers_moves_every_layer_only():
    r = _plan("meta-llama/Llama-3.1-8B-Instruct", cpu_offload_gb=40)
    assert r["host_offloaded"] == 32 * 436_224_000 + 4096 * 2  # kv's blocks carry the final norm
    assert r["weights"] == 2 * 128256 * 4096 * 2 + 32 * MiB  # + the 32 MiB of rotary cos/sin tables kv counts


# 4. A model kv cannot lay out (MoE) is taken at the cap, and the note says up to one parameter more moves.
def test_moe_is_taken_at_the_cap_with_a_note():
    r = llm.plan(llm.describe(model="Qwen/Qwen3-30B-A3B"), "vllm", ctx=8192, runtime_version="0.17.1",
                 cpu_offload_gb=20)
    assert r["host_offloaded"] == 20 * GiB
    assert any("taken as the cap" in n for n in r["notes"])


# 5. Refusals: another runtime (one table, plan_checks.READ_BY), a vLLM before vllm#6496, a negative size,
# pipeline parallelism.
@pytest.mark.parametrize("runtime", ["llama.cpp", "ollama", "sglang"])
def test_other_runtimes_refuse_it(runtime):
    with pytest.raises(UserError, match="cpu_offload_gb"):
        llm.plan(llm.describe(model="meta-llama/Llama-3.1-8B-Instruct"), runtime, ctx=8192, cpu_offload_gb=4)


@pytest.mark.parametrize("k", [dict(runtime_version="0.5.2"), dict(cpu_offload_gb=-1),
                               dict(pipeline_parallel_size=2)])
def test_bad_requests_are_refused(k):
    kw = dict(dict(cpu_offload_gb=4), **k)
    with pytest.raises(UserError):
        _plan("meta-llama/Llama-3.1-8B-Instruct", **kw)


def test_zero_is_no_offload():
    r = _plan("meta-llama/Llama-3.1-8B-Instruct", cpu_offload_gb=0)
    assert "host_offloaded" not in r and "--cpu-offload-gb" not in r["command"]


# 6. Later releases: the V2 model runner ignores the flag (vllm#51396): said for the newest, not for 0.17.1.
def test_v2_runner_note_for_later_releases_only():
    newest = llm.plan(llm.describe(model="meta-llama/Llama-3.1-8B-Instruct"), "vllm", ctx=8192, cpu_offload_gb=12)
    assert any("vllm#51396" in n for n in newest["notes"])
    assert not any("vllm#51396" in n for n in _plan("meta-llama/Llama-3.1-8B-Instruct", cpu_offload_gb=12)["notes"])


# 7. The CLI: the option, its host-RAM row, and the refusal for another runtime.
def test_cli_row_and_refusal(capsys):
    rc = main(["kv", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--ctx", "8192", "--vram", "23.58",
               "--runtime-version", "0.17.1", "--cpu-offload-gb", "12"])
    out = capsys.readouterr().out
    assert rc == 0 and "in host RAM" in out and "12.08 GiB" in out and "--cpu-offload-gb 12" in out
    rc = main(["kv", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--ctx", "8192", "--runtime", "llama.cpp",
               "--cpu-offload-gb", "12"])
    captured = capsys.readouterr()
    assert rc != 0 and "--cpu-offload-gb" in captured.err + captured.out


# 8. (review26) Tensor parallel: the roles kv hands the offloader are already one GPU's (a half of Llama-3.1-8B's
# 13.00 GiB of decoder layers at TP 2, 6,979,584,000 + the final norm's half), so a 4 GiB cap is not reached by every
# layer: the cap itself moves (kv does not lay out a sharded rank), not a quarter of the layers. Breaking it: dividing
# the per-GPU blocks by tp again moved 3.25 GiB and said "(every layer)".
def test_tensor_parallel_moves_up_to_the_cap_of_one_gpus_layers():
    r = _plan("meta-llama/Llama-3.1-8B-Instruct", cpu_offload_gb=4, tensor_parallel_size=2, vram=int(24 * GiB))
    half_layers = 32 * 436_224_000 // 2
    assert r["host_offloaded"] == 4 * GiB < half_layers
    assert not any("(every layer)" in n for n in r["notes"])
    whole = _plan("meta-llama/Llama-3.1-8B-Instruct", cpu_offload_gb=40, tensor_parallel_size=2, vram=int(24 * GiB))
    assert abs(whole["host_offloaded"] - half_layers) <= 4096  # every layer: one GPU's half, not a quarter


# 9. (review26) A size past the sanity bound names the bound (it said "(0 or more)" for 1e300, which is more than 0).
# Breaking it: the old message.
def test_a_huge_size_names_the_bound():
    with pytest.raises(UserError, match=r"0 to 1048576\), got 1e\+300"):
        _plan("meta-llama/Llama-3.1-8B-Instruct", cpu_offload_gb=1e300)


# 10. (fix27) Which loads are laid out parameter by parameter comes from linear_quant.DENSE_BITS (the project's one
# table of dense dtype names), not a list of its own: a 16-bit load (fp16 or f16 given for the bf16 checkpoint; 2 bytes
# a value either way) moves the same whole parameters as item 1; an fp8 or fp32 load is taken at the cap. Breaking it:
# the lookup asking for another width (the 16-bit loads taken at the cap). An fp8 load let through is still taken at
# the cap (dense_sequence's 2-byte layout does not fit its layer), so the fp8 row pins the note, not the lookup.
@pytest.mark.parametrize("dtype", ["fp16", "f16", "BF16"])
def test_a_16_bit_load_is_laid_out(dtype):
    r = _plan("meta-llama/Llama-3.1-8B-Instruct", cpu_offload_gb=12, weights_dtype=dtype)
    assert abs(r["host_offloaded"] - (_llama_moved() + 29 * 4096 * 2 // 32)) <= 64, r["host_offloaded"]
    assert any("parameter by parameter" in n for n in r["notes"])


# (fp8's decoder layers are 32 x 218,112,000 bytes, under 12 GiB: 4 GiB is asked of it)
@pytest.mark.parametrize("dtype, gb", [("fp8", 4), ("fp32", 12)])
def test_other_loads_are_taken_at_the_cap(dtype, gb):
    r = _plan("meta-llama/Llama-3.1-8B-Instruct", cpu_offload_gb=gb, weights_dtype=dtype, vram=80 * GiB)
    assert r["host_offloaded"] == gb * GiB
    assert any("taken as the cap" in n for n in r["notes"])
