"""Review 20's triage findings (task fix20a): each test failed before its fix. Logs written from the review's examples
(/tmp/rv20), in the runtimes' own formats; numbers made up, expected values by hand."""
from gpu_garden.memory.triage.categories import frame_category


def test_a_torchtune_frame_reads_the_same_under_site_packages_and_dist_packages():
    """Only PyTorch's own frames ("/torch/") name no cause: torchtune (and torchvision, torchaudio, torchao) is a library
    read like any other, wherever pip put it (review 20: "site-packages/torch" also matched "site-packages/torchtune")."""
    for where in ("/home/user/.venv/lib/python3.11/site-packages", "/usr/local/lib/python3.10/dist-packages"):
        assert frame_category(f"{where}/torchtune/modules/attention_utils.py", "_sdpa_or_flex_attention") == "activations", where
        assert frame_category(f"{where}/torchvision/models/vision_transformer.py", "self_attention") == "activations", where
        assert frame_category(f"{where}/torch/nn/functional.py", "scaled_dot_product_attention") is None, where
