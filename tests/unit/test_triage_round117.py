"""Triage round 117 (batches 614, 616): message forms written by hand from the runtimes' own wording, with the expected
values worked out by hand.

1. The kernel's OOM-killer line as a write-up quotes it, the victim named bare ("Out of memory: Killed process llama-cli,
   anon-rss:<n>kB"): its anon-rss is the process's own (KiB), and a llama.cpp binary names the runtime.
2. vLLM's KV-cache allocation on the stack (initialize_kv_cache_tensors -> _allocate_kv_cache_tensors) under a bare CUDA
   error: kv-cache (categories.frame_category).
3. vLLM's max-seq-len refusal wrapped over four lines: the estimate on the fourth is read.
4. vLLM's "non-default args: {...}" dict: 'gpu_memory_utilization' and 'max_model_len' given as numbers for a failure of
   the run (not for the start-up check, test_triage_round30).
5. Unsloth Studio's host-offload guard: other, runtime llama.cpp, the spill, the RAM counted and the usable part.
6. SGLang out of memory while building its attention backend (init_attention_backend, a layers/attention/ __init__): other."""
import re

from support.regex_time import assert_each_fast
from support.triage_event import last_event, read, top
from gpu_garden.memory.triage import categories
from gpu_garden.memory.triage.fact_patterns import FACTS
from gpu_garden.memory.triage.other_patterns import KILLED
from gpu_garden.memory.triage.other_runtimes import STUDIO_HOST_GUARD, studio_host_guard
from gpu_garden.memory.triage.runtime_markers import RUNTIME_MARKERS

GiB = 1 << 30
MiB = 1 << 20
BARE_KILL = next((m for m in RUNTIME_MARKERS if "process llama-server," in m[1]), ("", (), r"(?!)"))
FACT = {name: rx for name, rx in FACTS if name in ("vllm_util", "vllm_maxlen")}


# 1. the kill line with the victim bare
def test_bare_victim_kill_line_reads_anon_rss_and_llama_cpp():
    cause, kind, runtime, _, nums = read("Out of memory: Killed process llama-cli, anon-rss:2097152kB\n")
    assert kind == "os.oom_killer" and runtime == "llama.cpp"
    assert nums["this_process"] == 2097152 * 1024          # 2 GiB in KiB
    assert cause == "host-ram"


def test_bare_victim_other_binary_is_not_llama_cpp():
    _, kind, runtime, _, nums = read("Out of memory: Killed process python3, anon-rss:1048576kB\n")
    assert kind == "os.oom_killer" and runtime != "llama.cpp"
    assert nums["this_process"] == GiB


def test_killed_pattern_forms():
    assert KILLED.search("Out of memory: Killed process whisper-cli, anon-rss:512kB").group(1) == "512"
    assert KILLED.search("Out of memory: Killed process 77 (llama-server) anon-rss:640kB").group(1) == "640"   # as before
    assert re.search(BARE_KILL[2], "Out of memory: Killed process llama-server, anon-rss:9kB")
    # (fix9, rev8 D3) one row for the binary: round 115's, whose pid form it still reads
    assert re.search(BARE_KILL[2], "Out of memory: Killed process 9 (llama-server) anon-rss:9kB") and BARE_KILL == RUNTIME_MARKERS[-1]


# 2. vLLM's KV-cache allocation frames
VLLM_KV_TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/opt/venv/lib/python3.12/site-packages/vllm/v1/worker/gpu_model_runner.py", line 100, in initialize_kv_cache\n'
    "    kv_caches = self.initialize_kv_cache_tensors(kv_cache_config)\n"
    '  File "/opt/venv/lib/python3.12/site-packages/vllm/v1/worker/gpu_model_runner.py", line 200, in initialize_kv_cache_tensors\n'
    "    raw = self._allocate_kv_cache_tensors(kv_cache_config)\n"
    '  File "/opt/venv/lib/python3.12/site-packages/vllm/v1/worker/gpu_model_runner.py", line 300, in _allocate_kv_cache_tensors\n'
    "    tensor = torch.zeros(\n"
    "torch.AcceleratorError: CUDA error: out of memory\n")


def test_vllm_kv_allocation_frames_read_kv_cache():
    cause, conf, ev = top(VLLM_KV_TRACE)
    assert ev["runtime"] == "vllm" and cause == "kv-cache", conf


def test_frame_category_vllm_kv_functions():
    p = "/usr/lib/python3/dist-packages/vllm/v1/worker/gpu_model_runner.py"
    assert categories.frame_category(p, "_allocate_kv_cache_tensors") == "kv-cache"
    assert categories.frame_category(p, "initialize_kv_cache_tensors") == "kv-cache"
    assert categories.frame_category("/x/vllm/worker/cache_engine.py", "_allocate_kv_cache") == "kv-cache"
    assert categories.frame_category("/home/me/myproj/cache.py", "_allocate_kv_cache_tensors") != "kv-cache"


# 3. the max-seq-len refusal over four lines
def test_vllm_estimate_on_fourth_line():
    _, ev = last_event("ValueError: To serve at least one request with the model's max seq len (131072),\n"
                       "9.00 GiB KV cache is needed, which is larger than the available KV cache\n"
                       "memory (4.50 GiB). Based on the available memory, the estimated\n"
                       "maximum model length is 65536.\n")
    assert ev["kind"] == "vllm.kv_max_len"
    assert ev["numbers"]["estimated_max_len_tokens"] == 65536
    assert ev["numbers"]["kv_needed"] == 9 * GiB and ev["numbers"]["kv_available"] == int(4.5 * GiB)


# 4. the non-default args dict
ARGS = ("(APIServer pid=7) INFO 01-02 03:04:05 [utils.py:200] non-default args: {'model': 'org/model-7b', "
        "'max_model_len': 4096, 'gpu_memory_utilization': 0.85, 'max_num_seqs': 64}\n")
TORCH_OOM = ("(EngineCore_DP0 pid=9) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total "
             "capacity of 23.50 GiB of which 10.00 MiB is free. Including non-PyTorch memory, this process has 23.40 GiB memory "
             "in use. Of the allocated memory 22.00 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but "
             "unallocated.\n")


def test_non_default_args_patterns():
    assert FACT["vllm_util"].search(ARGS).group(1) == "0.85"
    assert FACT["vllm_maxlen"].search(ARGS).group(1) == "4096"
    assert FACT["vllm_util"].search("gpu_memory_utilization=0.7").group(1) == "0.7"       # the config line, as before


def test_non_default_args_numbers_on_a_vllm_failure():
    _, _, runtime, _, nums = read(ARGS + TORCH_OOM)
    assert runtime == "vllm"
    assert nums["gpu_memory_utilization_ratio"] == 0.85 and nums["max_model_len_tokens"] == 4096
    assert nums["requested"] == 20 * MiB          # the message's own figures stay


# 5. Unsloth Studio's host-offload guard
GUARD = ("Failed to load model: About 9 GB of this model does not fit in GPU memory and would run from system RAM. Only about "
         "7 GB is available and 2 GB of that is kept free for the rest of the system, leaving about 5 GB usable. The weights are "
         "memory-mapped. Use a smaller GGUF, free memory, or set UNSLOTH_ALLOW_HOST_OFFLOAD=1 to load it anyway.\n")


def test_studio_guard_read_on_llama_cpp():
    # (fix9, rev8 S2) as Studio's source means the message, a shortage: host-ram (test_triage_fix9); other only where the
    # log names an integrated GPU
    cause, kind, runtime, _, nums = read(GUARD)
    assert kind == "app.host_offload_guard" and runtime == "llama.cpp" and cause == "host-ram"
    assert nums == {"required": 9 * GiB, "available": 7 * GiB, "limit": 5 * GiB}


def test_studio_guard_row_explains_the_refusal():
    cause, conf, ev = top("ggml_vulkan: 0 = AMD Radeon 840M Graphics (RADV GFX1152) (radv) | uma: 1 | fp16: 1\n" + GUARD)
    assert cause == "other" and conf["other"] >= 0.8, conf          # 3.0 / (3.0 + 0.75) = 0.80
    other = next(c["evidence"] for c in ev["causes"] if c["id"] == "other")
    assert any("own guard refused the load" in e and "9.00 GiB of the model would" in e for e in other), other


def test_studio_guard_without_kept_free_clause():
    ev = studio_host_guard("About 3.5 GB of this model does not fit in GPU memory and would run from system RAM. Only about "
                           "2 GB is available.")
    assert ev["numbers"] == {"required": int(3.5 * GiB), "available": 2 * GiB}
    assert studio_host_guard("This model would run from system RAM.") is None


# 6. SGLang's attention backend built after the static pool
def _sglang(inner_func, inner_file, outer_func):
    return ("[2026-01-01 00:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
            f'  File "/opt/sglang/python/sglang/srt/model_executor/model_runner.py", line 10, in {outer_func}\n'
            "    x = self.step()\n"
            f'  File "/opt/sglang/python/sglang/srt/layers/attention/{inner_file}", line 20, in {inner_func}\n'
            "    self.buf = torch.empty(\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total capacity of 23.50 GiB "
            "of which 100.00 MiB is free. Including non-PyTorch memory, this process has 23.30 GiB memory in use. Of the "
            "allocated memory 22.00 GiB is allocated by PyTorch, and 300.00 MiB is reserved by PyTorch but unallocated.\n")


def test_sglang_attention_backend_init_reads_other():
    cause, conf, ev = top(_sglang("__init__", "triton_backend.py", "init_attention_backend"))
    assert ev["runtime"] == "sglang" and cause == "other", conf
    other = next(c["evidence"] for c in ev["causes"] if c["id"] == "other")
    assert any("attention backend" in e for e in other), other


def test_sglang_attention_forward_is_not_the_backend_build():
    _, conf, ev = top(_sglang("forward_extend", "triton_backend.py", "forward"))
    assert not any("attention backend" in e for c in ev["causes"] for e in c["evidence"]), conf


def test_round117_patterns_linear():
    n = 1 << 20
    assert_each_fast([
        (KILLED.search, ["Out of memory: Killed process " + "a" * n, "Out of memory: Killed process a," * (n // 32),
                         "Out of memory: Killed process " + "a-" * (n // 2) + ", anon-rss:x"]),
        (re.compile(BARE_KILL[2]).search, ["Killed process llama-server, " * (n // 29), "Kill process llama-cli" + " " * n]),
        (STUDIO_HOST_GUARD.search, ["About 1 GB of this model " * (n // 25), "About " + "1" * n,
                                    "About 1 GB of this model does not fit in GPU memory and would run from system RAM. Only "
                                    "about " + "9" * n, "About 1." + "1" * n + " GB"]),
        (studio_host_guard, ["would run from system RAM " * (n // 26)]),
        (FACT["vllm_util"].search, ["gpu_memory_utilization'" * (n // 23), "'gpu_memory_utilization': " + " " * n]),
        (FACT["vllm_maxlen"].search, ["max_model_len'" * (n // 14), "'max_model_len': " + "1" * n + "x"]),
    ])
