"""fix68f: mend audit aud68c's findings on triage of llama.cpp / Ollama / PyTorch-script / DirectML / MPS logs (issue 14).
Logs under data/fix68f/ (README: each one's thread; the auditor's, modelled on public threads), numbers exact, prose
and paths rewritten. Every test goes through the whole scan (engine.triage_text, the CLI's path)."""
from pathlib import Path

from gpu_garden.memory.triage import engine
from support import triage_event

DATA = Path(__file__).parent / "data" / "fix68f"


def _answer(name_or_text):
    return triage_event.answer(DATA, name_or_text)


def _sugg(ev, name):
    return [x["value"] for x in ev.get("suggestions", []) if x["name"] == name]


# 1. -ngl from kv's plan (the log's -c, the cache type, the compute buffer), not the weights alone; the guide's text
# says how it was worked out whenever the command carries a number. Cross-checks (the auditor's): `gpu-garden kv --model
# Llama-3.3-70B-Instruct --weights-dtype Q3_K_M --ctx 8192 --vram 23.734 --runtime llama.cpp --runtime-version b4820`
# plans -ngl 54 with a q8_0 cache (the weights-only figure was 57); Qwen3-30B-A3B Q4_K_M at 16384 on 11.545: 28 (was 31).
def test_ngl_from_kv_plan_rocm_70b():      # ROCm build form (b4820), Llama-3.3-70B Q3_K_M on a 24 GB 7900 XTX
    res, ev, _ = _answer("lc_hip_7900xtx.log")
    g = ev["guide"]
    assert g["id"] == "llamacpp-weights"
    cmd = g["commands"][0]["text"]
    assert "-ngl 54 " in cmd and "-ctk q8_0 -ctv q8_0" in cmd, cmd
    assert _sugg(ev, "-ngl") == ["54"]
    assert "does not print enough" not in g["markdown"] and "gpu-garden kv --model Llama-3.3-70B" in g["markdown"]


def test_ngl_from_kv_plan_moe_with_and_without_offload_line():     # Qwen3-30B-A3B Q4_K_M, RTX 3060 12 GB, b5200
    for name in ("lc_moe_old_build_b5200_offl.log", "lc_moe_old_build_b5200.log"):
        res, ev, _ = _answer(name)
        g = ev["guide"]
        assert "-ngl 28 " in g["commands"][0]["text"], (name, g["commands"][0]["text"])
        assert _sugg(ev, "-ngl") == ["28"], name
        assert "does not print enough" not in g["markdown"], name


def test_ngl_weights_only_says_so_when_kv_cannot_describe_the_model():
    text = (DATA / "lc_hip_7900xtx.log").read_text().replace("Llama 3.3 70B Instruct", "Private Tune 70B")
    res, ev, _ = _answer(text)
    g = ev["guide"]
    cmd = g["commands"][0]["text"]
    n = cmd.split("-ngl ")[1].split()[0]
    assert n.isdigit(), cmd
    assert f"`-ngl {n}` counts the weights alone" in g["markdown"].replace("\n", " ")
    assert "does not print enough" not in g["markdown"]
    assert _sugg(ev, "-ngl") in ([n], [])


# 2. The llama.cpp build the log prints decides -fa's form (llm/flags.py FA_VALUE: a value from b6325, a bare switch
# before): the guides' commands and the suggestions' list both follow it.
def test_fa_bare_before_b6325_in_commands_and_list():
    # (the b3748 SYCL and b5061 Vulkan logs were here too: from #8 their guide is the allocation cap's, with no -fa)
    for name in ("lc_hip_7900xtx.log", "lc_moe_old_build_b5200_offl.log", "lc_moe_old_build_b5200.log"):
        res, ev, _ = _answer(name)
        g = ev["guide"]
        assert g["id"].startswith("llamacpp-"), (name, g["id"])
        for c in g["commands"]:
            assert "-fa on" not in c["text"], (name, c)
        assert any(c["text"].endswith(" -fa") or " -fa " in c["text"] for c in g["commands"]), (name, g["commands"])
        assert _sugg(ev, "-fa") in ([""], []), name
        assert "-fa on" not in " ".join(x["text"] for x in ev.get("suggestions", [])), name


def test_fa_on_from_b6325():
    text = (DATA / "lc_hip_7900xtx.log").read_text().replace("build: 4820 (1a24c462)", "build: 6400 (1a24c462)")
    res, ev, _ = _answer(text)
    assert "-fa on" in ev["guide"]["commands"][0]["text"]
    assert _sugg(ev, "-fa") == ["on"]


# 3. Ollama 0.3.6 (ollama/ollama#6382's header: its server config env map has neither variable) reads no
# OLLAMA_KV_CACHE_TYPE (ollama/ollama#6279, 0.5.0) nor OLLAMA_CONTEXT_LENGTH (0.5.13): no command or suggestion sets them,
# the context goes per model or request (num_ctx), and the guide says from which version each exists.
def _all_text(ev):
    return " ".join(c["text"] for c in ev["guide"]["commands"]) + " " + " ".join(x["text"] for x in ev.get("suggestions", []))


def test_old_ollama_gets_no_variable_it_does_not_read():
    res, ev, _ = _answer("ol_old_0_3_6_parallel4_kv.log")
    assert ev["guide"]["id"] == "ollama-kv-cache"
    said = _all_text(ev)
    assert "OLLAMA_KV_CACHE_TYPE" not in said and "OLLAMA_CONTEXT_LENGTH" not in said, said
    md = ev["guide"]["markdown"].replace("\n", " ")
    assert "/set parameter num_ctx 4096" in md and "0.5.0" in md and "0.5.13" in md


def test_newer_ollama_keeps_them():
    text = (DATA / "ol_old_0_3_6_parallel4_kv.log").read_text().replace("(version 0.3.6)", "(version 0.6.2)")
    res, ev, _ = _answer(text)
    said = _all_text(ev)
    assert "OLLAMA_KV_CACHE_TYPE=q8_0" in said
    assert "does not read" not in ev["guide"]["markdown"] and "reads neither" not in ev["guide"]["markdown"]


# 4. ollama/ollama#8447: "flash attention enabled but not supported by model" -> no OLLAMA_FLASH_ATTENTION /
# OLLAMA_KV_CACHE_TYPE advice; "invalid environment variable ... OLLAMA_GPU_OVERHEAD value=8G" -> it was ignored, bytes.
def test_no_flash_attention_advice_where_the_model_has_none_and_the_invalid_overhead_is_named():
    res, ev, _ = _answer("ol_8447_gpu_overhead_invalid.log")
    said = _all_text(ev)
    assert "OLLAMA_FLASH_ATTENTION" not in said and "OLLAMA_KV_CACHE_TYPE" not in said, said
    md = ev["guide"]["markdown"].replace("\n", " ")
    assert "`OLLAMA_GPU_OVERHEAD=8G` was ignored" in md and "OLLAMA_GPU_OVERHEAD=8589934592" in md    # 8 x 2**30
    assert "0.5.13" not in md      # the guide names no OLLAMA_CONTEXT_LENGTH: nothing to say of it


def test_flash_attention_advice_kept_without_the_warning():
    text = "\n".join(ln for ln in (DATA / "ol_8447_gpu_overhead_invalid.log").read_text().splitlines()
                     if "not supported by model" not in ln and "invalid environment" not in ln)
    res, ev, _ = _answer(text)
    assert "OLLAMA_KV_CACHE_TYPE=q8_0" in _all_text(ev)
    assert "was ignored" not in ev["guide"]["markdown"]


# 5. Class 7: "a regression" only with should_fit's verdict. ollama/ollama#9562's offload line (30/33 layers, partial
# 4.9 GiB on 5.0 GiB available) under ollama/ollama#6382's 0.3.6 header: a tight estimate, its figures under Numbers.
# With the verdict (vLLM 7B on 80 GB) the version-regression guide leads; without it (72B whose weights alone outgrow
# the card) the weights guide's title says the weights do not fit, not that the cache had no room.
def test_ollama_estimate_row_says_tight_not_regression():
    res, ev, said = _answer("ol_old_0_3_6_kv.log")
    assert "regression" not in said, said
    assert "tight estimate" in said and "4.90 GiB" in said and "5.00 GiB available" in said, said
    assert ev["numbers"]["available"] == 5 * 2**30 and abs(ev["numbers"]["ollama_partial"] - 4.9 * 2**30) < 2**20


def test_should_fit_leads_with_the_regression_guide():
    res, ev, said = _answer("vl_regression_7b_on_80g.log")
    assert "should fit" in said
    assert ev["guide"]["id"] == "version-regression", ev["guide"]["id"]
    assert [f["id"] for f in ev["guide"]["faqs"]][:1] == ["allocation-refused"]


def test_weights_over_the_card_guide_title():
    res, ev, said = _answer("vl_72b_on_80g_not_regression.log")
    assert res["cause"] == "weights-exceed-vram" and "should fit" not in said
    g = ev["guide"]
    assert g["id"] == "vllm-weights" and "KV cache" not in g["title"] and "weights" in g["title"], g["title"]
    assert "135.43 GiB" in g["markdown"]


# 6. ollama/ollama#11819: num_gpu 49 asked (layers.requested=49) where Ollama's estimate fits 48 (layers.offload=48), the
# whole model (memory.required.full 11.0 GiB) over the 10.9 GiB available: the forced count is the reading, and the fix
# is to remove num_gpu or set it at most 48 (the compute buffer that failed is only where it ran out).
def test_num_gpu_over_ollamas_estimate():
    res, ev, said = _answer("ol_11819_num_gpu_forced.log")
    assert res["cause"] == "weights-exceed-vram", (res["cause"], said)
    assert "num_gpu 49 was asked" in said and "48 or fewer" in said, said
    g = ev["guide"]
    assert g["id"] == "ollama-weights" and "num_gpu 48" in g["markdown"]
    labels = [x["label"] for x in g["fixes"]]
    assert labels[0].startswith("Fix 1 - remove num_gpu") and [x.split(" - ")[0] for x in labels[:3]] == ["Fix 1", "Fix 2", "Fix 3"]


def test_num_gpu_within_the_estimate_is_not_forced():
    text = (DATA / "ol_11819_num_gpu_forced.log").read_text().replace("layers.requested=49", "layers.requested=-1")
    res, ev, said = _answer(text)
    assert "num_gpu 49 was asked" not in said and "ollama_forced" not in ev["guide"]["markdown"]


# 7. Comfy-Org/ComfyUI#7372 (MPS allocated 17.68 GB, other allocations 3.95 MB, max allowed 18.13 GB, 1024 MB asked at the
# first step after a 15366.80 MB SD3 load): PyTorch's tensors at 98 % of the limit with nothing else -> the weights lead.
def test_mps_weights_fill_the_limit():
    res, ev, said = _answer("c4_mps_gb_units_after_update.log")
    assert ev["causes"][0]["id"] == "weights-exceed-vram", ev["causes"]
    assert "98% of the limit" in said      # 17.68 of 18.13


def test_mps_large_other_allocations_do_not_read_as_weights():
    text = (DATA / "c4_mps_gb_units_after_update.log").read_text().replace("other allocations: 3.95 MB", "other allocations: 1.20 GB")
    res, ev, said = _answer(text)
    assert "of the limit and little else" not in said


# 8. Per-allocation caps. ggml-org/llama.cpp#9472: a 5.07 GiB SYCL buffer on a 16225M Arc A770 is over Level Zero's 4 GiB
# (UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1); ggml-org/llama.cpp#12817: a 3.69 GiB Vulkan compute buffer that with the
# 3.34 GiB placed before it fits the 7920 MiB free at start -> the vulkan-max-buffer guide.
def test_sycl_buffer_over_level_zeros_4_gib():
    res, ev, said = _answer("lc_sycl_a770_4gb_9472.log")
    assert ev["causes"][0]["id"] == "other", ev["causes"]
    assert "UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1" in said and "5.07 GiB" in said


def test_vulkan_buffer_that_fits_free_is_the_cap():
    res, ev, said = _answer("lc_vulkan_ub8192_12817.log")
    assert ev["causes"][0]["id"] == "other" and ev["guide"]["id"] == "vulkan-max-buffer", (ev["causes"], ev["guide"]["id"])


def test_vulkan_buffer_over_free_is_not_the_cap():
    text = (DATA / "lc_vulkan_ub8192_12817.log").read_text().replace("- 7920 MiB free", "- 6000 MiB free")
    res, ev, said = _answer(text)
    assert ev["guide"]["id"] != "vulkan-max-buffer" and "cap on one allocation" not in said


# 9. DeepSpeed ZeRO-3 gathering parameters (Lightning-AI/pytorch-lightning#18134: all_gather_coalesced in the traceback):
# the gathered parameters, their own guide with ZeRO's stage3_* settings; deepspeedai/DeepSpeed#2899's GPU 2 named under
# Numbers.
def test_zero3_parameter_gathering_row_and_guide():
    res, ev, said = _answer("pt_lightning_ds_zero3_gather.log")
    # (the row names the frame and picks the guide, whichever cause leads: two tuned corpus cases with it are activations)
    assert ev["causes"][0]["id"] in ("weights-exceed-vram", "activations") and "ZeRO-3 gathering parameters" in said
    g = ev["guide"]
    assert g["id"] == "deepspeed-zero3"
    for name in ("stage3_max_live_parameters", "stage3_prefetch_bucket_size", "stage3_param_persistence_threshold"):
        assert name in g["markdown"]


def test_gpu_index_under_numbers():
    from gpu_garden.memory.triage import render
    res = engine.triage_text((DATA / "pt_hf_trainer_zero3_gpu2.log").read_text())
    assert "Numbers: GPU 2, requested 896.00 MiB" in render.render_human(res).replace("\n  ", " ")


# 10. The fix already in the launch line: ComfyUI's "Set vram state to: LOW_VRAM" under --directml (Comfy-Org/ComfyUI#6168
# form) and the DirectML WebUI's "--lowvram" arguments (lshqqytiger/stable-diffusion-webui-amdgpu#38): no "add --lowvram"
# as the fix; --novram named as no step under --directml (comfy/model_management.py:103, 394-410).
def test_directml_lowvram_already_is_not_the_fix():
    res, ev, said = _answer("c1_comfy_directml_lowvram_already.log")
    md = ev["guide"]["markdown"].replace("\n", " ")
    assert ev["guide"]["id"] == "directml" and "already offloads" in md and "--novram" in md and "--cpu-vae" in md
    assert "unless `--lowvram` turns partial loading on" not in md
    res, ev, said = _answer("c1_a1111_directml_lowvram_already.log")
    md = ev["guide"]["markdown"].replace("\n", " ")
    assert "already runs with `--lowvram`" in md and "add `--medvram`" not in md


def test_directml_without_lowvram_keeps_the_offload_fix():
    text = "\n".join(ln for ln in (DATA / "c1_comfy_directml_lowvram_already.log").read_text().splitlines()
                     if "LOW_VRAM" not in ln and "Launch args" not in ln)
    res, ev, said = _answer(text)
    assert "unless `--lowvram` turns partial loading on" in ev["guide"]["markdown"].replace("\n", " ")
