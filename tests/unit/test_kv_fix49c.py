"""fix49c: review rev25's findings on fix49a/dfl49's `gpu-garden kv` changes. S4 the PP no-fit advice names the
heaviest stage only for a 'weights alone' verdict; S5 the PP 'KV pool' line is one stage's pool beside that stage's
tokens, named; further findings below their own comments."""
import json

from gpu_garden.memory import cli


def _text(argv, capsys):
    rc = cli.main(argv)
    return rc, capsys.readouterr().out


def _json(argv, capsys):
    cli.main(argv + ["--json"])
    return json.loads(capsys.readouterr().out)


# S4. Gemma-3-1B at 14,12 (weights worked out in test_kv_fix49a B1): stage 0 1.29 GiB, stage 1 (12 layers + the head)
# 2 x (322,109,184 + 301,989,888 + 1152) + 32 MiB = 1,281,754,880 B = 1.19 GiB. On 1.6 GiB the share is
# 0.92 x 1.6 = 1.47 GiB: both stages' weights pass it, so the verdict is stage 1's weights with its activations, and the
# advice must name stage 1's 1.19 GiB, not stage 0's 1.29 GiB. Breaks if _no_fit takes the heaviest stage always.
def test_pp_advice_names_the_deciding_stage_unless_weights_alone(capsys):
    rc, text = _text(["kv", "--model", "google/gemma-3-1b-it", "--pipeline-parallel-size", "2", "--pp-layer-partition",
                      "14,12", "--vram", "1.6", "--ctx", "4096"], capsys)
    assert rc == 1
    assert "does NOT fit: weights + profile activations, workspaces" in text
    assert ("Weights (1.19 GiB on the deciding pipeline stage: stage 1 of 2, 12 layers + the head) with the profile's "
            "activations and workspaces leave no room for a 256-token cache in 1.60 GiB") in text
    assert "1.29 GiB on the pipeline stage" not in text


# S5. Qwen3-32B at 20,44, fp8 KV: stage 1 holds 44 layers x 8 KV heads x 128 x 2 (K, V) x 1 B = 90,112 B a token. Its
# pool 2,914,081,758 B (--kv-cache-memory's figure, printed as the suggestion) / 90,112 = 32,338.4 tokens, 32,336 in
# whole blocks of 16 = the tokens vLLM prints; 2,914,081,758 B = 2.71 GiB. Rank 0's pool (25.56 GiB) beside them was
# another stage's figure. Breaks if the line prints kv_capacity_bytes under PP.
def test_pp_pool_line_is_the_stage_of_the_printed_tokens(capsys):
    rc, text = _text(["kv", "--model", "Qwen/Qwen3-32B", "--runtime", "vllm", "--runtime-version", "0.13.0",
                      "--pipeline-parallel-size", "2", "--pp-layer-partition", "20,44", "--vram", "48", "--ctx", "22016",
                      "--kv-dtype", "fp8", "--gpu-memory-utilization", "0.95"], capsys)
    assert rc == 0
    assert ("KV pool 2.71 GiB on stage 1 of 2, 44 layers + the head (the fewest tokens): vLLM would print "
            "\"GPU KV cache size: 32,336 tokens;") in text
    assert "KV pool 25.56 GiB" not in text
