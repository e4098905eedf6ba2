"""Where ComfyUI 0.8.0 runs the text encode (fix68d, issue 15 item 1): text_encoder_device() (comfy/model_management.py:
875-884) is the CPU under --lowvram / --novram and where should_use_fp16(prioritize_performance=False) is False (a
Pascal card on Linux, :1397-1403; a GTX 16xx the live host tells apart, the CLI only by --text-encoder-device). There
CLIPTextEncode loads the CLIP on the CPU (comfy/sd.py:111 CLIP.__init__: load_device = text_encoder_device()), and a
CLIP vision model too (comfy/clip_vision.py:42,57): the text-encode phase holds nothing of theirs on the card, their
weights are in host RAM. The estimate counts them as its text_encoders "cpu" (CLIPLoader's device: cpu, which it
models already), and says which device it took (policy text_encoder_device)."""
from . import te_loaded

MODES = ("gpu", "cpu")  # --text-encoder-device
# side models (side_models.SIDE) that load on text_encoder_device() as the CLIP does: AudioEncoderModel
# (comfy/audio_encoders/audio_encoders.py:12 load_device = text_encoder_device(), rev68d F4)
ON_TE_DEVICE = ("AudioEncoderLoader",)


def apply(pol: dict) -> None:
    """Set pol["text_encoder_device"], "gpu" or "cpu": ComfyUI's text_encoder_device() as the node reads it (policy
    te_on_device), else te_loaded.on_device's guess from the card; the CPU on MPS (SHARED: :884) and on a CPU run; a
    diffusers / wan runner's pipeline device is the GPU. Where it is the CPU on a ComfyUI run on a GPU
    (te_loaded.DEVICES) the text encoders are the estimate's "cpu": they never load on the card. MPS keeps its figures
    (its CPU RAM is the memory the budget is)."""
    dev, comfy = pol.get("device", "cuda"), pol.get("runner", "comfyui") == "comfyui"
    cpu = dev in ("mps", "cpu") if not comfy or dev not in te_loaded.DEVICES else not te_loaded.on_device(pol)
    pol["text_encoder_device"] = "cpu" if cpu and (comfy or dev == "cpu") else "gpu"
    if cpu and comfy and dev in te_loaded.DEVICES and pol.get("text_encoders") in ("unload", "resident"):
        pol["text_encoders"] = "cpu"


def host_cpu(pol: dict) -> bool:
    """Whether the host puts every text encoder (and CLIP vision) on the CPU, not one CLIPLoader's device: cpu."""
    return pol.get("text_encoder_device") == "cpu" and pol.get("device", "cuda") in te_loaded.DEVICES


def off_card(pol: dict, side_model: dict) -> bool:
    """Whether this side model is off the card because the host runs text_encoder_device() on the CPU (ON_TE_DEVICE)."""
    return side_model.get("loader") in ON_TE_DEVICE and host_cpu(pol)
