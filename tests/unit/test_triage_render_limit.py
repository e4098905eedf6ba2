"""A 'limit' figure is labelled PyTorch's only when PyTorch printed it (tune131 noticed the XLA rematerialization
target shown as "PyTorch limit")."""
from gpu_garden.memory.triage import render

GiB = 1 << 30


def test_torch_limit_keeps_its_name():
    out = render.render_numbers({"limit": 20 * GiB}, "PyTorch", "torch.cuda_async")
    assert out.startswith("PyTorch limit 20")


def test_another_runtimes_limit_is_not_called_pytorchs():
    out = render.render_numbers({"required": 93 * GiB, "limit": 84 * GiB}, "PyTorch", "xla.remat")
    assert "PyTorch" not in out and "limit 84" in out


def test_no_kind_keeps_the_old_label():
    assert render.render_numbers({"limit": 2 * GiB}).startswith("PyTorch limit")
