"""One module per serving runtime: its defaults by version, the memory terms it adds to weights and KV cache,
its fits rule and the flags that change them."""
import re

RUNTIMES = ("vllm", "llama.cpp", "ollama", "sglang")
RUNTIME_NAMES = {"vllm": "vLLM", "llama.cpp": "llama.cpp", "ollama": "Ollama", "sglang": "SGLang"}  # as messages name them


# a release's leading number (0.6.4, 0.8.5.post1, 0.11.0+cu128, 0.29.1rc1.dev17, 0.4.0-rc6); a setuptools-scm ".devN"
# build carries the number of the release it leads to and is taken as that release
_RELEASE = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?(?:\.\d+)*(?:\.?post\d+)?(?:[-.]?rc\.?(\d+))?")
_COMMIT = re.compile(r"[0-9a-f]{7,40}")
# a development release segment right after the release number ('0.20.1.dev0+g101584af0', '0.10.1.dev101')
_DEV = re.compile(r"\.?dev(\d+)")
# a version the text calls a fork's ('tqp-v0.1.0 (TheTom/llama-cpp-turboquant fork)'): the fork's own numbering names
# no upstream build; read as the newest, as a commit hash is (version_note says so)
_FORK = re.compile(r"\bfork\b")
# a pre-release sorts after every patch of the release before it and before the release: 0.4.0-rc6 is
# (0, 4, -1, PRE, 6) (at_least compares a gate padded to three numbers)
PRE = 1 << 30
# setuptools-scm's version of a checkout with no release tag in reach (a source or container build): its default
# 0.1.devN+g<hash>, or a project's fallback 0.0.0.devN+g<hash> (vllm/vllm-openai:qwen38 prints 0.1.dev19754+g3a0914114):
# a commit, not release 0.1, whatever local segments follow (.d20260101 for a dirty tree, vLLM's .cu129, .precompiled);
# each segment starts at a dot no segment holds, so the match stays linear
_UNTAGGED = re.compile(r"0\.(?:1|0|0\.0)\.dev\d+\+g[0-9a-f]{7,40}(?:\.[0-9a-z]+)*")
# ...which names no release, so the user may state the release it is based on after it: '0.1.dev1+ge08a6f3ae based on
# 0.23.0' reads as 0.23.0 (version_note says so). The build's own log does print what a release decides for it (vLLM's
# "Chunked prefill is enabled with max_num_batched_tokens=N", "Raising max_num_batched_tokens from A to B", the compile
# range "(1, N)"), but kv takes no log; a checkout's count (0.1.dev19754) is no release either: a shallow clone prints
# dev1 (jethac's GB10 and P520 builds), and on a fork's branch it counts the fork's commits too (kv-accuracy round 68)
_BASED_ON = re.compile(r"\bbased on\s+(v?\d+\.\d+[^\s,;()]{0,60})")
# a nightly build ('nightly', 'nightly 58996f3 (January 2026)', vllm/vllm-openai:nightly, sglang's nightly wheels): a
# build of the main branch, newer than every release before it; which release it leads to is not in the word, so it
# reads as the newest, as a commit hash does (version_note says so)
_NIGHTLY = re.compile(r"nightly(?:[-_.][0-9a-z]{1,40})?")
# distributions of a runtime that number their own builds, one row each: (the word the text names it by, who, the
# upstream it ships). Their build number is no upstream release, whatever word it sits in: Lemonade's llamacpp-rocm
# release b1259 ships a llama.cpp commit (its binary printed 'build_info: b1-e77056f', a build of commit e77056f, May
# 2026; batch 66's hogeheer Strix Halo run), not llama.cpp's b1259 of 2023, so the text reads as the newest upstream
# build, which version_note says (kv-accuracy round 61)
OWN_NUMBERING = (("lemonade", "Lemonade's llamacpp-rocm releases", "llama.cpp"),)
# llama.cpp's build_info, 'b<N>-<hash>' ('b8157-2943210c1': common/build-info.cpp.in's llama_build_info(), "b" +
# LLAMA_BUILD_NUMBER + "-" + LLAMA_COMMIT, the number `git rev-list --count HEAD` and the hash `git rev-parse --short
# HEAD` by cmake/build-info.cmake), printed by llama-server at start and in /props and every answer's
# system_fingerprint: build N. The form was added at 485dc0121 (server: add system_fingerprint, #10917, 2024-12-23),
# whose count is 4383, so a lower N in it is no upstream build but a fork's, an image's or a shallow clone's own count
# (havenoammo's image prints 'b484-2c4055912', Lemonade's 'b1-e77056f'): refused as any unreadable version is. The
# converse is not checked: a fork's own count may pass 4383 (ik_llama.cpp's is past 4800) and is read as that upstream
# build. Read for llama.cpp (and an unnamed runtime) only: vLLM, SGLang and Ollama print no such form (review rev3 T4)
_BUILD_INFO = re.compile(r"b(\d+)-[0-9a-f]{7,40}")
BUILD_INFO_SINCE = 4383
_OWN_WORD = re.compile(r"\b(" + "|".join(w for w, _, _ in OWN_NUMBERING) + r")\b")


# the newest release of each runtime among the measured runs (benchmarks/data/llm_measured.json's rows, the logs kv's
# figures are checked against; test_ux57 keeps this table to them): no version gate in these modules is later, so a
# --runtime-version past it gets that release's rules, which version_note says (ux57)
NEWEST_MEASURED = {"vllm": "0.30.0", "llama.cpp": "b11160", "ollama": "0.34.2", "sglang": "0.5.20"}


def own_numbering(v) -> tuple | None:
    """The OWN_NUMBERING row a version text names (its word, in the text's first 200 characters), else None."""
    m = _OWN_WORD.search(str(v).strip().lower()[:200]) if v is not None else None
    return next(row for row in OWN_NUMBERING if row[0] == m.group(1)) if m else None


def parse_version(v, runtime: str | None = None) -> tuple | None:
    """'0.6.4' -> (0, 6, 4); '0.11' -> (0, 11, 0); 'b6500' (a llama.cpp build) -> (6500,); '0.4.0-rc6' ->
    (0, 4, -1, PRE, 6), before 0.4.0, as is '0.10.1+gptoss' (vLLM's gpt-oss launch build) before 0.10.1; None / 'latest' -> None (the newest). Only the first word is read (the rest may
    say when: 'b5400 (May 2025)'); llama.cpp's build_info 'b8157-2943210c1' -> (8157,); a commit hash ('086cf81 (July 2025)') names no release: None, as the newest, which
    version_note says. For llama.cpp a text that says fork ('v0.1.0 (TheTom/llama-cpp-turboquant fork)') reads as the
    newest unless its first word is a build (b7800) or a hash: a fork's own 0.1.0 is no llama.cpp release."""
    if v is None or str(v).strip().lower() in ("", "latest", "current", "newest"):
        return None
    s = str(v).strip().lower()
    if s.startswith("ik"):  # ikawrakow/ik_llama.cpp: the fork numbers its own builds; llama.cpp's gates take it as new
        return None
    if own_numbering(s):  # a distribution's own build number (Lemonade's b1259): no upstream release
        return None
    first = s.split()[0].strip("()[],;:'\"").removeprefix("v")
    if _UNTAGGED.fullmatch(first) and based_on(s):
        return parse_version(based_on(s), runtime)
    if (_COMMIT.fullmatch(first) and not first.isdigit()) or _UNTAGGED.fullmatch(first) or _NIGHTLY.fullmatch(first):
        return None
    m = re.fullmatch(r"b?(\d+)", first) or (_BUILD_INFO.fullmatch(first) if runtime in (None, "llama.cpp") else None)
    if m and (m.re is not _BUILD_INFO or int(m.group(1)) >= BUILD_INFO_SINCE):
        return (int(m.group(1)),)
    if m:
        from ...errors import UserError
        raise UserError(f"cannot read a version from {str(v)[:60]!r}: llama.cpp prints its build_info b<N>-<hash> from "
                        f"b{BUILD_INFO_SINCE} on, so {m.group(1)} is a fork's or shallow clone's own count, not a llama.cpp "
                        "build (give the upstream build it follows, e.g. b6500, or latest)")
    m = _RELEASE.match(first)
    long = len(first) > 128  # a custom image's local tag may be long (0.26.1rc0+infernal.invocation.r2...: 82 characters)
    if (not m or long or runtime == "llama.cpp") and _FORK.search(s[:200]):
        return None
    if not m or long:
        from ...errors import UserError
        raise UserError(f"cannot read a version from {str(v)[:60]!r} (e.g. 0.11.0 for vLLM, b6500 for llama.cpp, 0.12.3 "
                        "for Ollama; a fork's own number: the upstream build it follows, or latest)")
    major, minor, patch, rc = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0), m.group(4)
    if first.endswith("+gptoss"):  # vLLM's gpt-oss launch wheels (August 2025), built before 0.10.1 was tagged
        return (major, minor, patch - 1, PRE, 0)
    if rc is not None:
        dev = _DEV.match(first, m.end())
        # a nightly past a candidate's tag (vLLM's 0.20.1rc1.dev91+g<hash>: 91 commits on main past the tag) keeps its
        # commit count last, so a gate may name the nightly a change landed in; a shorter gate reads it as the rc
        return (major, minor, patch - 1, PRE, int(rc)) + ((int(dev.group(1)),) if dev else ())
    if _DEV.match(first, m.end()) and "post" not in m.group(0):  # X.Y.Z.postN.devM is after X.Y.Z (PEP 440)
        # a development build of a release not yet made: PEP 440 orders X.Y.Z.devN before X.Y.Z and its candidates;
        # setuptools-scm (vLLM's, SGLang's versioning) writes a checkout past tag X.Y.(Z-1) as X.Y.Z.devN+g<hash>
        # (jethac's AEON image prints 0.20.1.dev0+g101584af0.d20260424 and the pre-0.20.1 token figure)
        return (major, minor, patch - 1, PRE, -1)
    return (major, minor, patch)


def based_on(s: str) -> str | None:
    """The release a version text states an untagged build is based on ('0.1.dev1+ge08a6f3ae based on 0.23.0' ->
    '0.23.0'), in its first 200 characters; None where it states none."""
    m = _BASED_ON.search(s[:200])
    return m.group(1).strip("()[],;:'\"") if m else None


def version_note(v, runtime: str | None = None) -> str | None:
    """The note for a runtime version that names no release (a commit hash): read as the newest; for an untagged
    build, which release it was read as: the one the text states it is based on, else the newest."""
    if v is None:
        return None
    s = str(v).strip().lower()
    first = s.split()[0].strip("()[],;:'\"").removeprefix("v") if s else ""
    if _UNTAGGED.fullmatch(first):
        base = based_on(s)
        what = (f"runtime version {first!r} is an untagged build (setuptools-scm's 0.1.devN+g<hash>: a checkout with no "
                "release tag in reach, a source, fork or container build): it names a commit, not a release")
        if base and parse_version(v, runtime) is not None:
            return (f"{what}; read as {base}, the release it is stated to be based on: that release's defaults and "
                    "gates (the build's own commits past it are not modelled)")
        return (f"{what}; read as the newest release: its defaults and gates (for vLLM the default batch, the "
                "share's default and its start checks), which a build older than that release may not have (give the "
                f"release it is based on, e.g. --runtime-version '{first} based on 0.23.0', for that release's)")
    if parse_version(v, runtime) is not None:
        return _past_newest(v, runtime)
    if s.startswith("ik") or s in ("", "latest", "current", "newest"):
        return None
    own = own_numbering(s)
    if own:
        return (f"runtime version {str(v)[:60]!r} is a build number of {own[1]}, not a {own[2]} release: the {own[2]} "
                f"build it ships is not in it, read as the newest {own[2]} behaviour (give the upstream build it is "
                "based on, e.g. b6500, for that build's figures)")
    if _FORK.search(s[:200]) and not _COMMIT.fullmatch(s.split()[0].strip("()[],;:'\"")):
        return (f"runtime version {str(v)[:60]!r} is a fork's own numbering: the upstream build it follows is unknown, "
                "read as the newest upstream behaviour (give the upstream build it is based on, e.g. b6500, for that "
                "build's figures)")
    if _NIGHTLY.fullmatch(s.split()[0].strip("()[],;:'\"").removeprefix("v")):
        return (f"runtime version {str(v)[:60]!r} is a nightly build, not a release: read as the newest release's "
                "behaviour (a nightly older than the newest release may lack later changes; give the release it "
                "follows, e.g. 0.11.0, for that version's figures)")
    return (f"runtime version {str(v)[:40]!r} names a commit, not a release: its gates are unknown, read as the newest "
            "(give the release or build number, e.g. b6500, for that version's figures)")


def _past_newest(v, runtime) -> str | None:
    """The note for a release newer than the newest measured one (NEWEST_MEASURED): whose rules it gets."""
    newest = NEWEST_MEASURED.get(runtime)
    got, top = parse_version(v, runtime), parse_version(newest, runtime) if newest else None
    if top is None or (len(got) == 1) != (len(top) == 1) or at_least(top, *got):  # a build number against a release
        return None
    kind = "build" if runtime == "llama.cpp" else "release"
    return (f"runtime version {str(v)[:40]!r} is newer than {RUNTIME_NAMES[runtime]} {newest}, the newest {kind} kv's "
            f"figures are checked against (its measured runs): read with {newest}'s rules, the newest kv has; what "
            "later releases changed is not modelled")


def at_least(version, *ref) -> bool:
    """True for the newest (None) and for any version >= ref (both padded to three numbers: 0.4 is 0.4.0, so that a
    pre-release of 0.4.0 sorts before it)."""
    if version is None:
        return True
    version, ref = tuple(version), tuple(ref)
    return (version + (0,) if len(version) == 2 else version) >= (ref + (0,) if len(ref) == 2 else ref)


# ik_llama.cpp numbers its builds by its own commit count ('ik_llama.cpp 3475 (ac156500)'). Its K cache became a 2-D
# tensor, head_dim x (heads x cells), at #208 (commit 1140b4568, 2025-02-19, build 3561: git rev-list --count); before it
# K was 1-D as in llama.cpp, and a quantized K carried no padded row in the CUDA buffer (#103, build 3475: 'CUDA0 KV
# buffer size = 82.00 MiB' = 'KV self size' with an iq4_nl K). (rev7 B2) The same commit made the MLA latent 2-D,
# (kv_lora_rank + n_rot) x cells, in the default build (MLA_USE_TRANSPOSED_CACHE 1, since #205, build 3556): #234
# (build 3574) only turned the non-transposed variant's latent (#else, not compiled) 2-D and #235 (3575) made that
# variant -mla 2. One gate covers both. A build the version text does not give (None: a date, "May 2025") is taken as
# the newest layout, padded: most ik users run recent builds
IK_K_2D_BUILD = 3561
# (rev7 B3) the forms fork() accepts: 'ik_llama.cpp 3475 (x)', 'ik_llama.cpp build 3475', 'version: 3475', 'ik_llama.cpp:
# 3475', 'b3475'; a date ('ik_llama.cpp 2025-02-19') is no build number
IK_BUILD = re.compile(r"ik[_-]llama(?:\.cpp)?\W*(?:build|version)?\W*b?(\d{3,5})\b(?![-./]\d)", re.I)


def ik_build(version) -> int | None:
    """The ik_llama.cpp build number a version text gives ('ik_llama.cpp 3475 (ac156500)' -> 3475), else None."""
    m = IK_BUILD.match(str(version or "").strip())
    return int(m.group(1)) if m else None
