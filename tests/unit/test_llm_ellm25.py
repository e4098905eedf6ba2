"""Task ellm25: LLM batch 39 after its first sight (regression rows), each change checked by hand against the
runtime's source, its printed figures or a config.json's arithmetic."""
from support.pack import load_benchmark

from gpu_garden.memory.llm import kv as llm

GiB, MiB = 1 << 30, 1 << 20


def _bench():
    return load_benchmark("bench_llm")


def _llmfit(ngl, notes=(), inferred=None):
    # AlexsJones/llmfit#774: Qwen3-14B Q4_K_M, -c 4096, one slot, on an 8 GB RTX 2080 (7.79 GiB); the author tuned -ngl
    # 32 to fit and says the whole model does not fit 8 GB
    return {"id": "t", "url": "u", "runtime": "llama.cpp", "version": None, "vram_gib": 7.79,
            "input": {"model": "Qwen/Qwen3-14B", "weights_dtype": "Q4_K_M", "ctx": 4096, "parallel": 1, "ngl": ngl},
            "measured": {"fit": False, "started": True}, "notes": list(notes), "inferred": inferred or {}}


def test_partial_ngl_scores_the_run_at_that_ngl_against_started():
    # llama.cpp keeps a user's -ngl (common/fit.cpp: "n_gpu_layers already set by user to 40, abort", printed in the
    # KlimtechRAG Bielik log): the run at -ngl 32 is the outcome, "started"; "fit" is every layer on the GPU. By hand,
    # Qwen3-14B's 14.8e9 parameters at no less than Q4_K's 4.5 bits are 8.3e9 B = 7.75 GiB, with the 384 MiB CUDA
    # context over 7.79 GiB: the whole model does not fit (the author says so too)
    b = _bench()
    s = b.score(_llmfit(32))
    assert s["fits"][1] is True
    assert s["fits_whole"] == (False, False) and s["fits_whole_agree"]


def test_every_layer_is_not_a_partial_ngl():
    # Qwen3-14B: 40 repeating layers + the output = 41 (llama.cpp "offloaded 41/41 layers to GPU"): -ngl 41 is the
    # whole model, scored on "fit" as before; -ngl 40 leaves the output on the CPU (before #18148) or one block
    b = _bench()
    spec = llm.describe(model="Qwen/Qwen3-14B")
    assert b.user_partial_ngl({"input": {"ngl": 40}}, spec)
    assert not b.user_partial_ngl({"input": {"ngl": 41}}, spec)
    assert not b.user_partial_ngl({"input": {"ngl": None}}, spec)
    s = b.score(_llmfit(41))
    assert s["fits"] == (False, False) and "fits_whole" not in s


def test_a_tensor_override_run_has_no_started_verdict():
    # the fit-params README's fitted run: -ngl 48 with -ot blk.14-47 ffn experts=CPU; the input has no override, so
    # the plan at -ngl 48 would put the experts on the GPU: the run's start is not scored, the whole model still is
    b = _bench()
    s = b.score(_llmfit(32, inferred={"ctx": "the fitted arguments '-c 4096 -ngl 32 -ot blk.14-47 ffn experts=CPU'"}))
    assert "fits" not in s and s["fits_whole"] == (False, False)
    s = b.score(_llmfit(32, notes=["llama-server --n-cpu-moe 16"]))
    assert "fits" not in s
    # a word that only contains the letters is not an override
    assert "fits" in b.score(_llmfit(32, notes=["a pilot run, -otherwise default"]))


# ---------------------------------------------------------------- SGLang AWQ on a MoE model (runtimes/sglang.py)
def _awq35(gpu):
    # mattbucci's 2x R9700 smoke-256k run: Qwen3.6-35B-A3B AWQ, TP 2, --mem-fraction-static 0.85, fp8 cache, 262144
    return llm.plan(llm.describe(model="Qwen/Qwen3.6-35B-A3B"), "sglang", ctx=262144, kv_dtype="fp8_e4m3",
                    weights_dtype="awq", vram=31.86 * GiB, tensor_parallel_size=2, mem_fraction_static=0.85,
                    gpu_name=gpu, runtime_version="0.5.11")


def test_sglang_awq_builds_moe_experts_unquantized_on_rocm():
    # awq/awq.py AWQConfig.get_quant_method: FusedMoE -> None off Ascend, so FusedMoE builds UnquantizedFusedMoEMethod
    # weights in 16 bits (the log's traceback: unquant.py create_weights torch.empty(num_experts, ...)); AWQ-Marlin,
    # which quantizes them, only on CUDA from 8.0. Qwen3.6-35B-A3B config.json: 40 layers x 256 experts x 3 x 2048 x
    # 512 = 32,212,254,720 expert weights. AWQLinearMethod's tensors (qweight 4 bits, qzeros 4 and fp16 scales 16 per
    # group of 128) make 4.15625 bits; at 16 bits they take 32,212,254,720 x 11.84375 / 8 = 47,689,236,480 B more,
    # 23,844,618,240 B on each of the two GPUs (the plan's weights are one rank's)
    rocm, cuda = _awq35("2x AMD Radeon AI PRO R9700 32 GB (gfx1201), ROCm 7.2"), _awq35("NVIDIA RTX 6000 Ada")
    assert rocm["weights"] - cuda["weights"] == 47_689_236_480 // 2
    # 30.0 GiB of bf16 experts on each of the two GPUs (64.4e9 B / 2) already pass the 31.46 GiB SGLang saw free less
    # the other layers: the run died loading them ("Tried to allocate 256.00 MiB ... 31.34 GiB is allocated")
    assert not rocm["fits_as_requested"] and cuda["fits_as_requested"]
    # a CUDA card below compute 8.0 has no Marlin either (AWQMarlinConfig.get_min_capability 80)
    assert _awq35("Tesla T4")["weights"] == rocm["weights"]
    # a dense model has no FusedMoE: nothing changes
    d = llm.describe(model="Qwen/Qwen3.6-27B")
    a, b = (llm.plan(d, "sglang", ctx=4096, weights_dtype="awq", vram=32 * GiB, gpu_name=g)["weights"]
            for g in ("AMD Radeon AI PRO R9700", "NVIDIA GeForce RTX 5090"))
    assert a == b


# ---------------------------------------------------------------- llama-server's output rows (ggml-org/llama.cpp#23861)
def _gemma1b(version, parallel, mtp=None, spec_name="google/gemma-3-1b-it"):
    return llm.plan(llm.describe(model=spec_name), "llama.cpp", ctx=4096, parallel=parallel, weights_dtype="Q8_0",
                    flash_attn=True, ngl=99, runtime_version=version, vram=24 * GiB, mtp_tokens=mtp)["overhead"]


def test_llama_server_reserves_logits_for_its_output_rows():
    # llama_context's reserve: graph_reserve(n_tokens, n_seqs, n_outputs_pp = min(n_tokens, cparams.n_outputs_max));
    # tools/server: n_outputs_max = max(1, min(n_batch, n_parallel x (1 + spec n_max))). Gemma-3-1B config.json: hidden
    # 1152, intermediate 6912, vocab 262144; -ub 512, flash attention (no score matrix). Before the change every
    # ubatch row's logits: 4 x 512 x (1152 + 262144) = 539,230,208 B. With -np 64: 64 rows of logits,
    # 4 x (512 x 1152 + 64 x 262144) = 69,468,160 B, above the feed-forward's live set (round 59: gate, up and their
    # GeGLU product beside the residual, 4 x 512 x (3 x 6912 + 1152) = 44,826,624, with the f16 mask cast of the
    # 4096 full-layer cells and the 1024 sliding ones, 2 x 512 x 5120 = 5,242,880: 50,069,504)
    assert _gemma1b("b9452", 64)["compute_buffer"] == 539_230_208
    assert _gemma1b("b9453", 64)["compute_buffer"] == 69_468_160
    # one slot: 1 row of logits, 4 x (512 x 1152 + 262144) = 3,407,872 B: the feed-forward's 50,069,504 is the larger
    assert _gemma1b("b9453", 1)["compute_buffer"] == 50_069_504
    # -np beyond the ubatch: n_outputs_pp = min(n_tokens, n_outputs_max) = the 512 rows again
    assert _gemma1b("b9453", 1024)["compute_buffer"] == 539_230_208


def test_a_draft_adds_output_rows_per_slot():
    # --spec-draft-n-max n: 1 + n rows a slot (common_speculative_n_max). Qwen3.5-9B (config: hidden 4096, vocab
    # 248320, intermediate 12288) with draft-mtp 2 on 32 slots: min(512, 32 x 3) = 96 rows, 4 x (512 x 4096 + 96 x
    # 248320) = 4 x (2,097,152 + 23,838,720) = 103,743,488 B, above the feed-forward's 4 x 512 x (4 x 4096 + 12288) = 58,720,256
    o = llm.plan(llm.describe(model="Qwen/Qwen3.5-9B"), "llama.cpp", ctx=8192, parallel=32, weights_dtype="Q8_0",
                 flash_attn=True, ngl=99, runtime_version="b10450", vram=48 * GiB, mtp_tokens=2)["overhead"]
    assert o["compute_buffer"] == 103_743_488


# ---------------------------------------------------------------- vLLM: the share and what lies outside it in free memory
def _buccaneer(free_gib):
    # TheBuccaneer/vllm-offload-profiles: vLLM 0.17.1, Llama-3.1-8B, --max-model-len 8192, utilization 0.9, one RTX 3090
    # (23.54 GiB as its OOM line prints it)
    return llm.plan(llm.describe(model="meta-llama/Llama-3.1-8B-Instruct"), "vllm", ctx=8192,
                    gpu_memory_utilization=0.9, gpu_name="NVIDIA GeForce RTX 3090", vram=23.54 * GiB,
                    runtime_version="0.17.1", free_memory=int(free_gib * GiB) if free_gib else None)


def test_vllm_outside_the_share_must_fit_in_free_memory():
    # From 0.9.1 the share is this process's own memory (vllm#19312), so the share (0.9 x 23.54 = 21.186 GiB) and what
    # lies outside it (its CUDA context, the CUDA graphs) come out of the memory free at start. The failed run's OOM line:
    # 23.54 GiB total, 139.75 MiB free, 21.72 GiB held by this process: 23.54 - 0.14 - 21.72 = 1.68 GiB held by others,
    # 21.86 GiB free at start; the startup check passes (21.186 <= 21.86 - 0.5 context), but the 0.674 GiB left beside
    # the share cannot hold the 0.5 GiB context and the graphs: refused as requested (the runtime ran out of memory
    # warming up, after the pool)
    assert not _buccaneer(23.54 - 1.68)["fits_as_requested"]
    # the same command started with about 0.2 GiB held by others (the row's two listed processes, 83.54 + 133.29 MiB)
    assert _buccaneer(23.54 - (83.54 + 133.29) / 1024)["fits_as_requested"]
    # free memory not given: the card's total, as before
    assert _buccaneer(None)["fits_as_requested"]
    # before 0.9.1 the share is device-wide (other processes inside it, the context too): the total still bounds what
    # lies outside (the graphs), even with 0.3 GiB free beside the share
    old = llm.plan(llm.describe(model="meta-llama/Llama-3.1-8B-Instruct"), "vllm", ctx=8192,
                   gpu_memory_utilization=0.9, gpu_name="NVIDIA GeForce RTX 3090", vram=23.54 * GiB,
                   runtime_version="0.8.5", free_memory=int((0.9 * 23.54 + 0.3) * GiB))
    assert old["fits_as_requested"]


# ---------------------------------------------------------------- vLLM --vllm-engine v0 without a version
def test_vllm_engine_v0_without_a_version_is_refused():
    # VLLM_USE_V1=0 picks V0 only where it exists: vLLM 0.11 removed the V0 engine, and no version means the newest.
    # GPUStack#1800's Qwen2.5-VL-7B run asked V0 with no release named: it must not be planned as V1 (51,552 tokens
    # against V0's printed 2,400)
    import pytest
    from gpu_garden.memory.errors import UserError
    s = llm.describe(model="Qwen/Qwen2.5-VL-7B-Instruct")
    with pytest.raises(UserError, match="--vllm-engine v0 needs --runtime-version"):
        llm.plan(s, "vllm", ctx=8192, vram=23.56 * GiB, vllm_engine="v0")
    # with a release V0 ran in, it is planned as V0
    r = llm.plan(s, "vllm", ctx=8192, vram=23.56 * GiB, vllm_engine="v0", runtime_version="0.8.4")
    assert r["vllm_would_print"].startswith("# CUDA blocks:")  # V0's executor line, not V1's "GPU KV cache size"


def test_an_unnamed_llama_cpp_build_keeps_the_whole_ubatch_of_logits():
    # review16b F11: with the logits cut, the plan's reserve falls under every build's printed compute buffer (the rest
    # of the prompt graph is not modelled), so the cut applies to a build named b9453 or later only. Gemma-3-1B, -np 64,
    # -ub 512: no version keeps 4 x 512 x (1152 + 262144) = 539,230,208 B
    assert _gemma1b(None, 64)["compute_buffer"] == 539_230_208
    assert _gemma1b("b9453", 64)["compute_buffer"] == 69_468_160


def test_a_host_cpu_named_amd_is_not_a_rocm_card():
    # review16b F10: "AMD" names host CPUs too; SGLang's platform is the card's. Qwen3.6-35B-A3B AWQ on CUDA cards named
    # beside an AMD host keeps its experts quantized (AWQ-Marlin); AMD cards by name still get 16-bit experts
    from gpu_garden.memory.llm.runtimes.sglang import awq_experts_dense
    assert not awq_experts_dense("NVIDIA H100 80GB HBM3, AMD EPYC 9654 host")
    assert not awq_experts_dense("NVIDIA GeForce RTX 4090 (AMD Ryzen 9 7950X)")
    assert awq_experts_dense("AMD Instinct MI300X")
    assert awq_experts_dense("2x AMD Radeon AI PRO R9700 32 GB (gfx1201), ROCm 7.2")
    assert awq_experts_dense("NVIDIA GeForce RTX 2080 Ti")  # CUDA below compute 8.0: no Marlin
    assert (_awq35("NVIDIA H100 80GB HBM3, AMD EPYC 9654 host")["weights"]
            == _awq35("NVIDIA RTX 6000 Ada")["weights"])


def test_experts_int8_command_asks_vllm_to_quantize():
    # review16b F1: experts_int8 is an online method (vLLM ExpertsInt8Config, get_name "experts_int8"): no checkpoint
    # says it, so the command the plan sized must pass --quantization experts_int8 or vLLM loads the experts in 16 bits
    s = llm.describe(model="Qwen/Qwen3-30B-A3B")
    r = llm.plan(s, "vllm", ctx=32768, weights_dtype="experts_int8", vram=48 * GiB)
    assert "--quantization experts_int8" in r["command"]
    assert "--quantization" not in llm.plan(s, "vllm", ctx=32768, vram=48 * GiB)["command"]
    assert "--quantization experts_int8" in llm.plan(s, "vllm", ctx=32768, weights_dtype="experts_int8")["command"]


def test_fixed_pool_row_states_the_blocks_one_request_needs(capsys):
    # review16b F4: with the hybrid manager one request needs whole blocks of every group. SergiioB's Arc B70 kit
    # (Qwen3.8-27B GPTQ, fp8, MTP 4, 100,000 tokens, a 4.25 GiB pool, prefix caching on): 61 + 3 x (2 + 4)
    # = 79 blocks of 17 x 3,407,872 B = 4,576,770,048 B = 4.26 GiB, more than the pool (refused), not the 3.39 GiB of
    # one request's bytes the row printed
    from gpu_garden.memory import cli
    cli.main(["kv", "--model", "Qwen/Qwen3.8-27B", "--runtime", "vllm", "--ctx", "100000", "--kv-dtype", "fp8",
              "--weights-dtype", "gptq", "--vram", "32", "--gpu-memory-utilization", "0.75", "--kv-cache-memory", "4.25",
              "--max-num-seqs", "1", "--mtp-tokens", "4", "--gpu-name", "Intel Arc Pro B70", "--enable-prefix-caching"])
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if "KV pool (fixed)" in ln)
    assert "one request 4.26 GiB" in line


def test_a_fixed_pool_that_does_not_fit_names_the_largest_that_does():
    # review16b F3: Llama-3.1-8B on 20 GiB with --kv-cache-memory 6 does not fit (14.99 GiB of weights + 6 + the rest).
    # The pool skips the profile, so what vLLM holds beside it is the weights (8,030,261,248 x 2 B + 32 MiB of rotary
    # tables), its 512 MiB CUDA context and 61.44 MiB outside PyTorch: 20 GiB less those is 4,779,464,131 B, 4558 MiB
    # whole. Before F3 the advice was the same 6 GiB pool and "weights alone leave no room"; F3 put the 4558 MiB in
    # the command; kv55: the user's pool is printed as given or not at all, so the plan does not fit and the reason
    # and the runtime-fit line name the pool that does
    r = llm.plan(llm.describe(model="meta-llama/Llama-3.1-8B-Instruct"), "vllm", ctx=8192, vram=20 * GiB,
                 runtime_version="0.10.1", kv_cache_memory=6 * GiB, max_num_seqs=1, enforce_eager=True)
    held = 8_030_261_248 * 2 + 32 * MiB + 512 * MiB + int(61.44 * MiB)
    fit = (20 * GiB - held) // MiB * MiB
    assert not r["fits_as_requested"] and not r["fits"] and r["command"] == ""
    assert f"--kv-cache-memory 6.00 GiB does not fit" in r["no_fit_reason"]
    assert f"(--kv-cache-memory {fit})" in r["no_fit_reason"] and not any("leave no room" in n for n in r["notes"])
    assert r["autofit"][-1]["flag"] == f"--kv-cache-memory {fit}"


def test_a_fixed_pool_the_user_gave_is_printed_as_given():
    # kv55: Qwen3-8B, --ctx 40960 --kv-cache-memory 9 printed "--kv-cache-memory 8238661632" (7.67 GiB, the largest
    # pool beside the weights on 24 GiB) in a command after "fits with the flags below"; the user's flag is printed as
    # given (9 GiB = 9,663,676,416 bytes) where the plan fits, and no command where it does not
    q = llm.describe(model="Qwen/Qwen3-8B")
    big = llm.plan(q, "vllm", ctx=40960, vram=32 * GiB, kv_cache_memory=9 * GiB)
    assert big["fits"] and "--kv-cache-memory 9663676416" in big["command"]
    small = llm.plan(q, "vllm", ctx=40960, vram=24 * GiB, kv_cache_memory=9 * GiB)
    assert not small["fits"] and small["command"] == "" and "9.00 GiB does not fit" in small["no_fit_reason"]


def test_experts_int8_only_where_vllm_can_apply_it():
    # review16b F2: experts_int8 is vLLM's online method for a 16-bit checkpoint (ExpertsInt8Config); llama.cpp and
    # Ollama load GGUF types, and vLLM refuses a --quantization that differs from a quantized checkpoint's quant_method
    import pytest
    from gpu_garden.memory.errors import UserError
    s = llm.describe(model="Qwen/Qwen3-30B-A3B")
    for rt in ("llama.cpp", "ollama"):
        with pytest.raises(UserError, match="loads a GGUF"):
            llm.plan(s, rt, ctx=4096, weights_dtype="experts_int8")
    with pytest.raises(UserError, match="already mxfp4"):
        llm.plan(llm.describe(model="openai/gpt-oss-20b"), "vllm", ctx=4096, weights_dtype="experts_int8")
    assert llm.plan(s, "vllm", ctx=4096, weights_dtype="experts_int8")["weights"] > 0
