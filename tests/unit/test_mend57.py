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


# Wan 2.2 at 1280x720x81 (rev56): sample is the peak (13.14 GiB), text encode next (11.79 GiB), so every knob that
# leaves the text encoder alone drops the peak by the same 13.14 - 11.79 = 1.35 GiB, fp8 included. Each such row now
# says what it saves in its own phase: fp8 halves the diffusion model's 9.31 GiB of F16 weights (less the small tensors
# kept in float), so between 4 and 4.66 GiB less in sample; 41 frames save in sample what the 41-frame estimate's own
# phase table shows (sample 13.14 -> 11.72). Breaks if the row prints the peak drop alone (the old code) or the own
# saving is taken as the peak drop (then it is not printed, and 1.35 is all the row says).
def test_wan22_knob_rows_say_what_each_saves_in_its_own_phase(capsys):
    from support.cli_run import estimate, unwrap
    import json
    # cond and uncond batched as this test was written (est67: with the text encoders ComfyUI leaves loaded, on the
    # 16 GB card the estimate figures without a budget, ComfyUI's rule runs them one at a time and text encode is the peak)
    wan = ["wan22", "--width", "1280", "--height", "720", "--cond-uncond", "batched"]
    rc, out, _ = estimate(capsys, *wan, "--frames", "81")
    rows = [ln for ln in unwrap(out).split("\n") if ln.startswith("    saves ")]
    assert len(rows) == 7 and all(r.startswith("    saves 1.35 GiB  ") for r in rows)
    assert all(r.endswith(" less in sample; then text encode is the peak)") or
               r.endswith(" less in VAE decode; then text encode is the peak)") for r in rows)
    rc, out, _ = estimate(capsys, *wan, "--frames", "81", "--json")
    knobs = {k["id"]: k for k in json.loads(out)["knobs"]}
    fp8 = knobs["fp8_weights"]
    assert fp8["phase_saving"]["phase"] == "sample" and 4.0 * 2**30 < fp8["phase_saving"]["bytes"] <= 4.66 * 2**30
    assert fp8["saving"] == knobs["fewer_frames"]["saving"]  # the same 1.35 GiB peak drop
    rc, out41, _ = estimate(capsys, *wan, "--frames", "41", "--json")
    rc, out81, _ = estimate(capsys, *wan, "--frames", "81", "--json")
    drop = json.loads(out81)["phases"]["sample"] - json.loads(out41)["phases"]["sample"]
    assert knobs["fewer_frames"]["phase_saving"] == {"phase": "sample", "bytes": drop}


# The verdict, host RAM and triage's Cause lines were printed whole (up to ~230 columns) beside lines that wrap at the
# pipe's 80 (term.py): FLUX.1 on 24 GiB with 4 GiB of RAM prints a 200-column verdict and a 134-column host RAM line;
# the MPS log's Cause line ("Cause: uncertain: weights-exceed-vram? (activations also possible) - 64% and 22%
# confidence - ...") is over 80. Each now wraps, and unwrap gives back the line as it was. Breaks if either renderer
# appends these lines without term.wrap_lines (the old code).
def test_verdict_host_ram_and_cause_lines_wrap_at_80(capsys):
    from support.cli_run import estimate, unwrap
    from gpu_garden.memory.triage import engine
    from test_triage_fixups import MPS
    rc, out, _ = estimate(capsys, "flux1", "--vram", "24", "--ram", "4", "--dynamic-vram", "off")
    raw = out.splitlines()
    at = next(i for i, ln in enumerate(raw) if ln.startswith("verdict:"))
    end = next(i for i, ln in enumerate(raw) if ln.startswith("knobs"))
    assert rc == 1 and end - at >= 4 and max(len(ln) for ln in raw[at:end]) <= 80  # verdict and host RAM, wrapped
    whole = unwrap(out).splitlines()
    v = next(ln for ln in whole if ln.startswith("verdict:"))
    h = next(ln for ln in whole if ln.startswith("host RAM:"))
    assert len(v) > 160 and v.startswith("verdict: DOES NOT FIT: host RAM is short: the run needs 9.26 GiB of it")
    assert len(h) > 120 and h.startswith("host RAM: needs 9.26 GiB (kept for reload 9.26 GiB, offloaded 0 B, pinned 0 B)"
                                         " of 4.00 GiB available: does not fit")
    text = engine.render_human(engine.triage_text(MPS))
    first = text.splitlines()[:2]
    assert first[0].startswith("Cause: uncertain: ") and len(first[0]) <= 80 and first[1].startswith("  ")
    cause = unwrap(text).splitlines()[0]
    assert len(cause) > 80 and cause.startswith("Cause: uncertain: weights-exceed-vram? (activations also possible) - "
                                                "64% and 22% confidence - ")


# Qwen2.5-7B at 32768 tokens on 23.55 GiB with --gpu-memory-utilization 0.65 (ux57): nothing fits at 0.65 and the note
# says 0.73 holds them, but no command was printed. Hand: 17.56 GiB on the GPU less the 0.50 GiB CUDA context outside
# the share = 17.06 GiB of 23.55 = 0.7244, so 0.73. The command at 0.73 is printed, labelled with the share, and kv at
# 0.73 fits and prints the same command (at 0.72 it shortens the context). Breaks if no command is printed (the old
# code) or the command takes vLLM's default share (0.92) instead of the one the note names.
def test_kv_prints_the_command_at_the_share_its_note_names(capsys):
    from support.cli_run import run, unwrap
    base = ["kv", "--model", "Qwen/Qwen2.5-7B-Instruct", "--ctx", "32768", "--vram", "23.55"]
    cmd = ("  vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 32768 --kv-cache-dtype auto "
           "--gpu-memory-utilization 0.73")
    rc, out, _ = run(base + ["--gpu-memory-utilization", "0.65"], capsys)
    lines = unwrap(out).split("\n")
    assert rc == 1 and "note: your --gpu-memory-utilization 0.65 is too small for 32768 tokens; " \
                       "--gpu-memory-utilization 0.73 holds them" in lines
    at = lines.index("with --gpu-memory-utilization 0.73 (holds 32,768 tokens):")
    assert lines[at + 1] == cmd
    rc, j, _ = run(base + ["--gpu-memory-utilization", "0.65", "--json"], capsys)
    assert j["share_fix"]["command"] == cmd.strip() and j["share_fix"]["util"] == 0.73 and j["command"] == ""
    rc, out, _ = run(base + ["--gpu-memory-utilization", "0.73"], capsys)
    assert rc == 0 and cmd in out.split("\n") and "with --gpu-memory-utilization" not in out
