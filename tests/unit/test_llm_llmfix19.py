"""Review 14c's defects in `gpu-garden kv` (task llmfix19): each test from vLLM's / llama.cpp's source or hand
arithmetic."""
import copy
import json

import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.spec import MODELS_DIR, from_config

GiB = 1 << 30


def _nemotron(pattern):
    with open(f"{MODELS_DIR}/NVIDIA-Nemotron-3-Nano-30B-A3B.json") as f:
        cfg = json.load(f)
    cfg = copy.deepcopy(cfg)
    cfg["hybrid_override_pattern"] = pattern
    if "E" not in pattern:
        cfg.pop("n_routed_experts", None)
    return from_config(cfg)


@pytest.mark.parametrize("pattern", ["M" * 52, "-" * 52, "M-" * 26])
def test_nemotron_without_attention_is_refused_on_vllm_and_planned_on_llamacpp(pattern):
    # no '*' layer: no attention page to size vLLM's pool from (the old code divided by a per-token size of 0);
    # llama.cpp keeps its recurrent-state buffer and plans it
    spec = _nemotron(pattern)
    with pytest.raises(llm.UserError, match="attention layer"):
        llm.plan(spec, "vllm", ctx=8192, vram=80 * GiB)
    assert llm.plan(spec, "llama.cpp", ctx=8192, vram=80 * GiB)["fits"] is True


def _free_plan(free_gib, version="0.10.1", **kw):
    s = llm.describe(model="Llama-3.1-8B")
    return llm.plan(s, "vllm", ctx=8192, weights_dtype="awq", vram=15.99 * GiB, runtime_version=version,
                    free_memory=int(free_gib * GiB), **kw)


@pytest.mark.parametrize("free_gib", [0.3, 0.5])
def test_free_memory_at_or_below_the_cuda_context_is_refused(free_gib):
    # vLLM's own CUDA context takes 512 MiB before its startup check reads the free memory: 0.3 GiB free left
    # "-204.80 MiB" (0.3 x 1024 - 512) and a share "0.00 or less"; 0.5 GiB leaves nothing
    with pytest.raises(llm.UserError, match="--free-gib .*CUDA context"):
        _free_plan(free_gib)


def test_free_memory_just_above_the_context_names_no_zero_share():
    # 0.52 GiB free: 20.48 MiB after the context, floor(0.02 / 15.99 x 100) / 100 = 0.00: no share to print
    notes = " ".join(_free_plan(0.52)["notes"])
    assert "20.48 MiB its startup check finds free" in notes
    assert "--gpu-memory-utilization 0.00" not in notes and "free memory on the GPU" in notes


def _nemotron_cfg(**kw):
    with open(f"{MODELS_DIR}/NVIDIA-Nemotron-3-Nano-30B-A3B.json") as f:
        return dict(json.load(f), **kw)


def test_unknown_mamba_ssm_cache_dtype_is_refused():
    # "float8" is no torch dtype vLLM pages the temporal state in; the old code counted it as float32 (4 bytes)
    with pytest.raises(llm.UserError, match="mamba_ssm_cache_dtype 'float8'.*float32"):
        from_config(_nemotron_cfg(mamba_ssm_cache_dtype="float8"))


@pytest.mark.parametrize("name, nbytes", [("float32", 4), ("bfloat16", 2), ("float16", 2)])
def test_known_mamba_ssm_cache_dtypes(name, nbytes):
    assert from_config(_nemotron_cfg(mamba_ssm_cache_dtype=name)).linear_state[3] == nbytes


@pytest.mark.parametrize("runtime", ["ollama", "sglang"])
def test_mtp_refusal_names_the_runtimes_that_are_modelled(runtime):
    # llama.cpp's --spec-type draft-mtp is planned (runtimes/llamacpp.py): the refusal must not say only vLLM is
    with pytest.raises(llm.UserError, match=f"vLLM .*llama.cpp .*{runtime}'s drafter is not modelled"):
        llm.plan(llm.describe(model="Qwen3.5-9B"), runtime, ctx=8192, vram=80 * GiB, mtp_tokens=2)


def test_free_memory_with_kv_cache_memory_lowers_the_share_too():
    # vLLM's Worker.init_device refuses total x gpu_memory_utilization above the free memory before it reads
    # kv_cache_memory_bytes: 0.90 x 15.99 = 14.39 GiB > 13.88 - 0.5 = 13.38 GiB; floor(13.38 / 15.99 x 100) / 100 = 0.83
    r = _free_plan(13.88, kv_cache_memory=4 * GiB)
    assert r["command"].endswith("--kv-cache-memory 4294967296 --gpu-memory-utilization 0.83")


def test_free_memory_keeps_the_users_share_and_names_the_one_that_starts():
    # kv55: the user's --gpu-memory-utilization 0.90 is printed as given or not at all: vLLM refuses it with 13.88 GiB
    # free (as above), so no command, and the note names 0.83; before, the command carried 0.83 ("replaces your 0.90")
    r = _free_plan(13.88, kv_cache_memory=4 * GiB, gpu_memory_utilization=0.9)
    assert r["fits"] is False and r["command"] == "" and "0.83" not in r["command"]
    assert any("--gpu-memory-utilization 0.90 asks" in n and "--gpu-memory-utilization 0.83 or less" in n
               for n in r["notes"])


def test_kv_cache_memory_keeps_the_users_share_where_the_free_memory_takes_it():
    # 15.5 GiB free: floor((15.5 - 0.5) / 15.99 x 100) / 100 = 0.93 >= 0.90: the user's share is kept as given
    r = _free_plan(15.5, kv_cache_memory=4 * GiB, gpu_memory_utilization=0.9)
    assert r["command"].endswith("--kv-cache-memory 4294967296 --gpu-memory-utilization 0.90")


@pytest.mark.parametrize("draft, flash", [("q8_0", "on"), ("q4_0", "on"), ("q5_1", "on"), ("bf16", "off"),
                                          ("f32", "off")])
def test_quantized_draft_cache_turns_flash_attention_on(draft, flash):
    # llama.cpp's llama_init_from_model refuses a quantized V cache without flash attention; the MTP context takes
    # the target's flash_attn and -ctvd as its V type, so a q4/q5/q8 draft cache needs -fa on as a main one does
    # the need is a refusal where -fa off was given (fix68e: llama_init_from_model returns no context)
    if flash == "on":
        with pytest.raises(llm.UserError, match="quantized V cache requires flash_attn to be enabled"):
            llm.plan(llm.describe(model="Qwen3.5-9B"), "llama.cpp", ctx=8192, vram=80 * GiB, mtp_tokens=2,
                     draft_kv_dtype=draft, flash_attn=False)
        return
    r = llm.plan(llm.describe(model="Qwen3.5-9B"), "llama.cpp", ctx=8192, vram=80 * GiB, mtp_tokens=2,
                 draft_kv_dtype=draft, flash_attn=False)
    assert f" -fa {flash} " in r["command"] and r["command"].endswith(f"-ctkd {draft} -ctvd {draft}")
    assert not any("flash attention switched on" in n for n in r["notes"])


@pytest.mark.parametrize("version, spec_tokens, fit, seqs", [
    ((0, 18, 0), 0, 1, 0), ((0, 18, 0), 0, 2, 1), ((0, 18, 0), 0, 493, 246), ((0, 18, 0), 0, 512, 256),
    ((0, 18, 0), 1, 493, 123), ((0, 26, 1), 0, 1, 1), ((0, 26, 1), 0, 200, 200)])
def test_graph_profile_seqs_by_hand(version, spec_tokens, fit, seqs):
    # vLLM's _init_minimal_kv_cache_for_profiling: min(2 x seqs x (1 + spec), 512) blocks before 0.26, then
    # min(seqs, that): 493 blocks hold 246 sequences (492), not 247 (494); one block holds no sequence before 0.26
    from gpu_garden.memory.llm.runtimes.vllm_overheads import graph_profile_seqs
    s = {"enforce_eager": False, "v1": True, "version": version, "max_seqs": 256, "spec_tokens": spec_tokens}
    assert graph_profile_seqs(s, fit) == seqs


def test_lowered_max_num_seqs_fits_the_graph_profiling_cache():
    # review14c r7: Qwen3.5-9B, vLLM 0.18.0, 26 GiB, --parallel 256, ctx 1024 printed --max-num-seqs 255 (the pool's
    # blocks), whose profiling cache is 2 x 255 = 510 blocks, more than the weights leave; the printed count fed back
    # must start, one more must not (its 2 x (n + 1) blocks named in the refusal)
    q = llm.describe(model="Qwen3.5-9B")
    kw = dict(ctx=1024, vram=26 * GiB, runtime_version="0.18.0", parallel=256)
    r = llm.plan(q, "vllm", **kw)
    n = int(r["command"].split("--max-num-seqs ")[1].split()[0])
    assert n < 255
    back = llm.plan(q, "vllm", max_num_seqs=n, gpu_memory_utilization=0.9, **kw)
    assert back["fits_as_requested"] is True and not any("CUDA graphs" in x for x in back["notes"])
    over = llm.plan(q, "vllm", max_num_seqs=n + 1, gpu_memory_utilization=0.9, **kw)
    assert over["fits_as_requested"] is False
    assert any(f"minimal KV cache of {2 * (n + 1)} blocks" in x for x in over["notes"])
    assert "CUDA-graph profiling cache" in " ".join(f["reason"] for f in r["flags"])
