"""A first-hour walk (ux21): `gpu-garden estimate` on a machine without a GPU printed "verdict: no budget (no GPU
found)" with no word of how to get a verdict, and without a probe "verdict: no budget (no budget: pass --vram GIB)"."""
from gpu_garden.memory.estimate import families, formula, layouts
from gpu_garden.memory.estimate.report import format_text
from support.cli_run import unwrap


def _sd15_without_budget():
    comps = families.split_components(layouts.table("sd15_v1-5-pruned-emaonly-fp16"), "v1-5-pruned-emaonly-fp16.safetensors")
    return formula.judge(formula.estimate(comps, 512, 512, cfg=None, policy={"dynamic_vram": "off"}), None)


def _verdict(label):
    return [ln for ln in unwrap(format_text(_sd15_without_budget(), label)).splitlines() if ln.startswith("verdict:")]


def test_no_budget_verdict_says_how_to_get_one_once():
    assert _verdict("no GPU found") == ["verdict: no budget (no GPU found; pass --vram GIB to judge against a card)"]
    assert _verdict("no budget: pass --vram GIB") == ["verdict: no budget (pass --vram GIB to judge against a card)"]
    assert _verdict("no budget: device probe failed (OSError)") == [
        "verdict: no budget (device probe failed (OSError); pass --vram GIB to judge against a card)"]
    assert _verdict("") == ["verdict: no budget (pass --vram GIB to judge against a card)"]


def test_component_table_on_a_cpu_run_says_ram_not_vram():
    """--device cpu: the weights column read "in VRAM" on a run that has no card."""
    comps = families.split_components(layouts.table("sd15_v1-5-pruned-emaonly-fp16"), "v1-5-pruned-emaonly-fp16.safetensors")
    cpu = formula.judge(formula.estimate(comps, 512, 512, cfg=None, policy={"dynamic_vram": "off", "device": "cpu"}), None)
    head = [ln for ln in format_text(cpu, "--device cpu: host RAM").splitlines() if ln.startswith("component")]
    assert len(head) == 1 and head[0].split()[-2:] == ["RAM", "dtypes"] and "VRAM" not in head[0]
    head = [ln for ln in format_text(_sd15_without_budget(), "no GPU found").splitlines() if ln.startswith("component")]
    assert "in VRAM" in head[0]


def test_on_a_cpu_run_the_vae_sits_in_ram_in_fp32():
    """ComfyUI --cpu: vae_dtype is fp32 and VAE.__init__ moves the VAE there, so its weights sit in RAM at 4 bytes (the
    running node measured 554.96 MiB kept for reload for SD1.5's CLIP-L and VAE). The file estimate kept the fp16
    file's 2 bytes: "Estimate the open graph" said 394.28 MiB on the same face, and the CLI's VAE row 0.16 GiB F16."""
    import math
    tensors = layouts.load("sd15_v1-5-pruned-emaonly-fp16")["tensors"]
    vae_numel = sum(math.prod(t["shape"]) for k, t in tensors.items()
                    if k.startswith("first_stage_model.") and t["dtype"] in ("F16", "F32", "BF16"))
    comps = families.split_components(layouts.table("sd15_v1-5-pruned-emaonly-fp16"), "v1-5-pruned-emaonly-fp16.safetensors")
    est = formula.judge(formula.estimate(comps, 512, 512, cfg=None, policy={"dynamic_vram": "off", "device": "cpu",
                                                                           "host_ram": 64 << 30}), None)
    vae = [c for c in est["_ctx"]["components"] if c["role"] == "vae"]
    te = [c for c in est["_ctx"]["components"] if c["role"] == "text_encoder"]
    assert len(vae) == 1 and vae[0]["resident"] == vae_numel * 4, (vae[0]["resident"], vae_numel)
    assert est["host_ram"]["kept_for_reload"] == vae_numel * 4 + sum(c["resident"] for c in te)
    assert est["breakdown"]["vae_decode"]["weights"] == vae_numel * 4  # the decode phase already had it right
