"""Review rev57 (session 56's merges): each test fails on the code before its fix; each names the deliberate error
that breaks it (checked by reverting)."""
from gpu_garden.memory.recorder import report

RUN = {"prompt_id": "p1", "status": "error", "nodes": [{"id": "14", "type": "GGTestRaiseOOM", "duration_s": 0.1}]}
OOM = {"id": "r1", "node": {"id": "14", "type": "GGTestRaiseOOM"}, "exception_type": "torch.OutOfMemoryError",
       "message": "CUDA out of memory.", "cause": "activations", "guide": {"id": "comfyui-activations"}}


def oom_line(**kw) -> str:
    md = report.markdown(report.build(RUN, None, dict(OOM, **kw)))
    return next(x for x in md.splitlines() if x.startswith("**Out-of-memory report**"))


# ux58 made the report's OOM line say "uncertain" as the panel does, but only with two alternatives. Triage's answer is
# also uncertain when one cause fired too weakly to stand alone (rank.NOT_DETERMINED; engine.py: alternatives then
# name that cause alone, or none): the panel says "cause uncertain (one weak sign): activations?" (oom_parts.js
# uncertainLabel) and the CLI "Cause: uncertain - activations (..., one sign alone)" (triage/render.py), while the
# report said "cause: activations" as if confident. Breaks if a lone uncertain cause is stated alone (the old code).
def test_a_lone_weak_cause_is_uncertain_in_the_report():
    for alts in ([], [{"id": "activations", "confidence": 0.4}]):
        assert oom_line(uncertain=True, alternatives=alts).endswith(
            "; cause uncertain (one weak sign): activations?"), alts
    assert oom_line(uncertain=True, alternatives=[], cause=None).endswith("; cause not determined")
    assert oom_line(uncertain=False, alternatives=[]).endswith("; cause: activations")


# Fit to Card in advise mode without a budget (ux58's advised): the summary was replaced whole, and only when
# memory_required was set. With no latent wired (memory_required 0 until sampling) the advise face still said "no
# latent connected: ...; no budget: ComfyUI gets our activation figure (0 B) as memory_required; nothing else
# changes"; with a VAE off the model's device the summary lost make_plan's "the VAE runs on ... (not the budget's
# device)". Breaks if advised replaces the whole summary (VAE note lost) or skips a memory_required of 0 (the old code).
def test_fit_to_card_advise_without_a_budget_keeps_the_plans_notes(monkeypatch):
    import torch

    from gpu_garden.nodes import host_models
    from test_nodes_fit_to_card import STUBS, VAE, Model, Tensor, fresh_fit_to_card, FACTS
    fit = fresh_fit_to_card(monkeypatch, STUBS)
    monkeypatch.setattr(fit.fit_guard, "model_facts", lambda model: dict(FACTS))
    monkeypatch.setattr(fit.fit_guard, "vae_kind", lambda vae, family: "kl")
    monkeypatch.setattr(fit, "host_ram", lambda *objs: None)
    monkeypatch.setattr(host_models, "compute_device", lambda: torch.device("cpu"))  # --cpu: no budget
    monkeypatch.setattr(fit.fit_guard.fit_vae, "on_compute_device", lambda vae, where: False)  # --cpu-vae style
    no_latent = fit.GPUGardenFitToCard.execute(Model(), None, None, None, None, 0.0, "advise").ui["gpu_garden_fit"][0]
    assert no_latent["summary"].startswith("no latent connected: the figure is computed when the sampler starts; no "
                                           "budget: apply would give ComfyUI our activation figure ("), no_latent["summary"]
    assert "ComfyUI gets" not in no_latent["face"] and "nothing else would change" in no_latent["face"]
    vae = fit.GPUGardenFitToCard.execute(Model(), VAE(torch.device("cuda", 0)), None, {"samples": Tensor([1, 4, 32, 32])},
                                         None, 0.0, "advise").ui["gpu_garden_fit"][0]
    assert vae["summary"].startswith("no budget: apply would give ComfyUI our activation figure ("), vae["summary"]
    assert vae["summary"].endswith("; nothing else would change; the VAE runs on cuda:0 (not the budget's device): "
                                   "sized there, not tiled"), vae["summary"]


# mend58 judges every knob on its own host RAM, and the text named a short one "host RAM short" alone, also where its
# peak is still over the card: FLUX.1-dev on 12 GiB with 8 GiB of RAM (Dynamic VRAM off), fp8 weights save 10.95 GiB of
# a 23.38 GiB sample peak (12.43 GiB, over 12) and need 9.68 GiB of RAM; the row read "host RAM short" as if RAM were
# all it lacked. GGUF Q4_K (10.15 GiB, its RAM 0.16 GiB) still fits; 768x768 on 24 GiB with 4 GiB of RAM is short of RAM
# alone. Breaks if a knob over the budget and short of RAM says only one of the two (the old code: RAM alone).
def test_a_knob_short_of_ram_and_vram_says_both(capsys):
    import json

    from support.cli_run import estimate, unwrap

    def rows(*args):
        rc, out, _ = estimate(capsys, "flux1", "--dynamic-vram", "off", *args)
        return unwrap(out).split("\n")

    rc, out, _ = estimate(capsys, "flux1", "--dynamic-vram", "off", "--vram", "12", "--ram", "8", "--json")
    j = json.loads(out)
    fp8 = next(k for k in j["knobs"] if k["id"] == "fp8_weights")
    assert fp8["peak_after"] > j["budget"] and fp8["host_ram_short"]
    twelve = rows("--vram", "12", "--ram", "8")
    fp8_row = next(x for x in twelve if "fp8 (e4m3fn) diffusion model weights" in x)
    assert "or an fp8 file)  still over, host RAM short (host RAM then needs 9.68 GiB, 8.00 GiB available)" in fp8_row
    assert "(ComfyUI-GGUF; some quality loss)  fits" in next(x for x in twelve if "GGUF Q4_K" in x)
    low = next(x for x in rows("--vram", "24", "--ram", "4") if "768x768 instead of 1024x1024" in x)
    assert "(then upscale)  host RAM short (host RAM then needs 9.26 GiB, 4.00 GiB available)" in low


# kv figures quoted in kv-accuracy.md's session-56 paragraphs (kv57's Scout and dots.ocr encoder terms, l124's kv total
# for vllm#5248) carried no marker and no commit, and kv59's item count is about to move kv's profile figures: each now
# names the commit it was read at (4aa1fbd6: `kv --model deepseek-ai/deepseek-coder-6.7b-instruct --runtime vllm
# --runtime-version 0.4.3 --vram 14.74 --tensor-parallel-size 2 --ctx 65536 --weights-dtype fp16` printed weights 6.29
# GiB, activation profile 3.26 GiB, non torch 358.40 MiB; test_kv_kv57 pins the other two). Breaks if a quote loses its
# label (the old page) or names a commit not in the history.
KV_LABELLED = ["kv (at 4aa1fbd6) prices 17 x 577 tokens of width 1408, 441,954,304 B (0.41 GiB)",
               "so kv's term (at 4aa1fbd6) is 2,831,155,200 B (2.64 GiB)",
               "against kv's 9.90 (at 4aa1fbd6: weights 6.29, profile 3.26, non-torch 0.35)"]


def test_session_56_kv_quotes_name_their_commit():
    import subprocess
    from pathlib import Path

    import pytest
    repo = Path(__file__).resolve().parents[2]
    text = " ".join((repo / "docs" / "kv-accuracy.md").read_text().split())
    for quote in KV_LABELLED:
        assert quote in text, quote
    got = subprocess.run(["git", "-C", str(repo), "cat-file", "-t", "4aa1fbd6"], capture_output=True, text=True)
    if got.returncode and "not a git repository" in got.stderr:
        pytest.skip("no git history here")
    assert got.stdout.strip() == "commit"
