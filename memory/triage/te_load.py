"""(fix67b, aud67b #6) A text encoder's load that failed: the weight-loading evidence is the text encoder's (issue 14, class 2).

A traceback through a weight move (nn.Module.to / convert, ComfyUI's model_patcher load), ComfyUI's "loaded partially"
and a source line that places weights (`encoder.model.to(device)`) say that weights were being placed. Where the failing
node is a text encoder's, the frames show the text encoder (comfy/sd.py's CLIP, comfy/text_encoders/), or ComfyUI's last
"Requested to load" named a text encoder with no sampling since, those weights are the text encoder's: the answer is the
text-encoder cause (its guide: the encoder in fp8 or GGUF, or on the CPU), and the same evidence no longer also counts for
the generic weights cause, which made the fuller log read less sure than the node alone (the panel's node-only input)."""


SAMPLER_FILES = ("comfy/sample.py", "comfy/sampler_helpers.py", "comfy/samplers.py")


def te_loading(x) -> bool:
    """The failing node, the frames or ComfyUI's load in progress name a text encoder. (fix67h, rev67c F2) Not where the
    sampler is on the stack (comfy/sample.py, sampler_helpers.py, samplers.py): KSampler -> _prepare_sampling ->
    load_models_gpu loads the U-Net, whatever a stale node id or the last "Requested to load" says (a model already
    listed reloads with no line: model_management.py:650-656); ComfyUI's load in progress is case.py's x.loading_cause,
    with its guards (no node, no frame cause, sampling not started)."""
    if any(p.replace("\\", "/").endswith(SAMPLER_FILES) for p, _ in x.frames):
        return False
    return x.node_cause == "text-encoder" or x.frame_cause == "text-encoder" or x.loading_cause == "text-encoder"


def weights_evidence(x) -> bool:
    """Evidence the weights rows read (a loading frame, a partial load, a weight-placing source line) on a text encoder's load."""
    return te_loading(x) and bool(x.frame_loading or x.partial_load or x.src_cause == "weights-exceed-vram")
