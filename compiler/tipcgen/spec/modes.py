"""The run modes of test_train_inference_python.sh, and the modes a prepare.sh is called with."""

MODES = (
    "lite_train_lite_infer",
    "lite_train_whole_infer",
    "whole_train_whole_infer",
    "whole_infer",
)
# Modes that train (whole_infer only exports and infers released models).
TRAIN_MODES = MODES[:3]
# The modes of the other chains' scripts, each of which upstream's prepare.sh has a branch for
# (its `cpp_infer`, `serving_infer`, `paddle2onnx_infer`); a spec's `prepare` may name them.
CHAIN_MODES = ("cpp_infer", "serving_infer", "paddle2onnx_infer")
# The scripts a prepare.sh mode prepares for (prepare.sh refuses there a config another script
# runs): each chain mode's own; every other mode is the train runner's (and PTQ's, in whole_infer).
CHAIN_MODE_SCRIPTS = {
    "cpp_infer": ("test_inference_cpp.sh",),
    "serving_infer": ("test_serving_infer_python.sh", "test_serving_infer_cpp.sh"),
    "serving_infer_python": ("test_serving_infer_python.sh",),
    "serving_infer_cpp": ("test_serving_infer_cpp.sh",),
    "paddle2onnx_infer": ("test_paddle2onnx.sh",),
}
TRAIN_MODE_SCRIPTS = ("test_train_inference_python.sh", "test_ptq_inference_python.sh")


# Scripts that run their configs in one mode whatever they are given: the dy2static scripts set
# MODE=lite_train_lite_infer and run the train runner on their config's blocks in it.
FIXED_MODE_SCRIPTS = {"test_train_dy2static_python.sh": ("lite_train_lite_infer",)}


def mode_scripts(mode: str) -> tuple[str, ...]:
    """The scripts whose configs prepare.sh prepares in `mode`."""
    return CHAIN_MODE_SCRIPTS.get(mode, TRAIN_MODE_SCRIPTS)


def serves(mode: str, readers) -> bool:
    """Whether prepare.sh prepares, in `mode`, a config the scripts `readers` run: a config of a
    fixed-mode script (FIXED_MODE_SCRIPTS; the runner it runs through reads it only so) in that
    mode only, any other in the modes of its scripts (mode_scripts). The one rule the generated
    prepare.sh refuses by, import traces by, and the whole-tree oracle judges by."""
    fixed = [FIXED_MODE_SCRIPTS[r] for r in readers if r in FIXED_MODE_SCRIPTS]
    if fixed:
        return any(mode in modes for modes in fixed)
    return bool(set(readers) & set(mode_scripts(mode)))


# Modes the repos' prepare.sh also serve, called with a train config (the repos' docs:
# `prepare.sh <train config> benchmark_train`, `... klquant_whole_infer`).
TRAIN_CONFIG_MODES = ("benchmark_train", "klquant_whole_infer")
# Other modes upstream prepare.sh scripts have a branch for (PaddleVideo's `serving_infer_python`,
# `serving_infer_cpp`):
# a spec may carry them; import fills them when a typed suite is prepared in them. (`lite_infer`,
# named only in their usage comments, has no branch anywhere: not a mode.)
OTHER_MODES = ("serving_infer_python", "serving_infer_cpp")
PREPARE_MODES = MODES + CHAIN_MODES + TRAIN_CONFIG_MODES + OTHER_MODES


def prepare_modes(used) -> tuple[str, ...]:
    """The modes a generated prepare.sh accepts: the train chain's, and the other modes that
    `used` (the modes the specs prepare for) names."""
    return MODES + tuple(m for m in PREPARE_MODES[len(MODES) :] if m in used)
