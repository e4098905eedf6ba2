"""A small HunyuanVideo transformer header (one tensor per kind the family reader needs, the 20 double and 40 single
blocks' largest linears) and its architecture, shared by the estimate tests that size its sampling activations."""
from gpu_garden.memory.estimate import families

HV_ARCH = {"hidden": 3072, "heads": 24, "ffn": 12288, "block": "flux"}


def hv_table():
    t = {"txt_in.individual_token_refiner.blocks.0.norm1.weight": ("BF16", (3072,)), "img_in.proj.weight": ("BF16", (3072, 16, 1, 2, 2))}
    for i in range(20):
        t[f"double_blocks.{i}.img_mlp.fc1.weight"] = ("BF16", (12288, 3072))
    for i in range(40):
        t[f"single_blocks.{i}.linear1.weight"] = ("BF16", (21504, 3072))
    return t


def hv_dit():
    """The table split as the estimate splits a file: the diffusion model's components only."""
    return [c for c in families.split_components(hv_table(), "hunyuan-video") if c["role"] == "diffusion_model"]
