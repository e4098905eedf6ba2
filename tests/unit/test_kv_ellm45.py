"""kv-accuracy round 67 (task ellm45, batch 73 after first sight). Expected values are worked here from the model's
geometry and the row's printed lines, not taken from kv."""
import json

from gpu_garden.memory.llm import cache as C
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB

MM_ROW = "vllm-jethac-gemma4-31b-bf16-gb10-8k-u072-fp8kv-mm-r8"

# --- the Gemma 4 31B row with its vision tower on a GB10 (jethac/dgx-spark-hijinks claude_p4_server.log) -------------
# Gemma-4-31B: 60 layers, 50 sliding (window 1024) and 10 full; an fp8 cache. vLLM's hybrid manager pages it as groups
# of 10 layers of one 131,072-byte page each: 5 sliding groups of 16-token blocks, 1 full group of 32-token blocks.
#   pool of the printed 19.06 GiB: 20,465,651,998 // (10 x 131,072) = 15,613 blocks
#   one request of 8192 tokens at max_num_batched_tokens B: full 8192 / 32 = 256 blocks; each sliding group
#     ceil((1023 + B) / 16) + 1 blocks:
#       B = 2048: ceil(3071 / 16) + 1 = 193, 5 x 193 + 256 = 1221; 15,613 / 1221 = 12.787x -> 104,751 tokens
#       B = 2496: ceil(3519 / 16) + 1 = 221, 5 x 221 + 256 = 1361; 15,613 / 1361 = 11.472x ->  93,976 tokens
#   the log prints 104,738 tokens and 12.79x: the batch was 2048 ('Cache the graph of compile range (1, 2048)', no
#   'Raising max_num_batched_tokens' line), not Gemma 4's video item of 2496 that 0.25.1 raises a default batch to.


def _pool(batched):
    spec = llm.describe(model="google/gemma-4-31B-it")
    return C.vllm_pool(spec, 19.06 * GiB, "fp8", 8192, max_batched=batched, tokens_from_concurrency=True)


def test_gemma4_31b_pool_blocks_and_request_by_batch():
    two, video = _pool(2048), _pool(2496)
    assert two["blocks"] == video["blocks"] == 15_613
    assert two["request_bytes"] == 1221 * 10 * 131_072 and video["request_bytes"] == 1361 * 10 * 131_072
    assert two["tokens"] == 104_751 and video["tokens"] == 93_976
    assert round(two["concurrency"], 2) == 12.79  # the printed concurrency


def test_untagged_build_still_raises_the_default_batch_for_gemma4_vision():
    # kv's rule stands: an untagged build reads as the newest release, which raises a default batch to the video item
    # and keeps two batches in flight in a sliding layer (task dsv4d)
    spec = llm.describe(model="google/gemma-4-31B-it")
    res = llm.plan(spec, "vllm", ctx=8192, kv_dtype="fp8", weights_dtype="bf16", vram=121.63 * GiB,
                   gpu_memory_utilization=0.72, gpu_name="NVIDIA GB10", runtime_version="0.1.dev1+ge08a6f3ae")
    assert res["kv_detail"]["sliding_cells"] == (-(-(1023 + 2 * 2496) // 16) + 1) * 16  # 6032


def test_the_mm_row_states_the_batch_its_log_prints():
    # data correction (batch 73, after first sight): the row's input carries the batch the log shows, so the tokens
    # from its printed available memory are the printed ones (93,976 before, against 104,738)
    from support.pack import load_benchmark
    b = load_benchmark("bench_llm")
    rows = {r["id"]: r for r in json.loads(b.DATA.read_text())["rows"]}
    row = rows[MM_ROW]
    assert row["input"]["max_num_batched_tokens"] == 2048
    s = b.score(row)
    assert s["tokens_from_printed"] == (104_751, 104_738) and s["tokens_from_printed_exact"]
