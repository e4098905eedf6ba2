"""diffusers' enable_sequential_cpu_offload (offload sequential, runner diffusers): accelerate's cpu_offload hooks empty
the CUDA cache at every weight move (accelerate.utils.modeling.set_module_tensor_to_device ends in
clear_device_cache() unless the target is the CPU), so the decode keeps no reserved slack: peak_device is the context,
the streamed layer and the allocated decode. Bytes written out from vae.DIFFUSERS_KL_DECODE and the FLUX AE's shapes;
keeping the slack, or dropping it under model offload, breaks a test here."""
from gpu_garden.memory.estimate import families, formula as E, layouts, vae as V

GiB = 1 << 30


_table = layouts.table


def _flux(offload, runner="diffusers"):
    comps = [c for n, f in (("flux_flux1-dev", "flux1"), ("te_t5xxl_fp16", "t5"), ("vae_flux_ae", "vae"))
             for c in families.split_components(_table(n), f)]
    return E.estimate(comps, 1024, 1024, cfg=False, policy={"_no_knobs": True, "offload": offload, "runner": runner,
                                                             "vae_dtype": "bf16", "vae_decode": "untiled"})


def test_sequential_under_diffusers_decodes_without_reserved_slack():
    seq = _flux("sequential")
    bd = seq["breakdown"]["vae_decode"]
    acts = 975 * 1024 * 1024 * 2 + 3 * 1024 * 1024 * 4  # DIFFUSERS_KL_DECODE per pixel, bf16, + the fp32 output
    assert bd["activations"] == acts
    assert bd["allocator_margin"] == int(0.05 * acts)  # the 5 % margin only: no (2360 - 975) x pixels slack
    assert bd["cached_slack"] == 0
    # the largest FLUX AE layer streamed (a 512 x 512 x 3 x 3 conv; fp32 in this layout's file, bf16 as the pipeline holds
    # and streams it: from_pretrained's torch_dtype, accelerate's cast to the module's dtype) + the context
    assert bd["weights"] == 512 * 512 * 3 * 3 * 2
    assert seq["peak_device"] == bd["weights"] + acts + int(0.05 * acts) + E.CUDA_CONTEXT
    assert seq["peak_device"] < 2.5 * GiB  # with the slack it would be 5.2 GiB


def test_model_offload_and_comfyui_sequential_keep_the_slack():
    slack = (V.DIFFUSERS_KL_SLACK) * 1024 * 1024 * 2
    model = _flux("model")["breakdown"]["vae_decode"]
    assert model["allocator_margin"] - int(0.05 * model["activations"]) == slack
    # ComfyUI --novram streams weights without emptying the cache: no accelerate hooks, nothing dropped
    comfy = _flux("sequential", runner="comfyui")
    assert not any("accelerate" in a for a in comfy["assumptions"])
    assert any("accelerate empties the CUDA cache" in a for a in _flux("sequential")["assumptions"])


def test_comfyui_sequential_keeps_the_wan_decode_cache():
    comps = [c for n, f in (("wan_wan2.1_t2v_1.3B_fp16", "wan21"), ("vae_wan_2.1_vae", "vae"))
             for c in families.split_components(_table(n), f)]
    e = E.estimate(comps, 832, 480, 33, cfg=False, policy={"_no_knobs": True, "offload": "sequential",
                                                          "vae_dtype": "bf16", "vae_decode": "untiled"})
    # ComfyUI's causal Wan decode leaves WAN_DECODE_CACHED elements per output pixel cached (bf16), --novram or not
    assert e["breakdown"]["vae_decode"]["cached_slack"] == V.WAN_DECODE_CACHED * 832 * 480 * 2
