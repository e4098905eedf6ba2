"""Task kv62: vLLM's profile item count with chunked prefill off (docs/kv-accuracy.md "Task kv62"; vLLM main history
read through a fork, multimodal/encoder_budget.py MultiModalBudget._get_max_items). With enable_chunked_prefill false
the decoder side's requests become min(max_num_seqs, max_num_batched_tokens // T); the count is max(1, min(budget // T,
requests x max(1, min(limit, max_model_len // T)))), budget = max(max_num_batched_tokens, T). That cap never changes the
count, so kv keeps one formula (vllm_activation.profile_items) and no chunked-prefill switch. Every figure by hand."""
import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import vllm_activation as VA
from gpu_garden.memory.units import GiB


def _vllm_count(tokens, max_batched, max_seqs, max_model_len, limit, chunked):
    """vLLM's _get_max_items as read (transcribed, not kv's code): the encoder budget's items against the decoder's,
    the request count capped by max_num_batched_tokens // T when chunked prefill is off."""
    budget = max(max_batched, tokens)
    per_prompt = max(1, min(limit, max_model_len // tokens))
    reqs = max_seqs if chunked else min(max_seqs, max_batched // tokens)
    return max(1, min(budget // tokens, reqs * per_prompt))


# (T, max_num_batched_tokens, max_num_seqs, max_model_len, image limit) -> the count, worked by hand below
CASES = [
    # row 727 (Qwen3-VL-Embedding-2B, vLLM 0.11.0, chunked prefill off) at kv's dummy image, 12,544 tokens: the budget
    # is max(8192, 12544) = 12544, 12544 // 12544 = 1; off, requests min(64, 8192 // 12544 = 0) = 0, max(1, 0) = 1
    ((12544, 8192, 64, 8192, 1), 1),
    # the same run with a 1,280-token image: 8192 // 1280 = 6 (7 x 1280 = 8960 > 8192), one image a prompt, 64 prompts:
    # min(6, 64) = 6; off, requests min(64, 6) = 6, min(6, 6 x 1) = 6 (the 6 row 727's log prints)
    ((1280, 8192, 64, 8192, 1), 6),
    # Gemma 3's 256-token image, 4 sequences, no limit: 8192 // 256 = 32, 32 a prompt (8192 // 256), min(32, 4 x 32) =
    # 32; off, requests min(4, 32) = 4, min(32, 128) = 32
    ((256, 8192, 4, 8192, 999), 32),
    # row 880's shape: 2048 // 256 = 8, one image a prompt, 256 sequences: 8; off, min(256, 8) x 1 = 8
    ((256, 2048, 256, 4096, 1), 8),
    # two sequences of one image each: min(32, 2 x 1) = 2; off, min(2, 32) x 1 = 2
    ((256, 8192, 2, 8192, 1), 2),
]


@pytest.mark.parametrize("args,count", CASES)
def test_profile_items_by_hand(args, count):
    assert VA.profile_items(*args) == count


@pytest.mark.parametrize("args,count", CASES)
def test_the_transcription_agrees_with_the_hand_figures_either_way(args, count):
    # the reference below is the read source, checked against the same hand figures with the cap on and off
    assert _vllm_count(*args, chunked=True) == count
    assert _vllm_count(*args, chunked=False) == count


def test_chunked_prefill_off_never_changes_the_count():
    # why kv has no switch: over T, batched tokens, sequences, model length and limit the capped count is kv's
    for tokens in (1, 64, 256, 1024, 1280, 3025, 4096, 8192, 12544, 16384):
        for batched in (512, 2048, 4096, 8192, 16384, 65536):
            for seqs in (1, 2, 5, 64, 256, 1024):
                for model_len in (2048, 8192, 32768, 131072):
                    for limit in (1, 2, 4, 16, 999):
                        kv = VA.profile_items(tokens, batched, seqs, model_len, limit)
                        assert kv == _vllm_count(tokens, batched, seqs, model_len, limit, chunked=False), \
                            (tokens, batched, seqs, model_len, limit)


def test_row_727_prices_one_dummy_image():
    # Qwen3-VL-Embedding-2B read as Qwen3-VL-2B: no preprocessor max_pixels, so 12,845,056 pixels / 16^2 = 50,176
    # patches (12,544 tokens after the 2 x 2 merge); one item (above) x 50,176 x 1024 wide x 32 B = 1,644,167,168 B =
    # 1.53125 GiB for the plain tower; since kv65 x 15,424 / 13,888 for the deepstack features (3 levels x 2048 / 4 =
    # 1,536 values a patch beside the plain tower's 1,536 pixels + 1024 + 64 + 11 x 1024 = 13,888): 1,826,010,541 B
    spec = llm.describe(model="Qwen/Qwen3-VL-Embedding-2B")
    peak = VA.encoder_peak(spec, max_model_len=8192, max_batched=8192, max_seqs=64, limits={"image": 1, "video": 0},
                           version=(0, 11, 0))
    assert 1644167168 / GiB == 1.53125
    assert peak == 1644167168 * 15424 // 13888 == 1826010541
