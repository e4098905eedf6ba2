"""Task mend57 (CLI defects reviews rev56 / ux56 / ux57 left open): each test fails on the code before its fix; each
names the deliberate error that breaks it (checked by reverting)."""
from gpu_garden.memory.llm.advise import suggest_flags_from_log
from gpu_garden.memory.units import GiB

FLASH = "deepseek-ai/DeepSeek-V4-Flash"


def _dsv4_advice(version):
    return suggest_flags_from_log({"model": FLASH, "kv_available": 20 * GiB, "max_model_len": 1048576,
                                   "runtime_version": version}, "vllm")


# An OOM log of DeepSeek-V4-Flash on vLLM 0.26.1 that states 20 GiB of KV cache and no estimate: the per-token figure is
# the packed pool's (0.26: a block is the largest group, 1,002,240 bytes over 256 tokens = 3915 bytes a token;
# test_kv_dsv4 works the block by hand), 20 GiB // (3915 x 16) x 16 = 5,485,264 tokens, rounded down to 256: 5,485,056.
# The old code took the tuples' block (1,051,776 / 256 = 4108: 5,227,552 -> 5,227,520) whatever the build. Its cache
# is fp8 already (deepseek_v4.check_kv), so no "--kv-cache-dtype fp8 doubles the room". Breaks if advise passes no pool
# form (5227520) or keeps the fp8 suggestion for DeepSeek-V4.
def test_dsv4_advice_takes_the_builds_pool_and_suggests_no_fp8():
    got = _dsv4_advice("0.26.1")
    assert [(f["name"], f["value"]) for f in got] == [("--max-model-len", "5485056")]
    assert "5485264" in got[0]["reason"]
    # 0.20.2 (before the packed pool): the tuples' block, 4108 bytes a token
    assert [(f["name"], f["value"]) for f in _dsv4_advice("0.20.2")] == [("--max-model-len", "5227520")]
    # triage's fact is {runtime: version}
    assert _dsv4_advice({"vllm": "0.26.1"})[0]["value"] == "5485056"


# DeepSeek-V4's header said "43 layers (43 full)": every layer has a sliding window of 128 and 41 are also compressed.
# Flash's compress_ratios are [0, 0] + [4, 128] x 20 + [4]: 21 compressed 4x, 20 128x, 2 not at all; Pro's [128, 128] +
# [4, 128] x 29 + [4]: 30 and 31. Breaks if the header keeps layer_kinds for DeepSeek-V4 ("43 full") or the counts are
# read one entry off (Flash 20 / 21).
def test_dsv4_header_describes_its_layers_by_compress_ratio(capsys):
    from support.cli_run import flat, run
    rc, out, _ = run(["kv", "--model", FLASH], capsys)
    assert ("DeepSeek-V4-Flash (deepseek_v4): 43 layers (all sliding, window 128; 21 also compressed 4x; 20 also "
            "compressed 128x), 1 KV heads x 512") in flat(out)
    assert "full" not in flat(out).split(", 1 KV heads")[0]
    rc, j, _ = run(["kv", "--model", "deepseek-ai/DeepSeek-V4-Pro", "--json"], capsys)
    assert j["model"]["compress_ratios"] == {"4": 30, "128": 31}
