"""Totals against published peaks under each runner's own policy (published(): diffusers' FLUX.1-dev bench, the Wan
and HunyuanVideo READMEs), and a real decode OOM in Wan 2.2's own runner (wan22_runner_oom); part of bench_estimate.py."""
import math

from estimate_common import E, GiB, blob, families, table
from estimate_traced import VAE

def published():
    """(label, ours, comfyui, reference, note) on totals, under each runner's own policy."""
    rows = []
    flux = [c for c in families.split_components(table("flux_flux1-dev"), "flux1-dev") if c["role"] == "diffusion_model"]
    e = E.estimate(flux, 1024, 1024, cfg=False, policy={"_no_knobs": True})
    w = e["breakdown"]["sample"]["weights"]
    rows.append(("flux1 1024x1024 transformer (diffusers bench)", w + e["breakdown"]["sample"]["activations"],
                 w + e["comfyui_memory_required"], 22.64 * GiB, "torch allocated, transformer only"))

    wan = table("wan_wan2.1_t2v_1.3B_fp16")
    wan32 = {k: ("F32" if d in ("F16", "BF16") else d, s) for k, (d, s) in wan.items()}
    comps = families.split_components(wan32, "wan2.1 1.3B fp32") + families.split_components(table("vae_wan_2.1_vae"), "vae")
    e = E.estimate(comps, 832, 480, 81, cfg=False, policy={"_no_knobs": True, "cast_fp32": False, "text_encoders": "cpu",
                                                           "runner": "wan"})
    comfy = max(e["breakdown"]["sample"]["weights"] + e["comfyui_memory_required"], e["phases"]["vae_decode"] - e["breakdown"]["vae_decode"]["fixed"]) \
        + sum(e["fixed"].values())
    rows.append(("wan21 1.3B 832x480x81 (Wan README)", e["peak"], comfy, 8.19 * GiB,
                 "fp32 weights (bf16 autocast), Wan's reference DiT (runner wan), cond/uncond sequential, T5 on CPU, model offloaded before decode"))

    dit = blob("BF16", 12_821_012_544, **{"txt_in.individual_token_refiner.blocks.0.norm1.weight": (3072,),
                                        "img_in.proj.weight": (3072, 16, 1, 2, 2)})
    llm = blob("F16", 8_030_261_248 - 128256 * 4096, **{"model.embed_tokens.weight": (128256, 4096), "model.layers.0.input_layernorm.weight": (4096,)})
    vae = blob("F16", 246_481_315, **{"decoder.conv_in.conv.weight": (512, 16, 3, 3, 3)})
    comps = (families.split_components(dit, "hunyuan-video 13B bf16") + families.split_components(llm, "llava-llama-3-8b fp16")
             + families.split_components(table("te_clip_l"), "clip-l") + families.split_components(vae, "vae fp16"))
    for (w, h), ref in (((1280, 720), 60), ((960, 544), 45)):
        e = E.estimate(comps, w, h, 129, cfg=False, policy={"_no_knobs": True, "models": "resident"})
        weights = e["breakdown"]["sample"]["weights"]
        comfy = weights + e["comfyui_memory_required"] + sum(e["fixed"].values())
        rows.append((f"hunyuan-video {w}x{h}x129 (HunyuanVideo README)", e["phases"]["sample"], comfy, ref * GiB,
                     "all resident, embedded guidance; sampling phase"))
    return rows


# A real decode OOM in Wan's own runner: Wan2.2 TI2V-5B, generate.py --size 1280*704 (121 frames) --offload_model True
# --convert_model_dtype --t5_cpu on a 24 GB card, "Tried to allocate 2.60 GiB ... 18.43 GiB is allocated by PyTorch"
# (https://github.com/Wan-Video/Wan2.2/issues/90; tests/unit/corpus/unseen/batch-09/wan22_ti2v_3090_decode_stage.log):
# the decode needed at least 18.43 + 2.60 GiB. Wan's runner decodes in fp32 (wan/modules/vae2_2.py Wan2_2_VAE
# dtype=torch.float, autocast(dtype=self.dtype)) after moving the DiT to the CPU; ComfyUI runs this VAE in bf16.
WAN22_OOM_DEMAND = (18.43 + 2.60) * GiB


def wan22_runner_oom(traces):
    """Our fp32 decode (VAE weights in fp32 + activations) against the OOM's lower bound, and the fp32 trace."""
    comps = families.split_components(table(VAE["wan22"]), "wan22")
    e = E.estimate(comps, 1280, 704, 121, policy={"_no_knobs": True, "family": "wan22", "vae_decode": "untiled",
                                                  "vae_dtype": "fp32", "cast_fp32": False})
    params = sum(math.prod(sh) for _, sh in comps[0]["table"].values())
    ours = 4 * params + e["breakdown"]["vae_decode"]["activations"]
    t = traces.get(("wan22", 1280, 704, 121, "decode", "flash", 1, "float32")) or {}
    out = {"wan22_runner_oom_demand_gib": round(WAN22_OOM_DEMAND / GiB, 2), "wan22_runner_ours_fp32_gib": round(ours / GiB, 2),
           "wan22_runner_shortfall": round(ours / WAN22_OOM_DEMAND - 1, 4)}
    if "peak" in t:
        out["wan22_runner_traced_fp32_gib"] = round(t["peak"] / GiB, 2)
    print(f"\nWan 2.2 decode 1280x704x121 in Wan's own runner (fp32): ours {ours / GiB:.2f} GiB"
          + (f", ComfyUI's decoder traced in fp32 {t['peak'] / GiB:.2f} GiB" if "peak" in t else "")
          + f"; the OOM proves >= {WAN22_OOM_DEMAND / GiB:.2f} GiB ({out['wan22_runner_shortfall']:+.1%}; the rest is not in the trace: "
          "candidates are cuDNN conv3d workspaces, which meta tensors do not show, and the runner's other tensors)")
    return out
