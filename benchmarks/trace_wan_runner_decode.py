"""The Wan 2.1 VAE decode as Wan's own code runs it, traced on meta tensors beside ComfyUI's port (round 25, etune35).

Measured row lightvae-readme-wan21-vae-bf16-decode-832x480x81-h100 (benchmarks/data/diffusion_measured.json) is the
ComfyUI-LightVAE README's 'Decode Memory' of the official Wan 2.1 VAE, run through LightX2V's WanVAE (the Wan team's
causal VAE: lightx2v/models/video_encoders/hf/wan/vae.py). This builds that file's WanVAE_ (dim 96, z_dim 16) at the
commit the row names and ComfyUI's comfy.ldm.wan.vae.WanVAE, both bf16 on the meta device, and traces decode() of the
832x480x81 latent (21 latent frames) with gpu_garden's tracer (memory/trace/dispatch.py): allocated peak (weights
included), activations at the peak, and the tracer's caching-allocator reserved peak. No cuDNN workspace (meta).

    COMFYUI_PYTHON benchmarks/trace_wan_runner_decode.py --comfyui DIR --lightx2v GITDIR [--commit 2ebc14d2]

Needs ComfyUI's Python (torch, einops) and a LightX2V git checkout or mirror (read with git show)."""
import argparse
import subprocess
import sys
import types
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
import torch  # noqa: E402

from memory.trace import dispatch  # noqa: E402
from memory.trace.comfy_checkout import import_comfy  # noqa: E402
from results import save  # noqa: E402

SIZE = (832, 480, 81)
LX_FILE = "lightx2v/models/video_encoders/hf/wan/vae.py"


def lightx2v_vae(gitdir, commit):
    src = subprocess.run(["git", "-C", gitdir, "show", f"{commit}:{LX_FILE}"], check=True, capture_output=True,
                         text=True).stdout
    sys.modules.setdefault("loguru", types.SimpleNamespace(logger=None))   # imported, not used by the decode
    for m in ("lightx2v", "lightx2v.utils", "lightx2v.utils.utils"):
        sys.modules.setdefault(m, types.ModuleType(m))
    sys.modules["lightx2v.utils.utils"].load_weights = None
    ns = {"__name__": "lightx2v_wan_vae"}
    exec(compile(src, LX_FILE, "exec"), ns)
    with torch.device("meta"):  # WanVAE's _video_vae: WanVAE_(dim=96, z_dim=16, dim_mult [1,2,4,4], ...) in dtype
        vae = ns["WanVAE_"](dim=96, z_dim=16, dim_mult=[1, 2, 4, 4], num_res_blocks=2, attn_scales=[],
                            temperal_downsample=[False, True, True])
    vae = vae.to(torch.bfloat16).eval().requires_grad_(False)
    return vae, (lambda z: vae.decode(z, [0, 1]))


def comfyui_vae(comfyui_dir):
    import_comfy(comfyui_dir)
    from comfy.ldm.wan.vae import WanVAE
    with torch.device("meta"):
        vae = WanVAE(dim=96, z_dim=16)
    vae = vae.to(torch.bfloat16).eval().requires_grad_(False)
    return vae, vae.decode


def trace(vae, fn):
    w, h, f = SIZE
    z = torch.empty(1, 16, 1 + (f - 1) // 4, h // 8, w // 8, dtype=torch.bfloat16, device="meta")
    r = dispatch.run(fn, (z,), module=vae)
    return {"peak_allocated_bytes": r["peak"], "weights_bytes": r["weights"], "activations_peak_bytes": r["activations_peak"],
            "reserved_peak_bytes": r["allocator"]["reserved_peak"], "peak_at": f"{r['at']['module']} {r['at']['op']}"}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--comfyui", required=True)
    ap.add_argument("--lightx2v", required=True, help="a LightX2V git directory (checkout or bare mirror)")
    ap.add_argument("--commit", default="2ebc14d2")
    a = ap.parse_args(argv)
    out = {"size": "x".join(map(str, SIZE)), "dtype": "bf16", "lightx2v_commit": a.commit,
           "wan_runner": trace(*lightx2v_vae(a.lightx2v, a.commit)), "comfyui": trace(*comfyui_vae(a.comfyui))}
    for k in ("peak_allocated_bytes", "reserved_peak_bytes"):
        out["wan_runner"][k.replace("_bytes", "_gib")] = round(out["wan_runner"][k] / 2**30, 3)
        out["comfyui"][k.replace("_bytes", "_gib")] = round(out["comfyui"][k] / 2**30, 3)
    out["wan_runner_over_comfyui_allocated"] = round(out["wan_runner"]["peak_allocated_bytes"]
                                                     / out["comfyui"]["peak_allocated_bytes"] - 1, 4)
    for who in ("wan_runner", "comfyui"):
        print(f"{who:11} allocated {out[who]['peak_allocated_gib']:.2f} GiB, reserved {out[who]['reserved_peak_gib']:.2f} GiB"
              f" at {out[who]['peak_at']}")
    save("wan_runner_decode_trace", "COMFYUI_PYTHON benchmarks/trace_wan_runner_decode.py --comfyui DIR --lightx2v GITDIR", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
