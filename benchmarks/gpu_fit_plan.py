"""gpu_fit_to_card.py's planned runs, the part that needs no GPU (--dry-run prints them): the families with their
bundled layouts, zero conditioning shapes, sampler cfg and sizes, the latent shape of a size, and each run's cap
from the layouts, our memory_required and the reserve."""
import math
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GiB = 1024 ** 3

# family -> bundled layouts, zero conditioning shapes, sampler cfg, the sizes run (w, h, frames)
FAMILIES = {
    "sdxl": {"checkpoint": "sdxl_sd_xl_base_1.0", "vae": "vae_sdxl_vae", "cfg": 7.0, "context": (77, 2048),
             "pooled": 1280, "sizes": [(1024, 1024, 1), (1536, 1536, 1)]},
    "flux1": {"unet": "flux_flux1-dev", "vae": "vae_flux_ae", "cfg": 1.0, "context": (256, 4096), "pooled": 768,
              "guidance": 3.5, "sizes": [(1024, 1024, 1), (1536, 1536, 1)]},
    "wan21": {"unet": "wan_wan2.1_t2v_1.3B_fp16", "vae": "vae_wan_2.1_vae", "cfg": 5.0, "context": (512, 4096),
              "sizes": [(832, 480, 33), (832, 480, 81)]},
    # not in the default fit runs: --decode-peaks measures its VAE at the model's own 1280x704, 121 frames
    "wan22": {"unet": "wan_wan2.2_ti2v_5B_fp16", "vae": "vae_wan2.2_vae", "cfg": 5.0, "context": (512, 4096),
              "sizes": [(1280, 704, 121)]},
}
# --cpu-smoke only: the same flow on the CPU with SD1.5 (checks the script end to end without a GPU)
SMOKE = {"sd1": {"checkpoint": "sd15_v1-5-pruned-emaonly-fp16", "cfg": 7.0, "context": (77, 768), "sizes": [(64, 64, 1)]}}


def load_pack():
    sys.path.insert(0, str(REPO / "tests"))
    from support.pack import load_pack as _load

    _load()
    from gpu_garden.memory import units
    from gpu_garden.memory.estimate import layouts

    return layouts, units


def latent_shape(family, w, h, frames):
    from gpu_garden.memory.estimate import spec

    sp = spec.family(family)
    return ([1, sp["ch"], (frames - 1) // sp["t"] + 1, h // sp["s"], w // sp["s"]] if sp["t"]
            else [1, sp["ch"], h // sp["s"], w // sp["s"]])


def planned_runs(layouts, families, over, reserve):
    """[(family, (w, h, frames), latent shape, cond batch, weights, our memory_required, cap)] from the layouts."""
    from gpu_garden.memory.estimate import families as fams
    from gpu_garden.memory.fit import plan as fit_plan

    runs = []
    for family in families:
        spec = FAMILIES[family]
        name = spec.get("checkpoint") or spec["unet"]
        table = layouts.table(name)
        if "checkpoint" in spec:
            table = next(c["table"] for c in fams.split_components(table, name) if c["role"] == "diffusion_model")
        from gpu_garden.memory.estimate import weights

        w = weights.resident_bytes(table)
        arch = fams.detect_family(table).get("arch")
        cb = 1 if math.isclose(spec["cfg"], 1.0) else 2
        for size in spec["sizes"]:
            shape = latent_shape(family, *size)
            req = fit_plan.sample_memory_required(family, shape, "bf16" if family == "flux1" else "fp16", cb, arch)
            cap = int((w + req + reserve) * (1 - over) / (GiB // 4)) * (GiB // 4)
            runs.append({"family": family, "size": size, "latent": shape, "cond_batch": cb, "weights": w,
                         "memory_required": req, "cap": cap})
    return runs
