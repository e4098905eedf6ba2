"""What ComfyUI's node names, model classes and traceback frames say about the phase that failed.

Each function maps one clue to a cause (or None); the rules table (rules.py) decides how much that clue weighs.
"""
import re


# encode nodes whose encoder is not the VAE: text and prompts, CLIP vision, faces, IP-Adapter embeds, audio
_NOT_VAE_ENCODE = ("text", "clip", "prompt", "vision", "face", "ipadapter", "t5", "llm", "caption", "audio", "i2vencode")


def node_category(node_type: str | None):
    if not node_type:
        return None
    n = node_type.lower()
    if "vae" in n or "decode" in n and "text" not in n:
        return "vae-decode"
    if "textencode" in n or "cliptextencode" in n or n.startswith("clip") and "encode" in n or "textencoder" in n:
        return "text-encoder"
    # the text-encoder loaders (CLIPLoader, DualCLIPLoader, TripleCLIPLoader, their GGUF variants, UMT5/T5 loaders):
    # what does not fit is the text encoder, not the diffusion model (CLIPVisionLoader is not one of them)
    if "cliploader" in n or "clipmodelloader" in n or "umt5" in n or "t5" in n and "load" in n:
        return "text-encoder"
    # any other encode node turns pixels into latents through the VAE (VAEEncode, the wrappers' WanVideoEncode, HyVideoEncode,
    # CogVideoImageEncode, ToraEncodeTrajectory): the VAE at this resolution and frame count, fixed by tiling the encode
    if "encode" in n and not any(w in n for w in _NOT_VAE_ENCODE):
        return "vae-decode"
    # ComfyUI's image-to-video conditioning nodes (comfy_extras nodes_wan/_lt/_hunyuan/_cosmos: WanImageToVideo, LTXVImgToVideo,
    # HunyuanImageToVideo, CosmosImageToVideoLatent, WanVaceToVideo): their only GPU work is vae.encode of the start frames
    if "tovideo" in n:
        return "vae-decode"
    # a loader before the phase words: UpscaleModelLoader loads weights (the upscale itself is ImageUpscaleWithModel), and
    # kijai's DownloadAndLoad*Model nodes fetch and place a model's weights
    if "loader" in n or n.startswith(("load", "downloadandload")):
        return "weights-exceed-vram"
    if "sampler" in n or "sample" in n or "upscale" in n or "detailer" in n:
        return "activations"
    return None


def model_category(cls: str):
    c = cls.lower().replace(" ", "").replace("_", "")
    if c in ("autoencoderkl", "autoencodingengine", "vae", "wanvae", "videovae") or "vae" in c or c.startswith("autoencod"):
        return "vae-decode"
    if "clip" in c or "temodel" in c or "textencoder" in c or c.endswith("tencoder") or "t5" in c:
        return "text-encoder"
    return "activations"


# a file or folder named for a VAE: "/vae.py", "/vae/", "video_vae_v3/", "wan_vae.py", "vae_tiling.py"
_VAE_PATH = re.compile(r"(?:^|[/_])vae(?:[/_.]|\d|$)")


_WEIGHTS_FUNC = re.compile(r"(?:get|load)_\w{0,30}weights?\w{0,30}")


# (round 117) vLLM's functions that allocate the KV cache's own tensors: the V1 model runner's initialize_kv_cache_tensors and
# _allocate_kv_cache_tensors (gpu_model_runner.py: one torch.zeros per layer group, num_blocks x page size, the blocks vLLM
# chose or was told: num_gpu_blocks_override, which its cudagraph profiling's minimal cache sets from max_num_seqs), and V0's
# CacheEngine._allocate_kv_cache (cache_engine.py)
VLLM_KV_ALLOC = ("_allocate_kv_cache_tensors", "initialize_kv_cache_tensors", "_allocate_kv_cache")


def frame_category(path: str, func: str):
    p = path.replace("\\", "/").lower()
    if func == "setup_caches":
        # the KV cache preallocated for the maximum batch and sequence length before any token (gpt-fast's model.py and the
        # codebases built on it, fish-speech's text2semantic, torchtune's TransformerDecoder): read before the torch
        # frames' exclusion below
        return "kv-cache"
    if func in VLLM_KV_ALLOC and "/vllm/" in "/" + p:
        return "kv-cache"       # (round 117) vLLM allocating the KV cache's own tensors (VLLM_KV_ALLOC)
    if p.endswith("torch/nn/modules/module.py") and func in ("convert", "_apply", "to", "cuda"):
        return "weights-exceed-vram"      # model.to(device): moving the weights
    if "/torch/nn/modules/" in p and func == "__init__":
        return "weights-exceed-vram"      # a layer built on the device (device= or a device context): its weights allocated
    if "/accelerate/" in p and func == "prepare_model":
        return "weights-exceed-vram"      # accelerator.prepare(model): the model placed on the device, before any step
    # PyTorch's and accelerate's own frames name no cause ("/torch/": under site-packages and dist-packages alike; not
    # torchtune, torchvision, torchaudio or torchao, libraries whose frames are read like any other)
    if "/torch/" in p or "/accelerate/" in p:
        return None
    # a model class's own cuda() (moving its weights), a weights module or a weights getter (TGI's utils/weights.py
    # get_multi_weights_col, vLLM's load_weights, Megatron's get_*_weights)
    if func == "cuda" or p.endswith("/weights.py") or _WEIGHTS_FUNC.fullmatch(func):
        return "weights-exceed-vram"
    if func in ("load_models_gpu", "model_load", "partially_load", "patch_weight_to_device", "_load_list", "load_state_dict",
                "from_pretrained", "_load_pretrained_model", "_load_state_dict_into_meta_model", "set_module_tensor_to_device",
                "load_diffusion_model", "load_checkpoint_guess_config") or ("model_patcher.py" in p and func in ("load", "patch_model")):
        return "weights-exceed-vram"
    if any(w in p for w in ("sd1_clip.py", "text_encoders/", "clip_model.py", "/t5.py", "sdxl_clip", "flux_clip", "hunyuan_video_clip")) \
            or func in ("encode_token_weights", "encode_from_tokens", "encode_from_tokens_scheduled", "load_clip", "load_text_encoder_state_dicts"):
        return "text-encoder"
    if any(w in p for w in ("diffusionmodules/model.py", "autoencoder", "/wan/vae", "causal_conv", "taesd")) or _VAE_PATH.search(p) \
            or (p.endswith("comfy/sd.py") and func in ("decode", "decode_tiled", "decode_tiled_", "decode_tiled_3d", "encode", "encode_tiled")) \
            or func in ("vae_decode", "decode_latents", "decode_tiled"):
        return "vae-decode"
    if any(w in p for w in ("samplers.py", "k_diffusion", "sampler_helpers", "model_base.py", "ldm/modules/attention.py",
                            "openaimodel.py", "comfy/ldm/", "model_patcher.py")) or func in ("sample", "apply_model", "sampling_function"):
        return "activations"
    if func in ("apply_rope", "rope") or "attention" in func.lower():
        return "activations"              # attention (and its rotary embedding): where a forward pass's working tensors peak
    if _LOSS_FUNC.search(func):
        # a loss over the batch's outputs (transformers' ForCausalLMLoss casting logits to float32, a compute_loss): tokens x
        # vocabulary or pixels x classes, one of a forward pass's largest working tensors, not the weights nor pinned RAM
        return "activations"
    return None


# "loss" (or its plural "losses") as a word part of a function's name: split by _ or ending it (compute_loss, loss_fn,
# train_loss, compute_losses) or a CamelCase part (ForCausalLMLoss, MultiLosses); not inside another word (lossless,
# gloss, floss)
_LOSS_FUNC = re.compile(r"(?:^|_)loss(?:es)?(?=$|_|[A-Z])|Loss(?:es)?(?=$|_|[A-Z])")


# a validation or evaluation pass by its function's name: validate(), evaluate(), eval_epoch(), run_eval(), a Lightning
# validation_step/test_step. Outside torch.no_grad() (or inference_mode) its forward keeps each batch's autograd graph
_EVAL_FUNC = re.compile(r"validat\w{0,30}|evaluat\w{0,30}|eval(?:_\w{1,30})?|\w{1,30}_eval|val_(?:step|epoch|loop|one_epoch)|"
                        r"(?:run|do)_val\w{0,30}|test_(?:step|epoch)\w{0,20}")


def eval_function(func: str) -> bool:
    return bool(func) and bool(_EVAL_FUNC.fullmatch(func))


def nodes_py_category(path: str, func: str):
    """The node entry point: ComfyUI's nodes.py functions name the node (VAEDecode.decode, KSampler.sample ...)."""
    p = path.replace("\\", "/").lower()
    if not p.endswith("nodes.py") and "custom_nodes" not in p and "comfy_extras" not in p:
        return None
    if func in ("decode", "decode_tiled", "vae_decode"):
        return "vae-decode"
    if func in ("sample", "common_ksampler", "sample_custom"):
        return "activations"
    if func in ("encode",) and "clip" in p or func == "load_clip":
        return "text-encoder"
    return None



# The source line Python prints under a frame names what the code was doing, in any program: a loader
# building a text encoder, a pipeline decoding latents, a script moving its model to the GPU, a training step.
# Calls only (a name followed by "("), so a comment or an assignment of a plain value says nothing.
_SRC = (
    ("text-encoder", re.compile(r"(?i)\b(?:load_clip|load_text_encoder\w{0,30}|CLIPLoader\w{0,30}|T5EncoderModel|UMT5\w{0,30}|T5Encoder\w{0,30}|"
                                r"CLIPTextModel\w{0,30}|encode_prompt|get_learned_conditioning|encode_from_tokens\w{0,30}|encode_token_weights|"
                                r"(?:text_encoder|clip|cond_stage_model)\w{0,30}\.(?:encode\w{0,30}|to|cuda|load_sd|load_model))\(|"
                                r"\btext_encoders?(?:_\d)?\(")),
    ("vae-decode", re.compile(r"(?i)(?:vae\w{0,30}|\bfirst_stage_model)\.(?:decode|tiled_decode|decode_tiled\w{0,30})\(|"
                              r"\b(?:decode_first_stage|decode_latents|vae_decode)\(|\.decode\(\s*(?:latents?|z|samples?|x_0|x0)\b")),
    ("training", re.compile(r"\.backward\(|\boptimi[sz]er\w{0,30}\.step\(|\baccelerator\.backward\(|\btrainer\.train\(|\bscaler\.scale\(")),
    # ((round 99) an autoencoder moved whole, "autoencoder.to(device)", a latent-diffusion trainer's frozen VAE: a model's weights)
    ("weights-exceed-vram", re.compile(r"\bfrom_(?:pretrained|single_file)\(|\bload_state_dict\(|\btorch\.load\(|\bload_(?:checkpoint|model|weights)\w{0,30}\(|"
                                       r"\b(?:model|pipe|pipeline|net|unet|transformer|generator|upsampler|module|autoencoder)\w{0,30}(?:\.\w{1,30}(?:\(\))?){0,3}\.(?:to|cuda|half)\(|"
                                       r"\b(?:weight|param\w{0,10}|tensor)\.data\.(?:to|cuda)\(|\bself\.(?:cuda|half)\(\)|"
                                       r"\bload_weights?\(|\w{0,30}torch_load\w{0,30}\(|\baccelerator\.prepare(?:_model)?\(|\.prepare_model\(")),
    # (round 111) a model class built from a saved checkpoint, "Transformer.from_checkpoint(path, "cuda")", Lightning's
    # "Model.load_from_checkpoint(path)": its weights created or loaded on the device (a keyword such as
    # resume_from_checkpoint= is no call)
    ("weights-exceed-vram", re.compile(r"\b(?:load_)?from_checkpoint\(")),
    # a call that passes or extends an autoregressive KV cache (decoding token by token): what grows is the cache, batch x length
    ("kv-cache", re.compile(r"\b(?:k_cache|v_cache|kv_cache|key_cache|value_cache|past_key_values?)\b")),
)


def source_category(line: str):
    """What a traceback's source line says the code was doing: a cause, "training", or None."""
    if not line or "(" not in line:
        return None
    for cat, rx in _SRC:
        if rx.search(line):
            return cat
    return None
