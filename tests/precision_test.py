"""code_t5/training/precision.py: what each mode means on which CPU, the user's environment winning,
a wrong value named; and, on a CPU with AMX, that the setting made after TensorFlow's import really
rounds a product's operands to bfloat16 (and that without it the product stays float32).
"""

import os
import subprocess
import sys

import numpy as np
import pytest

import code_t5_compat
from code_t5.training import precision

AMX = ["avx512f", "avx512_bf16", "amx_tile", "amx_bf16"]
AVX512 = ["avx2", "avx512f"]


@pytest.mark.parametrize("mode, flags, environ, expected", [
    ("auto", AMX, {}, "bf16"),
    ("auto", AVX512, {}, "fp32"),
    ("auto", None, {}, "fp32"),  # not Linux: nothing known of the CPU
    ("fp32", AMX, {}, "fp32"),
    ("bf16", AMX, {}, "bf16"),
    ("auto", AMX, {"TF_SET_ONEDNN_FPMATH_MODE": "fp32"}, "fp32"),
    ("fp32", AMX, {"TF_SET_ONEDNN_FPMATH_MODE": "bf16"}, "bf16"),
])
def test_each_mode_on_each_cpu(mode, flags, environ, expected):
  assert precision.precision_for(mode, flags, environ) == expected


def test_bf16_without_amx_and_a_wrong_value_are_named():
  with pytest.raises(ValueError, match=r'mode = "bf16": this CPU has no AMX.*"fp32"'):
    precision.precision_for("bf16", AVX512, {})
  with pytest.raises(ValueError, match=r"code_t5\.products_precision\.mode: .*'half'"):
    precision.precision_for("half", AMX, {})


_PRODUCT = """
import sys
import numpy as np
import tensorflow.compat.v1 as tf
import gin
from code_t5.training import precision
with gin.unlock_config():
  gin.bind_parameter("code_t5.products_precision.mode", sys.argv[1])
print("PRECISION=" + precision.apply_products_precision())
a = np.random.default_rng(0).standard_normal((64, 256)).astype(np.float32)
b = np.random.default_rng(1).standard_normal((256, 64)).astype(np.float32)
with tf.Graph().as_default(), tf.Session() as session:  # placeholders: nothing constant-folded
  x, y = tf.placeholder(tf.float32, a.shape), tf.placeholder(tf.float32, b.shape)
  product = session.run(tf.einsum("ij,jk->ik", x, y), {x: a, y: b})  # as Mesh TF multiplies
np.save(sys.argv[2], product)
"""


def _bf16(x):
  """x rounded to bfloat16 (to nearest, ties to even), as float32."""
  bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
  bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
  return bits.astype(np.uint32).view(np.float32)


def _this_cpu_has_amx():
  return precision.precision_for("auto", code_t5_compat.this_cpu_flags(), {}) == "bf16"


def _product(tmp_path, mode):
  """a @ b in a fresh process that set `mode` after importing TensorFlow, as train_model does."""
  out = tmp_path / f"{mode}.npy"
  env = {k: v for k, v in os.environ.items() if k != precision.FPMATH_VARIABLE}
  proc = subprocess.run([sys.executable, "-c", _PRODUCT, mode, str(out)], capture_output=True,
                        text=True, env=env, check=True)
  assert f"PRECISION={mode}" in proc.stdout
  return np.load(out)


@pytest.mark.skipif(not _this_cpu_has_amx(), reason="bf16 products need a CPU with AMX")
def test_bf16_products_round_their_operands_and_fp32_ones_do_not(tmp_path):
  a = np.random.default_rng(0).standard_normal((64, 256)).astype(np.float32)
  b = np.random.default_rng(1).standard_normal((256, 64)).astype(np.float32)
  exact = a.astype(np.float64) @ b.astype(np.float64)
  rounded = _bf16(a).astype(np.float64) @ _bf16(b).astype(np.float64)
  assert np.abs(rounded - exact).max() > 1e-2  # bfloat16's rounding shows at this size
  fp32, bf16 = _product(tmp_path, "fp32"), _product(tmp_path, "bf16")
  np.testing.assert_allclose(fp32, exact, atol=1e-4)
  np.testing.assert_allclose(bf16, rounded, atol=1e-4)  # float32 sums of the rounded operands
