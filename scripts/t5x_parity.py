"""The first T5X training step's loss on a batch against Mesh TF's loss on the same batch.

    PYTHONPATH=. python scripts/t5x_parity.py MESH_TF_MODEL_DIR \
        --t5x-src /path/to/t5x [--t5x-commit COMMIT] --t5x-python /path/to/t5x-venv/bin/python \
        [--root dataset-dev] [--split validation] [--batch-size 8] [--seed 7]

The project's venv (this one, TF 2.15) and T5X's (newer TF, JAX) cannot be one, so:

1. here: `code-t5 convert --params-only` of the model dir into a temporary folder (model.gin,
   vocab.model, task.gin: what a user gets); the first `--batch-size` examples of the model's own
   task (its operative_config.gin's, read from --root) as one batch; Mesh TF's training loss on it
   -- the graph built from the model dir's operative_config.gin, Unitransformer/Bitransformer
   `call_simple` in TRAIN mode (z-loss included, as in training), dropout bound to 0, the
   checkpoint's variables -- which is the project's loss (code_t5.loss_per_target_token);
2. in T5X's venv (this file again, `--t5x-side`, importing no code_t5): model.gin parsed by gin
   from the T5X source (--t5x-src, or --t5x-commit of it exported), DROPOUT_RATE = 0, the
   converted params loaded with t5x.checkpoints.load_t5x_checkpoint, the same examples through
   the model's feature converter (unpacked), and `model.loss_fn(params, batch, dropout_rng=None)`:
   the loss T5X's first train step computes (and reports as `loss`) before it updates;
3. both printed, with their difference; exit status 0 when they agree to --tolerance.

A causal LM's examples go to T5X as the targets-only sequence task.gin gives it (inputs EOS
targets EOS); the other families as inputs/targets.
"""

import argparse
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile

import numpy as np

REPO = pathlib.Path(__file__).resolve().parent.parent
# TensorFlow's start-up messages (CUDA, cuDNN, TensorRT) say nothing about the comparison.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


# ------------------------------------------------------------------------------ the project side

def _batch(model_dir, root, split, batch_size, seed):
  """The first examples of the model's task: {"inputs", "targets"} padded arrays, the layout."""
  import gin  # pylint: disable=g-import-not-at-top
  import seqio  # pylint: disable=g-import-not-at-top
  import code_t5  # pylint: disable=g-import-not-at-top,unused-import  (registers the tasks)
  from code_t5.training import operative_config  # pylint: disable=g-import-not-at-top
  operative = operative_config.OperativeConfig.of_model_dir(model_dir)
  lengths = operative.value("run.sequence_length")
  with gin.unlock_config():
    gin.bind_parameter("code_t5.flcc_dataset.root", str(root))
    alpha = operative.value("tokenize_with_subword_sampling.alpha")
    if alpha is not None:
      gin.bind_parameter("code_t5.tokenize_with_subword_sampling.alpha", alpha)
  task = seqio.get_mixture_or_task(operative.task())
  examples = list(task.get_dataset(lengths, split=split, shuffle=False, seed=seed,
                                   use_cached=False).take(batch_size).as_numpy_iterator())
  gin.clear_config()
  batch = {}
  for key in ("inputs", "targets"):
    batch[key] = np.zeros((len(examples), lengths[key]), np.int32)
    for row, example in enumerate(examples):
      batch[key][row, :len(example[key])] = example[key]
  return operative.task(), batch


def _mesh_tf_loss(model_dir, checkpoint, batch):
  """Mesh TF's training loss (z-loss included, dropout 0) on `batch` at `checkpoint`."""
  import gin  # pylint: disable=g-import-not-at-top
  import mesh_tensorflow as mtf  # pylint: disable=g-import-not-at-top
  from mesh_tensorflow.transformer import transformer  # pylint: disable=g-import-not-at-top
  from mesh_tensorflow.transformer import utils  # pylint: disable=g-import-not-at-top
  import pkg_resources  # pylint: disable=g-import-not-at-top
  from t5.models import mesh_transformer  # pylint: disable=g-import-not-at-top
  import tensorflow.compat.v1 as tf  # pylint: disable=g-import-not-at-top
  tf.disable_eager_execution()
  gin.clear_config()
  defaults = pkg_resources.resource_filename(utils.__name__, utils._DEFAULT_CONFIG_FILE)  # pylint: disable=protected-access
  gin.parse_config_file(defaults)
  gin.parse_config_files_and_bindings(
      [str(pathlib.Path(model_dir) / "operative_config.gin")],
      # The macro and each binding, in the scopes an encoder-decoder's file binds them in.
      ["dropout_rate = 0.0", "sublayer_dropout.dropout_rate = 0.0"] +
      [f"{scope}{layer}.dropout_rate = 0.0" for scope in ("", "encoder/", "decoder/")
       for layer in ("SelfAttention", "DenseReluDense")]
      # The same loss without the loss per byte that training prints for the launcher (a stray
      # "loss_per_byte [...]" line here).
      + ["code_t5.loss_per_target_token.vocabulary = None"], skip_unknown=True)
  train = tf.estimator.ModeKeys.TRAIN
  with tf.Graph().as_default():
    vocabulary = mesh_transformer.get_vocabulary()
    model_type = gin.query_parameter("utils.run.model_type")
    model = utils.build_model(
        model_type=model_type,
        input_vocab_size=utils.inputs_vocabulary(vocabulary).vocab_size,
        output_vocab_size=utils.targets_vocabulary(vocabulary).vocab_size)
    mesh_impl = mtf.placement_mesh_impl.PlacementMeshImpl(
        mtf.convert_to_shape("model:1,batch:1"),
        mtf.convert_to_layout_rules(gin.query_parameter("utils.run.layout_rules")), ["cpu:0"])
    graph = mtf.Graph()
    mesh = mtf.Mesh(graph, "my_mesh")
    features = dict(batch)
    if model_type == "delimited_lm":
      # Packed form: one example per row (segment 1), as Mesh TF trains delimited_lm.
      for key in ("inputs", "targets"):
        segment = (batch[key] != 0).astype(np.int32)
        features[f"{key}_segmentation"] = segment
        features[f"{key}_position"] = np.arange(segment.shape[1], dtype=np.int32) * segment
    batch_dim = mtf.Dimension("batch", batch["inputs"].shape[0])
    mtf_features = {
        key: mtf.import_fully_replicated(
            mesh, tf.constant(value, tf.int32),
            mtf.Shape([batch_dim, mtf.Dimension("length", value.shape[1])]), name=key)
        for key, value in features.items()}
    variable_dtype = utils.get_variable_dtype()
    if model_type == "delimited_lm":
      mtf_features = utils._dynamic_text2self(mtf_features)  # pylint: disable=protected-access
      targets = mtf_features["targets"]
      _, loss = model.call_simple(
          inputs=transformer.autoregressive_inputs(
              targets, sequence_id=mtf_features["targets_segmentation"]),
          targets=targets, compute_loss=True, mode=train, variable_dtype=variable_dtype,
          sequence_id=mtf_features["targets_segmentation"],
          position=mtf_features["targets_position"])
    else:
      _, loss = model.call_simple(
          inputs=mtf_features["inputs"], targets=mtf_features["targets"], compute_loss=True,
          mode=train, variable_dtype=variable_dtype)
    lowering = mtf.Lowering(graph, {mesh: mesh_impl}, autostack=False)
    output = lowering.export_to_tf_tensor(loss)
    saver = tf.train.Saver(tf.global_variables())
    with tf.Session() as session:
      saver.restore(session, checkpoint)
      session.run(lowering.copy_masters_to_slices())
      return float(session.run(output)), model_type


class _Refused(Exception):
  """What stops the comparison, in one line."""


def _t5x_source(src: pathlib.Path, commit, work: pathlib.Path) -> pathlib.Path:
  if not commit:
    return src
  out = work / "t5x-src"
  out.mkdir()
  archive = subprocess.run(["git", "-C", str(src), "archive", commit], capture_output=True,
                           check=False)
  if archive.returncode:  # (git's own line: a CalledProcessError traceback hid it)
    said = archive.stderr.decode("utf-8", "replace").strip().splitlines()
    raise _Refused(f"--t5x-commit {commit}: git archive in {src} failed: "
                   f"{said[-1] if said else f'status {archive.returncode}'}")
  if subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout,
                    check=False).returncode:
    raise _Refused(f"--t5x-commit {commit}: its files could not be unpacked into {out}")
  if not (out / "t5x").is_dir():
    raise _Refused(f"--t5x-commit {commit} of {src} holds no t5x/ folder: give a T5X checkout")
  return out


def _check_t5x_flags(args) -> None:
  """Before the Mesh TF side's ~20 s: a --t5x-python that cannot run, or a --t5x-src without
  t5x/, ended in a traceback after it (helper-44's audit)."""
  if shutil.which(args.t5x_python) is None:
    raise _Refused(f"--t5x-python {args.t5x_python}: no such program, or not one that may run "
                   "(give the python of the venv T5X's requirements are installed in)")
  if not (args.t5x_src / "t5x").is_dir() and not args.t5x_commit:
    raise _Refused(f"--t5x-src {args.t5x_src} holds no t5x/ folder: give a T5X checkout")


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("model_dir", type=pathlib.Path, nargs="?")
  parser.add_argument("--t5x-src", type=pathlib.Path, help="a T5X checkout (holds t5x/)")
  parser.add_argument("--t5x-commit", help="export this commit of --t5x-src (a git repo) first")
  parser.add_argument("--t5x-python", help="the python of a venv where t5x's requirements are")
  parser.add_argument("--root", type=pathlib.Path, default=REPO / "dataset-dev")
  parser.add_argument("--split", default="validation")
  parser.add_argument("--batch-size", type=int, default=8)
  parser.add_argument("--seed", type=int, default=7)
  parser.add_argument("--tolerance", type=float, default=1e-4)
  parser.add_argument("--t5x-side", help=argparse.SUPPRESS)  # the job file, in T5X's venv
  args = parser.parse_args(argv)
  if args.t5x_side:
    return _t5x_side(args.t5x_side)
  if not (args.model_dir and args.t5x_src and args.t5x_python):
    parser.error("give MODEL_DIR, --t5x-src and --t5x-python")
  try:
    return _compare(args)
  except _Refused as e:
    print(f"t5x_parity.py: {e}", file=sys.stderr)
    return 2


def _compare(args) -> int:
  """main's comparison, for its flags."""
  sys.path.insert(0, str(REPO))
  from code_t5 import errors  # pylint: disable=g-import-not-at-top
  from code_t5 import processes  # pylint: disable=g-import-not-at-top
  from code_t5 import registration  # pylint: disable=g-import-not-at-top
  if not registration.tensorflow_installed():  # Mesh TF's side of the comparison
    print(errors.TrainingStackMissing("t5x_parity.py"), file=sys.stderr)
    return 2
  _check_t5x_flags(args)
  from code_t5.convert import t5x  # pylint: disable=g-import-not-at-top
  # A SIGTERM ends this process as an exception would, so that its temporary folder goes (it
  # stayed in $TMPDIR, and the T5X side ran on: helper-54's audit).
  signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
  with tempfile.TemporaryDirectory() as work:
    work = pathlib.Path(work)
    report = t5x.convert(args.model_dir, work / "converted", params_only=True)
    checkpoint_dir = work / "converted" / f"checkpoint_{report.step}"
    task, batch = _batch(args.model_dir, args.root, args.split, args.batch_size, args.seed)
    mesh_tf, model_type = _mesh_tf_loss(args.model_dir, report.prefix, batch)
    causal = model_type == "delimited_lm" and not report.model.prefix_lm
    np.savez(work / "batch.npz", **batch)
    job = {"checkpoint": str(checkpoint_dir), "batch": str(work / "batch.npz"),
           "targets_only": causal, "out": str(work / "t5x.json")}
    (work / "job.json").write_text(json.dumps(job))
    source = _t5x_source(args.t5x_src.resolve(), args.t5x_commit, work)
    env = dict(os.environ, PYTHONPATH=f"{source}{os.pathsep}{checkpoint_dir}",
               TF_CPP_MIN_LOG_LEVEL="3", JAX_PLATFORMS="cpu")
    result = subprocess.run([args.t5x_python, str(pathlib.Path(__file__).resolve()),
                             "--t5x-side", str(work / "job.json")], cwd=source, env=env,
                            capture_output=True, text=True, check=False,
                            preexec_fn=processes.dying_with_this_process())
    if result.returncode:
      print(result.stderr[-4000:], file=sys.stderr)
      return 2
    t5x_loss = json.loads((work / "t5x.json").read_text())
  tokens = int((batch["inputs"] > 0).sum() + (batch["targets"] > 0).sum()) if causal else int(
      (batch["targets"] > 0).sum())
  difference = abs(t5x_loss["loss"] - mesh_tf)
  print(json.dumps({"model_dir": str(args.model_dir), "step": report.step, "task": task,
                    "split": args.split, "examples": int(batch["targets"].shape[0]),
                    "loss_tokens": tokens, "t5x_layout": "targets_only" if causal else
                    "inputs_targets", "t5x_source": str(args.t5x_src) + (
                        f"@{args.t5x_commit}" if args.t5x_commit else ""),
                    "mesh_tf_loss": mesh_tf, "t5x_loss": t5x_loss["loss"],
                    "t5x_loss_weight_sum": t5x_loss["weight_sum"],
                    "abs_difference": difference}, indent=1))
  return 0 if difference <= args.tolerance else 1


# ------------------------------------------------------------------------------ the T5X side

def _t5x_side(job_file) -> int:
  """In T5X's venv: T5X's loss on the batch at the converted params (no code_t5 here)."""
  import gin  # pylint: disable=g-import-not-at-top
  import jax  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from t5x import checkpoints  # pylint: disable=g-import-not-at-top
  from t5x import gin_utils  # pylint: disable=g-import-not-at-top
  job = json.loads(pathlib.Path(job_file).read_text())
  checkpoint = pathlib.Path(job["checkpoint"])

  def get_model(model):
    return model

  gin.external_configurable(get_model, "parity_model")
  gin_utils.parse_gin_flags([os.getcwd()], [str(checkpoint / "model.gin")],
                            ["DROPOUT_RATE = 0.0", "parity_model.model = %MODEL"])
  model = gin.get_configurable("parity_model")()
  params = checkpoints.load_t5x_checkpoint(str(checkpoint))["target"]
  data = np.load(job["batch"])
  inputs, targets = data["inputs"], data["targets"]
  examples = []
  for row in range(targets.shape[0]):
    source, target = inputs[row][inputs[row] > 0], targets[row][targets[row] > 0]
    examples.append({"targets": np.concatenate([source, target])} if job["targets_only"] else
                    {"inputs": source, "targets": target})
  if job["targets_only"]:
    lengths = {"targets": inputs.shape[1] + targets.shape[1]}
  else:
    lengths = {"inputs": inputs.shape[1], "targets": targets.shape[1]}
  signature = {key: tf.TensorSpec([None], tf.int32) for key in examples[0]}
  dataset = tf.data.Dataset.from_generator(lambda: iter(examples), output_signature=signature)
  converter = model.FEATURE_CONVERTER_CLS(pack=False)
  batch = next(converter(dataset, lengths).batch(len(examples)).as_numpy_iterator())
  loss, metrics = model.loss_fn(params, jax.tree_util.tree_map(np.asarray, batch), None)
  del metrics
  weight_sum = float(np.sum(batch["decoder_loss_weights"]))
  pathlib.Path(job["out"]).write_text(json.dumps({"loss": float(loss),
                                                  "weight_sum": weight_sum}))
  return 0


if __name__ == "__main__":
  sys.exit(main())
