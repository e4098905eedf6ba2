"""fix67a: mend audit aud67b's vLLM findings (issue 14). The logs are the auditor's (tests/unit/data/fix67a, modelled on
the vLLM threads its README names). Each test failed on main a7961647 unless it says it is a regression check."""
from pathlib import Path

from gpu_garden.memory.triage import engine

DATA = Path(__file__).parent / "data" / "fix67a"


def _answer(name):
    res = engine.triage_text((DATA / f"{name}.log").read_text())
    return res, res["events"][res["headline"]]


def _cmds(ev):
    return [c["text"] for c in ev["guide"]["commands"]]


# --- 1. (aud #1) the guides' vLLM commands keep the log's own --kv-cache-dtype, --max-model-len, --trust-remote-code, env -----

def test_the_kv_guide_keeps_the_logs_fp8_cache():
    _, ev = _answer("c3_v1_maxlen_fp8kv")
    first = _cmds(ev)[0]
    # 121856 tokens is what fits with the log's fp8 cache: without --kv-cache-dtype fp8 the default cache needs twice that
    assert "--max-model-len 121856" in first and "--kv-cache-dtype fp8" in first
    assert first.count("--max-model-len") == 1          # the guide's own figure replaces the log's 221000


def test_the_graph_capture_guide_keeps_env_cache_dtype_context_and_remote_code():
    _, ev = _answer("c3_graph_capture_nvfp4_5090laptop")
    cmds = [c for c in _cmds(ev) if "vllm serve" in c]
    assert cmds
    for c in cmds:
        assert c.startswith("VLLM_ATTENTION_BACKEND=FLASHINFER vllm serve ./qwen-27b-nvfp4 ")
        assert "--kv-cache-dtype nvfp4" in c and "--max-model-len 124000" in c and "--trust-remote-code" in c
