"""Task mend58 (what reviews ux56 / rev56 noticed and left): each test fails on the code before its fix; each names
the deliberate error that breaks it (checked by reverting)."""
import json

from support.cli_run import estimate, unwrap

FLUX = ("flux1", "--vram", "24", "--dynamic-vram", "off")


def _knobs(capsys, *args):
    rc, out, _ = estimate(capsys, *FLUX, *args, "--json")
    j = json.loads(out)
    return j, {k["id"]: k for k in j["knobs"]}


# FLUX.1-dev on 24 GiB (ux56): its diffusion model is 23,802,816,640 bytes of BF16; a partial load keeps a tenth on the
# GPU (2,380,281,664), so 21,422,534,976 bytes (19.95 GiB) stay in RAM, beside the models the run keeps for reload (the
# run's own host_ram.kept_for_reload: T5, CLIP-L and the VAE, 9.26 GiB): 29.21 GiB in all. With --ram 15.7 the knob
# listed "fits (needs about 19.95 GiB of free host RAM)": the old rule marked it short only when the run itself was.
# Breaks if the knob is judged by the run's RAM (the old code: fits at 15.7 and 24) or by its offloaded weights alone
# (24 GiB holds 19.95: fits at 24).
def test_partial_offload_knob_is_judged_by_its_own_host_ram(capsys):
    off = 23_802_816_640 - 23_802_816_640 // 10
    for ram in ("15.7", "24"):
        j, k = _knobs(capsys, "--ram", ram)
        assert j["host_ram"]["verdict"] == "fits"  # the run as it is holds its 9.26 GiB
        po = k["partial_offload"]
        assert (po["fits"], po.get("host_ram_short")) == (False, True)
        assert po["host_ram"]["offloaded"] == off
        assert po["host_ram"]["hard_need"] == j["host_ram"]["kept_for_reload"] + off
        assert k["fp8_weights"]["fits"] is True  # a knob whose RAM holds still fits
    rc, out, _ = estimate(capsys, *FLUX, "--ram", "15.7")  # TIGHT: the run fits, no partial offload offered (rev68g #3)
    assert "verdict: TIGHT" in out and "partial offload of the diffusion model" not in out
    rc, out, _ = estimate(capsys, *FLUX, "--ram", "4")  # the run does not fit (its RAM): the row, judged by its own RAM
    row = next(ln for ln in unwrap(out).split("\n") if "partial offload of the diffusion model" in ln)
    assert "  host RAM short (needs about 19.95 GiB of free host RAM; host RAM then needs 29.21 GiB, 4.00 GiB " \
           "available; " in row
    j, k = _knobs(capsys, "--ram", "32")  # 29.21 of 32 GiB: tight, not short
    assert k["partial_offload"]["fits"] is True and "host_ram_short" not in k["partial_offload"]


# The same run with 4 GiB of RAM is short already (9.26 GiB kept for reload). 768x768 changes no weights: its run keeps
# the same 9.26 GiB, so it does not fit either; the old code printed "fits" for it (only partial offload was marked).
# Breaks if a re-estimated knob is judged by its VRAM peak alone.
def test_a_knob_that_leaves_the_ram_short_does_not_fit(capsys):
    j, k = _knobs(capsys, "--ram", "4")
    lr = k["lower_resolution"]
    assert lr["peak_after"] <= j["budget"]
    assert (lr["fits"], lr.get("host_ram_short")) == (False, True)
    assert lr["host_ram"]["hard_need"] == j["host_ram"]["kept_for_reload"]


def _numbers(x):
    if isinstance(x, dict):
        for v in x.values():
            yield from _numbers(v)
    elif isinstance(x, list):
        for v in x:
            yield from _numbers(v)
    elif isinstance(x, (int, float)) and not isinstance(x, bool):
        yield x


# Sequential offload (ux56): the estimate's JSON carried policy.offload_bytes = 4611686018427387904, the formula's 1 << 62
# "every weight" sentinel, which a JSON reader takes as bytes (and JavaScript cannot even hold: over 2**53). Now null,
# with policy.offload "sequential" saying every weight streams; a run without offload keeps 0. Breaks if the policy
# keeps the sentinel (the old code) or any figure in the JSON is one (past 2**53, a web panel's Number loses it).
def test_sequential_offload_reports_no_sentinel_bytes(capsys):
    for args in (("flux1", "--offload", "sequential", "--vram", "8"),
                 ("sdxl", "--runner", "diffusers", "--vram", "6"),  # its knobs re-run it with sequential offload
                 ("flux1", "--runner", "diffusers", "--offload", "sequential", "--vram", "8")):
        rc, out, _ = estimate(capsys, *args, "--ram", "64", "--json")
        j = json.loads(out)
        assert max(_numbers(j)) < 2 ** 53, args
        if "--offload" in args:
            assert (j["policy"]["offload"], j["policy"]["offload_bytes"]) == ("sequential", None)
    rc, out, _ = estimate(capsys, "flux1", "--vram", "8", "--ram", "64", "--json")
    assert json.loads(out)["policy"]["offload_bytes"] == 0


# Figures quoted from the CLI in docs' round paragraphs that the CLI no longer prints (ux56, and a search of the round
# paragraphs' quoted commands run at the commit that wrote them and today): each now says the commit it was read at,
# and that commit exists. Checked by running each command at that commit (git archive) and at main 0e163a6e: compute
# buffer 120.00 MiB then, 152.00 now; B70 one request 4.26 then, 4.10 now; syvai 3090 23.13 GiB then; Qwen3.6-27B-FP8
# 28.23 / GPTQ 17.34 then, 28.31 / 17.41 now (the vision tower); FLUX.1 host RAM 20.64 then, 20.63 now. Breaks if a
# quote loses its label (the old pages) or names a commit that is not in the history.
LABELLED = [
    ("kv-accuracy.md", "At 65aeaca6 the two commands printed a compute buffer of 420.46 MiB and 120.00 MiB"),
    ("kv-accuracy.md", "4.26 GiB for the B70 kit at 65aeaca6, not 3.39"),
    ("kv-accuracy.md", "to 23.13 GiB, fits (at 781e9b01)"),
    ("kv-accuracy.md", "(`kv` at 781e9b01: 28.23)"),
    ("kv-accuracy.md", "(`kv` at 781e9b01: 17.34)"),
    ("estimate-accuracy.md", "Example (printed at 12859af0): FLUX.1-dev on 12 GiB with 42 GiB of RAM. Off, it needs 20.64 GiB"),
]


def test_drifted_cli_quotes_in_docs_name_the_commit_they_were_read_at():
    import re
    import subprocess
    from pathlib import Path

    import pytest
    repo = Path(__file__).resolve().parents[2]
    for page, quote in LABELLED:
        text = " ".join((repo / "docs" / page).read_text().split())
        assert quote in text, (page, quote)
    git = subprocess.run(["git", "-C", str(repo), "rev-parse", "--git-dir"], capture_output=True)
    if git.returncode:
        pytest.skip("no git history here")
    for _, quote in LABELLED:
        commit = re.search(r"\b[0-9a-f]{8}\b", quote).group(0)
        got = subprocess.run(["git", "-C", str(repo), "cat-file", "-t", commit], capture_output=True, text=True)
        assert got.stdout.strip() == "commit", commit


# memory/llm's four modules at the 600-line limit (rev56: names.py 599, runtimes/vllm.py 590, plan.py 581, cache.py 580),
# each split along a seam it had: what a repo id says about its weights (name_quant.py), vLLM's MLA layout and weight
# copies (runtimes/vllm_mla.py), the plan's answer fields (plan_answer.py), vLLM's estimate_max_model_len
# (vllm_max_len.py). No re-export left behind: callers import from the new module. Breaks if a module grows back past
# 560 lines (the old sizes) or a moved function is defined twice.
def test_llm_modules_at_the_limit_split_along_their_seams():
    from pathlib import Path

    from gpu_garden.memory import llm
    from gpu_garden.memory.llm import (cache, kv, name_quant, names, plan, plan_answer, vllm_max_len,
                                       vllm_refusal)
    from gpu_garden.memory.llm.runtimes import vllm, vllm_mla, vllm_pipeline
    pack = Path(llm.__file__).parent
    for rel in ("names.py", "runtimes/vllm.py", "plan.py", "cache.py"):
        assert len((pack / rel).read_text(encoding="utf-8").splitlines()) <= 560, rel
    assert (names.name_bits, names.qat_group, names.unsloth_dynamic, names.meta_fp8) == (
        name_quant.name_bits, name_quant.qat_group, name_quant.unsloth_dynamic, name_quant.meta_fp8)
    assert vllm.mla_layout is vllm_mla.mla_layout is vllm_pipeline.mla_layout
    assert not hasattr(vllm, "mla_dequant_bytes") and not hasattr(vllm, "MLA_FROM")
    assert (plan._answer, plan._vllm_kv_refusal) == (plan_answer._answer, plan_answer._vllm_kv_refusal)
    assert kv.vllm_estimated_max_len is vllm_max_len.vllm_estimated_max_len is vllm_refusal.vllm_estimated_max_len
    assert not hasattr(cache, "vllm_estimated_max_len") and not hasattr(cache, "longest_fitting")
