"""web50 item 10: what the sidebar says when NVML cannot load. A CPU-only or AMD host sees this note too, so it says
NVML is for NVIDIA cards before it names the install command, and never asks for it bare."""
from gpu_garden.memory.budget import smi


class Missing(smi.Nvml):
    import_name = "gg_no_such_nvml_module"


def test_missing_nvml_says_it_is_for_nvidia_cards_only():
    module, why = Missing(retry_s=0).get()
    assert module is None
    assert why.startswith("NVML not available: nvidia-ml-py is not installed"), why
    assert "NVIDIA cards only" in why, why
    assert "(NVIDIA GPUs: pip install" not in why, why
