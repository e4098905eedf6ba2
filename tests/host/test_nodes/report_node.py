"""Base of the test-only nodes that report something at the point the graph reaches them (after `anything`),
every time the prompt runs."""


class ReportAfter:
    CATEGORY = "GPU Garden/testing"
    RETURN_TYPES = ()
    FUNCTION = "run"
    OUTPUT_NODE = True

    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {"anything": ("*", {})}}

    @classmethod
    def VALIDATE_INPUTS(cls, input_types):
        return True

    @classmethod
    def IS_CHANGED(cls, **kwargs):
        return float("nan")
