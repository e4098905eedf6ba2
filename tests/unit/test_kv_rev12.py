"""rev12 S2 (session 46, fix13): the chunk size each Mamba-2 config class vLLM starts gives when a config.json has none,
read in transformers 5.25.0 (models/<arch>/configuration_<arch>.py): NemotronHConfig chunk_size 128 (line 130),
GraniteMoeHybridConfig mamba_chunk_size 256 (line 102), BambaConfig mamba_chunk_size 256 (line 81), FalconH1Config
mamba_chunk_size 256 (line 84), Mamba2Config chunk_size 256 (line 87), Zamba2Config chunk_size 256 (line 88). fix12 had
the first two only; the Mamba-1 classes (Mamba, Jamba, FalconMamba, Zamba) have none."""


def test_every_mamba2_class_default_chunk():
    from gpu_garden.memory.llm.params import MAMBA2_CHUNK_DEFAULT
    assert dict(MAMBA2_CHUNK_DEFAULT) == {"nemotron_h": 128, "granitemoehybrid": 256, "bamba": 256, "falcon_h1": 256,
                                          "mamba2": 256, "zamba2": 256}         # was nemotron_h and granitemoehybrid alone
    # looked up by the arch's prefix (params.recurrent_state): a Mamba-1 arch matches none
    for arch in ("mamba", "jamba", "falcon_mamba", "zamba"):
        assert not any(arch.startswith(a) for a, _ in MAMBA2_CHUNK_DEFAULT), arch
