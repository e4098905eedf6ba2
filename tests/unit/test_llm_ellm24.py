"""Task ellm24: LLM batch 38 after its first sight (regression rows), each change checked by hand against the
runtime's source, its printed figures or a config.json's arithmetic."""
import re

from gpu_garden.memory.llm import kv as llm

GiB, MiB = 1 << 30, 1 << 20


def _kit(gpu_name, prefix_caching, version=None):
    # SergiioB's Windows kit for an Arc Pro B70: Qwen3.8-27B GPTQ, MTP 4, --max-model-len 100000, fp8 cache,
    # --max-num-seqs 1, --kv-cache-memory-bytes 4563402752 (4.25 GiB)
    return llm.plan(llm.describe(model="Qwen/Qwen3.8-27B"), "vllm", ctx=100000, kv_dtype="fp8", weights_dtype="gptq",
                    vram=32 * GiB, gpu_memory_utilization=0.75, kv_cache_memory=4563402752, max_num_seqs=1,
                    mtp_tokens=4, gpu_name=gpu_name, prefix_caching=prefix_caching, runtime_version=version)


def test_xpu_rounds_a_gated_deltanet_block_to_64_tokens():
    # platforms/xpu.py update_block_size_for_backend: with a GDN_ATTN layer the block is cdiv(block, 64) x 64. By hand:
    # the state page with 4 speculative tokens is 10240 x (3 + 4) x 2 + 48 x 128 x 128 x 4 = 3,289,088 B; an fp8
    # attention token 4 x 256 x 2 = 2048 B a layer; 16 x cdiv(3,289,088, 16 x 2048) = 1616 tokens, on XPU 1664; a page
    # 1664 x 2048 = 3,407,872 B, 17 tensors (16 layers + the MTP layer). With prefix caching (the kit's default from
    # 2026.08.19) a request needs cdiv(100000, 1664) = 61 + 3 groups x (2 + 4) = 79 blocks = 4,576,770,048 B = 4.26 GiB,
    # the 4.25 GiB pool holds 4,563,402,752 // (17 x 3,407,872) = 78: refused ("4.26 GiB KV cache is needed, which is
    # larger than the available KV cache memory (4.25 GiB)", SergiioB cookbook issue 4)
    r = _kit("Intel Arc Pro B70", True)
    assert r["kv_detail"]["pool_args"]["gdn_block"] == 64
    assert not r["fits"]
    assert 78 * 100000 // 79 == r["kv_capacity_tokens"]
    # without prefix caching (kit 2026.08.18, vLLM 0.27.2rc1.dev77) 61 + 3 x (1 + 4) = 76 blocks: 78 / 76 x 100000 =
    # 102,631 tokens, 1.03x, the kit's bug report
    r = _kit("Intel Arc Pro B70", False)
    assert r["fits"] and r["kv_capacity_tokens"] == 102631
    # the XPU build's version tag alone says the platform too
    assert _kit(None, False, "0.26.1rc1.dev457+gc810e5ee9.xpu")["kv_capacity_tokens"] == 102631


def test_cuda_keeps_16_token_alignment():
    # on CUDA the block stays 1616: 62 + 18 = 80 blocks a request; 4,563,402,752 // (17 x 1616 x 2048) = 81 -> starts
    r = _kit("NVIDIA GeForce RTX 5090", True)
    assert r["kv_detail"]["pool_args"]["gdn_block"] == 16
    assert r["fits"] and r["kv_capacity_tokens"] == 81 * 100000 // 80


def test_experts_int8_quantizes_the_routed_experts_alone():
    # vLLM's --quantization experts_int8 (ExpertsInt8Config): FusedMoE weights int8 with a float32 scale per output row
    # (w13_scale experts x 2I, w2_scale experts x d), every LinearBase in 16 bits. Qwen3.6-35B-A3B (config.json: 40
    # layers, 256 experts, hidden 2048, moe_intermediate_size 512): 40 x 256 x 3 x 2048 x 512 = 32,212,254,720 expert
    # weights; against bf16 they save one byte each and add 40 x 256 x (2 x 512 + 2048) x 4 = 125,829,120 B of scales
    from gpu_garden.memory.llm.weights import weights_by_role
    s = llm.describe(model="Qwen/Qwen3.6-35B-A3B")
    int8, bf16 = weights_by_role(s, "experts_int8")["total"], weights_by_role(s, "bf16")["total"]
    assert bf16 - int8 == 32_212_254_720 - 125_829_120
    # a dense model has no FusedMoE layer: nothing is quantized
    d = llm.describe(model="Qwen/Qwen3.6-27B")
    assert weights_by_role(d, "experts_int8")["total"] == weights_by_role(d, "bf16")["total"]


def _leandror(notes):
    # leandror172 local-llm: Ollama (llama runner) qwen2.5-coder:14b, num_ctx 32768, OLLAMA_KV_CACHE_TYPE=q8_0, flash
    # attention on, 9199 MiB free
    from support.pack import load_benchmark
    b = load_benchmark("bench_llm")
    return b.score({"id": "t", "url": "u", "runtime": "ollama", "version": None, "vram_gib": 8.98,
                    "input": {"model": "qwen2.5-coder:14b", "ctx": 32768, "parallel": 1, "kv_dtype": "q8_0",
                              "flash_attn": "on"},
                    "measured": {"kv_mib": 3264.0}, "notes": notes})


def test_ollama_llama_runner_kv_line_is_its_allocation():
    # Qwen2.5-Coder-14B: 48 layers x 8 KV heads x 128. The runner prints 'llama_kv_cache: size = 3264.00 MiB (32768
    # cells, 48 layers), K (q8_0): 1632, V (q8_0): 1632' = 48 x 32768 x 2 x 1024 x 34 / 32 B (a q8_0 block: 32 values
    # in 34 bytes); Ollama's own estimate (memory.required.kv) prices a q8_0 value at a byte: 3072 MiB
    r = llm.plan(llm.describe(model="qwen2.5-coder:14b"), "ollama", ctx=32768, parallel=1, kv_dtype="q8_0",
                 flash_attn=True)
    assert r["ollama_kv_allocated"] == 48 * 32768 * 2 * 1024 * 34 // 32 == 3264 * MiB
    assert r["kv_total"] == 3072 * MiB
    # the bench compares a row quoting that line with the allocation, a row without it with the estimate
    assert _leandror(["'llama_kv_cache: size = 3264.00 MiB (32768 cells, 48 layers)'"])["kv_exact"]
    assert not _leandror(["memory.required.kv 3.2 GiB"])["kv_exact"]


def _table(capsys, *extra):
    from gpu_garden.memory import cli
    cli.main(["kv", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--runtime", "vllm", "--runtime-version", "0.10.1",
              "--ctx", "8192", "--vram", "22.5", "--max-num-batched-tokens", "20000", "--max-num-seqs", "1",
              "--enforce-eager", *extra])
    out = capsys.readouterr().out
    return out, {m.group(1).strip(): m.group(2) for m in re.finditer(r"^  (\S.{0,19}?)\s+(\d+\.\d\d [MG]iB)", out, re.M)}


def test_fixed_pool_table_says_one_number_per_fact(capsys):
    # --kv-cache-memory 6: the pool, not one request's cache, sits on the GPU, and the table's total is the figure the
    # verdict weighs (vllm#10517: 14.99 GiB of weights, a 2.07 GiB profile peak; once started weights + 6 GiB pool +
    # context + non-torch, larger than weights + peak). Before, the table summed one request's 1 GiB and the peak
    # (18.61 GiB) while the next line said vLLM takes 21.55 GiB
    out, rows = _table(capsys, "--kv-cache-memory", "6")
    assert rows["KV pool (fixed)"] == "6.00 GiB" and "KV, one request" not in rows
    takes = re.search(r"vLLM takes (\d+\.\d\d GiB) once started", out).group(1)
    assert rows["total on GPU"] == takes
    # by hand (review16b F6): 14.99 GiB of weights + the 6 GiB pool + the 0.5 GiB context + 0.06 GiB outside PyTorch
    assert takes == "21.55 GiB"
    # a share plan keeps one request's cache and the sum of its lines
    out, rows = _table(capsys)
    assert "KV, one request" in rows and "KV pool (fixed)" not in rows


def test_kv_cache_memory_in_bytes_is_a_clear_error(capsys):
    # the option takes GiB (vLLM's --kv-cache-memory-bytes takes bytes): 4563402752 given as GiB is refused, naming
    # the 4.25 GiB it means
    from gpu_garden.memory import cli
    assert cli.main(["kv", "--model", "Qwen/Qwen3.8-27B", "--runtime", "vllm", "--ctx", "100000", "--vram", "32",
                     "--kv-cache-memory", "4563402752"])
    assert "give 4.25" in capsys.readouterr().err


def test_qwen3_coder_tags_are_the_sizes_read():
    # ollama/ollama's sources quote qwen3-coder:30b and qwen3-coder:480b; the library pattern Qwen3-{size} read
    # qwen3-coder:4b as Qwen3-4B, a model the library does not carry, and offered such tags as suggestions
    import pytest
    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.llm import names
    assert llm.describe(model="qwen3-coder:30b").name == "Qwen3-30B-A3B"
    with pytest.raises(UserError, match="sizes read are 30b, 480b"):
        llm.describe(model="qwen3-coder:4b")
    assert not [k for k in names._known_names() if k.startswith("qwen3-coder:") and k != "qwen3-coder:30b"]
    # a suggestion list with composed Ollama tags says they were not checked against the library pages
    with pytest.raises(UserError, match="not checked against ollama.com"):
        llm.describe(model="qwen3:4bb")
