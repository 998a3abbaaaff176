"""Mesh TF's own logits for a fixed batch, from a checkpoint and the project's gin files.

Run as a script (the tests start it in a subprocess, so gin and TF graph state stay out of pytest;
one process serves several checkpoints, to pay TensorFlow's start-up once):

  python tests/mesh_tf_logits.py jobs.json
  jobs.json: [{"gin_files": ["dataset.gin", "models/prefix_lm.gin", "sizes/tiny.gin",
               "runs/cpu.gin"], "gin_params": [], "checkpoint": "DIR/model.ckpt-4",
               "batch": "batch.npz", "out": "logits.npz"}, ...]

The model is built from the same gin files as mesh_transformer_main (Mesh TF's defaults.gin first,
then ours), and the forward pass follows Mesh TF's own eval path (utils.tpu_estimator_model_fn's
logits_and_loss): Bitransformer.call_simple on inputs/targets, or, for "delimited_lm",
utils._dynamic_text2self then Unitransformer.call_simple. Mode EVAL, so no dropout; one example per
row (see _with_segments for delimited_lm).
batch.npz holds int32 `inputs` [B, Li] and `targets` [B, Lt]; out.npz gets float32 `logits`
[B, L, vocab] and the int32 `targets` [B, L] they score: L = Lt, or Li + Lt for delimited_lm,
whose targets are the concatenated sequence.
"""

import argparse
import json
import os
import sys

import gin
import numpy as np
import pkg_resources

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _parse_gin(gin_files, gin_params):
  """Mesh TF's defaults, then the project's files, as utils.parse_gin_defaults_and_flags does."""
  import code_t5  # pylint: disable=g-import-not-at-top,unused-import  (as --module_import=code_t5)
  from mesh_tensorflow.transformer import utils  # pylint: disable=g-import-not-at-top
  gin.add_config_file_search_path(pkg_resources.resource_filename("t5.models", "gin"))
  gin.add_config_file_search_path(os.path.join(_REPO, "gin_configs"))
  defaults = utils._DEFAULT_CONFIG_FILE  # pylint: disable=protected-access
  gin.parse_config_file(pkg_resources.resource_filename(utils.__name__, defaults))
  gin.parse_config_files_and_bindings(gin_files, gin_params)


def _model_and_mesh():
  """The transformer model and a one-device placement mesh, both from the gin config."""
  import mesh_tensorflow as mtf  # pylint: disable=g-import-not-at-top
  from mesh_tensorflow.transformer import utils  # pylint: disable=g-import-not-at-top
  from t5.models import mesh_transformer  # pylint: disable=g-import-not-at-top
  vocabulary = mesh_transformer.get_vocabulary()
  model_type = gin.query_parameter("utils.run.model_type")
  model = utils.build_model(
      model_type=model_type,
      input_vocab_size=utils.inputs_vocabulary(vocabulary).vocab_size,
      output_vocab_size=utils.targets_vocabulary(vocabulary).vocab_size)
  mesh_impl = mtf.placement_mesh_impl.PlacementMeshImpl(
      mtf.convert_to_shape(gin.query_parameter("utils.run.mesh_shape")),
      mtf.convert_to_layout_rules(gin.query_parameter("utils.run.layout_rules")), ["cpu:0"])
  return model_type, model, mesh_impl


def _with_segments(batch):
  """`batch` plus packing features that make each row one example (segment 1, then padding).

  Mesh TF trains delimited_lm on packed batches, whose segment ids keep padding out of attention.
  Its unpacked path has none, and its prefix mask then counts trailing padding as "inputs" that
  every position may attend to; T5X masks padding, so the parity batch is given in packed form.
  """
  out = dict(batch)
  for key in ("inputs", "targets"):
    segment = (batch[key] != 0).astype(np.int32)
    out[f"{key}_segmentation"] = segment
    out[f"{key}_position"] = np.arange(segment.shape[1], dtype=np.int32) * segment
  return out


def _logits(model_type, model, mesh, batch):
  """The mtf logits of `batch`, and the targets they score (both as mtf tensors)."""
  import mesh_tensorflow as mtf  # pylint: disable=g-import-not-at-top
  import tensorflow.compat.v1 as tf  # pylint: disable=g-import-not-at-top
  from mesh_tensorflow.transformer import transformer  # pylint: disable=g-import-not-at-top
  from mesh_tensorflow.transformer import utils  # pylint: disable=g-import-not-at-top
  eval_mode = tf.estimator.ModeKeys.EVAL
  if model_type == "delimited_lm":
    batch = _with_segments(batch)
  batch_dim = mtf.Dimension("batch", batch["inputs"].shape[0])
  features = {
      key: mtf.import_fully_replicated(
          mesh, tf.constant(value, tf.int32),
          mtf.Shape([batch_dim, mtf.Dimension("length", value.shape[1])]), name=key)
      for key, value in batch.items()}
  if model_type == "delimited_lm":
    features = utils._dynamic_text2self(features)  # pylint: disable=protected-access
    targets = features["targets"]
    logits, _ = model.call_simple(
        inputs=transformer.autoregressive_inputs(
            targets, sequence_id=features["targets_segmentation"]),
        targets=targets, compute_loss=False, mode=eval_mode,
        variable_dtype=utils.get_variable_dtype(),
        sequence_id=features["targets_segmentation"], position=features["targets_position"])
  else:
    targets = features["targets"]
    logits, _ = model.call_simple(
        inputs=features["inputs"], targets=targets, compute_loss=False, mode=eval_mode,
        variable_dtype=utils.get_variable_dtype())
  return mtf.cast(logits, tf.float32), targets


def compute(gin_files, gin_params, checkpoint, batch):
  """{"logits": float32 array, "targets": int32 array of the sequence they score}."""
  import mesh_tensorflow as mtf  # pylint: disable=g-import-not-at-top
  import tensorflow.compat.v1 as tf  # pylint: disable=g-import-not-at-top
  tf.disable_eager_execution()
  gin.clear_config()
  _parse_gin(gin_files, gin_params)
  with tf.Graph().as_default():
    model_type, model, mesh_impl = _model_and_mesh()
    graph = mtf.Graph()
    mesh = mtf.Mesh(graph, "my_mesh")
    logits, targets = _logits(model_type, model, mesh, batch)
    # autostack=False keeps one TF variable per checkpoint variable, named as in the checkpoint.
    lowering = mtf.Lowering(graph, {mesh: mesh_impl}, autostack=False)
    outputs = {"logits": lowering.export_to_tf_tensor(logits),
               "targets": lowering.export_to_tf_tensor(targets)}
    saver = tf.train.Saver(tf.global_variables())
    with tf.Session() as session:
      saver.restore(session, checkpoint)
      # Mesh TF computes with float32 slices of the bfloat16 master variables it restores.
      session.run(lowering.copy_masters_to_slices())
      return session.run(outputs)


def main(argv=None):
  """Runs every job of a JSON list: {"gin_files", "gin_params", "checkpoint", "batch", "out"}."""
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("jobs", help="JSON file: a list of jobs")
  args = parser.parse_args(argv)
  with open(args.jobs) as f:
    jobs = json.load(f)
  for job in jobs:
    with np.load(job["batch"]) as data:
      batch = {"inputs": data["inputs"], "targets": data["targets"]}
    result = compute(job["gin_files"], job.get("gin_params", []), job["checkpoint"], batch)
    np.savez(job["out"], logits=result["logits"], targets=result["targets"])
  return 0


if __name__ == "__main__":
  sys.exit(main())
