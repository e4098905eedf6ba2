"""The room an untiled video decode needs free on CUDA: one figure for the estimate's out-of-memory fallback test
(vae.phase) and Fit to Card's plan (fit/plan.decode_room), so both say tiled on the same budget (fix68g, audit aud68a
finding 2: at 1280x704x121 on 12-13 GiB the estimate decoded Wan 2.2 untiled at 1.05x while the plan tiled at 1.26x).

CAPPED_ROOM: a margin over the decode's activations (workspace included), where it was measured above
spec.FRAGMENTATION. `gpu_fit_to_card.py --decode-need` bisects the smallest room a decode runs in with the card capped:
on the third GPU run (H200, bf16, session 36) the Wan decoders needed 1.23-1.26x their activations under both PyTorch's
native allocator and cudaMallocAsync (Wan 2.1 at 832x480x33 and x81, Wan 2.2 at 1280x704x121), where their allocated
peak is about 1.05x: the causal chunks' changing sizes fragment what the allocator holds. These six rows are the FIT set
(a regression set; first sight in estimate_first_sight.json, "gpu run 3 2026-12-04"). Not applied to a one-frame decode
(not measured capped) nor off CUDA. The KL decoder needs less than its peak there (cuDNN picks leaner algorithms when
less is free); its figure is kept, since more than one image at a time was not measured."""
from . import spec

CAPPED_ROOM = {"wan21": 0.26, "wan22": 0.26}


def margin(kind, latent_shape, device="cuda", table=None) -> float:
    """The margin over one decode's activations it needs free: CAPPED_ROOM (or `table`) for a measured video VAE
    decoding more than one latent frame on CUDA (device None counts as CUDA), else spec.FRAGMENTATION."""
    video = len(latent_shape) == 5 and int(latent_shape[2]) > 1
    table = CAPPED_ROOM if table is None else table
    return table.get(kind, spec.FRAGMENTATION) if video and (device or "cuda") == "cuda" else spec.FRAGMENTATION
