"""Task fix20c: review20b's VAE finding. DIFFUSERS_KL_DECODE_DTYPE ({"fp16": 1216}) and DIFFUSERS_KL_DECODE_ARCH are
keyed by the estimate's dtype names; a dtype given as torch names it ("float16", "torch.float16", torch.float16, as the
fit node's str(dtype) does) missed them and fell back to DIFFUSERS_KL_DECODE (-20 %). Names go through phases.dtype_name,
the normaliser dtype_bytes uses."""
import pytest

from gpu_garden.memory.estimate import phases
from gpu_garden.memory.estimate import vae as V

SHAPE = [1, 4, 128, 128]  # SDXL 1024 px
HW = 1024 * 1024


@pytest.mark.parametrize("name", ["float16", "torch.float16", "FP16", "Float16"])
def test_diffusers_kl_decode_reads_the_fp16_row_whatever_the_name(name):
    # InvokeAI's fp16 figure: 1216 elements per output pixel x 2 bytes + the fp32 3-channel output (12 bytes a pixel)
    assert V.vae_decode_bytes("kl", SHAPE, name, runner="diffusers") == 1216 * HW * 2 + 3 * HW * 4
    assert (V.allocator_slack_bytes("kl", SHAPE, name, runner="diffusers")
            == (V.DIFFUSERS_KL_RESERVED - 1216) * HW * 2)


@pytest.mark.parametrize("name,per,b", [("torch.float16", 1763, 2), ("float32", 765, 4), ("torch.float32", 765, 4)])
def test_diffusers_kl_decode_arch_rows_whatever_the_name(name, per, b):
    assert V.vae_decode_bytes("kl", SHAPE, name, runner="diffusers", gpu_arch="pascal") == per * HW * b + 3 * HW * 4


def test_a_torch_dtype_object_names_the_same_row():
    torch = pytest.importorskip("torch")
    assert V.vae_decode_bytes("kl", SHAPE, torch.float16, runner="diffusers") == 1216 * HW * 2 + 3 * HW * 4


def test_dtype_name_and_its_errors():
    assert [phases.dtype_name(d) for d in ("bf16", "bfloat16", "torch.bfloat16", "FLOAT32", 2)] == [
        "bf16", "bf16", "bf16", "fp32", 2]
    assert phases.dtype_bytes("float16") == 2 and phases.dtype_bytes(4) == 4
    with pytest.raises(ValueError, match="unknown compute dtype 'int8'"):
        phases.dtype_name("int8")
