"""Task tri63: two runtimes' own out-of-memory lines the reader did not know (no event, no answer at all). Each is read as any
runtime's failure (generic.oom: no figure, the log's context decides the cause). Lines made up in each source's format.

- VTK's OpenGL error report (Rendering/OpenGL2/vtkOpenGLError.h, vtkPrintOpenGLErrors): "<message> N OpenGL errors detected",
  then " i : (code) text" per error; code 1285 (0x0505) is GL_OUT_OF_MEMORY, printed "Out of memory". Other GL codes are
  no memory failure.
- faceswap's trainer catching TensorFlow's ResourceExhaustedError (PyTorch's OutOfMemoryError in faceswap 3) and raising
  "You do not have enough GPU memory available to train the selected model at the selected settings. ...", which its
  logger prints line by line."""
import pytest

from gpu_garden.memory.triage import engine
from support.triage_event import read as _read

VTK_HEAD = ("Generic Warning: In /src/VTK/Rendering/OpenGL2/vtkOpenGLPolyDataMapper.cxx, line 2048\n"
            "Error after glTexImage3D in LoadTexture! 1 OpenGL errors detected\n")


@pytest.mark.parametrize("indent", [" ", "  "])
def test_vtk_gl_out_of_memory_is_a_failure(indent):
    # fails on the old reader: no event, found False
    cause, kind, _, _, nums = _read(VTK_HEAD + f"{indent}0 : (1285) Out of memory\n")
    assert kind == "generic.oom" and nums == {}
    assert cause == "other"          # no figure and no context: nothing points to a part of the workload


def test_vtk_other_gl_errors_are_no_memory_failure():
    for code, text in ((1280, "Invalid enum"), (1281, "Invalid value"), (1282, "Invalid operation"),
                       (1286, "Invalid framebuffer operation")):
        assert not engine.triage_text(VTK_HEAD.replace("LoadTexture", "Render") + f"  0 : ({code}) {text}\n")["found"], code


def test_vtk_second_listed_error_out_of_memory():
    # the listing's second entry (i = 1) is read as the first is
    text = VTK_HEAD.replace("1 OpenGL", "2 OpenGL") + "  0 : (1282) Invalid operation\n  1 : (1285) Out of memory\n"
    assert _read(text)[1] == "generic.oom"


FACESWAP = ("03/14/2021 09:12:44 CRITICAL Error caught! Exiting...\n"
            "03/14/2021 09:12:44 ERROR    Caught exception in thread: '_training'\n"
            "03/14/2021 09:12:44 ERROR    You do not have enough GPU memory available to train the selected model at the "
            "selected settings. You can try a number of things:\n"
            "03/14/2021 09:12:44 ERROR    1) Close any other application that is using your GPU (web browsers are particularly "
            "bad for this).\n"
            "03/14/2021 09:12:44 ERROR    2) Lower the batchsize (the amount of images fed into the model each iteration).\n")


def test_faceswap_training_oom_is_a_failure():
    # fails on the old reader: no event, found False
    cause, kind, _, _, nums = _read(FACESWAP)
    assert kind == "generic.oom" and nums == {}


def test_faceswap_message_raised_bare():
    # the FaceswapError's text alone, as a traceback's last line shows it
    text = ("lib.utils.FaceswapError: You do not have enough GPU memory available to train the selected model at the "
            "selected settings. You can try a number of things:\n")
    assert _read(text)[1] == "generic.oom"


def test_prose_about_gpu_memory_is_not_read():
    # the words without faceswap's sentence: no failure
    assert not engine.triage_text("INFO     You have enough GPU memory available to train this model.\n")["found"]
