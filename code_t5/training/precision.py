"""The precision of oneDNN's float32 matrix products in training: fp32, or bf16 with fp32 sums.

On CPUs that multiply bfloat16 in hardware (Intel's AMX; `amx_bf16` in /proc/cpuinfo), oneDNN can
round a float32 product's operands to bfloat16 and sum the products in float32, as a TPU's
matrix unit does with Mesh TF's float32 einsums at their default precision. TensorFlow asks
oneDNN for this where `TF_SET_ONEDNN_FPMATH_MODE=BF16` is in the environment when its first
oneDNN product is built (it reads the variable once per process). The weights, the activations,
the optimizer's state and every other op stay float32; only the products' inputs are rounded
(8 bits of mantissa instead of 24).

On the AMX kind (a 2-core Intel Xeon, family 6 model 167) the causal LM mini trained 1.60-1.64x
faster so, its loss after 400 steps within 0.006 of float32's at the same seed where two seeds
differed by 0.18 (docs/speed.md, "A fifth kind"). TensorFlow takes the setting for its einsums and
batch matmuls (oneDNN's matmul primitive: every product Mesh TF builds), not for its MatMul op,
whose sgemm stays float32. "auto" asks for it only where /proc/cpuinfo lists amx_bf16; what
oneDNN does elsewhere (emulate bfloat16 or ignore the setting) was not measured.

`code_t5.products_precision.mode` (gin; runs/cpu.gin: "auto") chooses: "fp32", "bf16" (an error
on a CPU without AMX) or "auto". `code_t5.train_model` applies it before its session starts:

    import code_t5.training.precision
    code_t5.products_precision.mode = "auto"
"""

import os

import gin

import code_t5_compat

MODES = ("fp32", "bf16", "auto")
# TensorFlow's variable (tensorflow/core/util/mkl_util.h: FPMathModeSetting) and its value.
FPMATH_VARIABLE = "TF_SET_ONEDNN_FPMATH_MODE"


def precision_for(mode: str, cpu_flags, environ) -> str:
  """"fp32" or "bf16": what `mode` ("fp32", "bf16" or "auto") means on a CPU with these
  /proc/cpuinfo flags (None: not known) under this environment, where a value the user set wins:
  TF_SET_ONEDNN_FPMATH_MODE=BF16 is "bf16", any other value "fp32"."""
  if mode not in MODES:
    raise ValueError(f"code_t5.products_precision.mode: one of {', '.join(MODES)}, not {mode!r}")
  if FPMATH_VARIABLE in environ:
    return "bf16" if environ[FPMATH_VARIABLE].upper() == "BF16" else "fp32"
  amx = cpu_flags is not None and "amx_bf16" in cpu_flags
  if mode == "auto":
    return "bf16" if amx else "fp32"
  if mode == "bf16" and not amx:
    raise ValueError('code_t5.products_precision.mode = "bf16": this CPU has no AMX (no amx_bf16 '
                     'in /proc/cpuinfo), and bfloat16 products were measured only with AMX; use '
                     '"auto" or "fp32"')
  return mode


@gin.configurable(module="code_t5", allowlist=["mode"])
def products_precision(mode="fp32") -> str:
  """`precision_for` this machine's CPU and environment."""
  return precision_for(mode, code_t5_compat.this_cpu_flags(), os.environ)


def apply_products_precision() -> str:
  """Sets the environment for `products_precision()`; returns it. Takes effect only before the
  process's first oneDNN product."""
  precision = products_precision()
  if precision == "bf16":
    os.environ.setdefault(FPMATH_VARIABLE, "BF16")
  return precision
