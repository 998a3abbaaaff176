"""Multi-device meshes on one CPU: data- and model-parallel layouts train to the same losses.

(And so do Mesh TF's one-hot embedding lookup, its attention layout, its softmax and its ReLU
gradient in place of runs/cpu.gin's gather, heads-first attention, fused softmax and one-pass ReLU
gradient.)

The CPU is split into several TF devices (runs/cpu_x2.gin, cpu_x4.gin); every layout starts from
the same weights (the 1-device run's step-0 checkpoint), reads the same batches (fixed input seed)
and has no dropout, so the per-step losses may differ only by float summation order. (That needs
runs/cpu.gin's `code_t5.updates_after_backward`: with Mesh TF's own update ordering, two identical
1-device runs already differ by up to 6 % after one step; and `code_t5.train_model`'s step
increment after the step's reads of the step.)
"""

import pathlib

import pytest

from code_t5.training import launcher

STEPS = 3
# Same data, same init, no dropout: only what a layout changes about float rounding may differ.
# Float32 products: with runs/cpu.gin's bf16 products on a CPU with AMX
# (code_t5/training/precision.py) Mesh TF's attention layout rounds other operands to bfloat16
# than heads-first attention does, and the step-0 losses differed by 1.2e-5 of the loss.
COMMON = ["dropout_rate = 0.0", "mesh_train_dataset_fn.seed = 1234",
          "utils.run.save_checkpoints_steps = 1000", "code_t5.products_precision.mode = 'fp32'"]
LAYOUTS = {  # name: (runs/ file, extra bindings)
    "model:1,batch:2": ("cpu_x2", []),
    "model:1,batch:4": ("cpu_x4", []),
    "model:2,batch:1": ("cpu_x2", ["utils.run.mesh_shape = 'model:2,batch:1'"]),
    # Not a layout: Mesh TF's own one-hot embedding lookup in place of runs/cpu.gin's gather
    # (code_t5/training/embeddings.py), which must train to the same losses.
    "model:1,batch:1, one-hot embedding lookup": (
        "cpu", ["get_vocab_embedding_cls.cls = @code_t5.OneHotVocabEmbedding"]),
    # Nor this: Mesh TF's own attention layout ([batch, length, heads, memory_length] logits)
    # in place of runs/cpu.gin's heads first (code_t5/training/attention.py), the same math.
    "model:1,batch:1, Mesh TF's attention layout": ("cpu", ["code_t5.attention.heads_first = False"]),
    # Nor this: Mesh TF's softmax, cross-entropy and ReLU gradient in place of runs/cpu.gin's
    # fused ones (code_t5/training/softmax.py, activations.py), the same math.
    "model:1,batch:1, Mesh TF's softmax and ReLU": (
        "cpu", ["code_t5.attention.fused_softmax = False",
                "code_t5.loss_per_target_token.fused = False",
                "code_t5.relu.one_pass_gradient = False"]),
}


def _train(model_dir: pathlib.Path, run: str, prepared_dir, params=()):
  """The losses of a tiny shared-prefix_lm run of STEPS steps, in step order, and its log.

  (In printed order: the step number Mesh TF prints beside a loss is read without ordering
  against the step's own global_step increment, so it is sometimes one less.)"""
  experiment = launcher.Experiment(run=run, model_dir=model_dir, gin_params=[
      f"code_t5.flcc_dataset.prepared_dir = '{prepared_dir}'", *COMMON, *params])
  table = model_dir / "losses.tsv"
  log = model_dir / "train.log"
  code = launcher.run(experiment.train_command(STEPS), log, echo=lambda *_: None,
                      loss_table=table)
  assert code == 0, log.read_text()[-4000:]
  losses = [float(line.split("\t")[1]) for line in table.read_text().splitlines()]
  assert len(losses) == STEPS
  return losses, log.read_text()


@pytest.fixture(scope="module")
def reference(tmp_path_factory, prepared_dir):
  """The 1-device run (runs/cpu.gin, model:1,batch:1): losses and its step-0 checkpoint."""
  model_dir = tmp_path_factory.mktemp("mesh-reference")
  losses, _ = _train(model_dir, "cpu", prepared_dir)
  return losses, model_dir / "model.ckpt-0"


@pytest.mark.parametrize("layout", ["model:1,batch:1 again", *LAYOUTS])
def test_layout_trains_to_the_same_losses_as_one_device(layout, reference, tmp_path,
                                                       prepared_dir):
  expected, init = reference
  run, params = LAYOUTS.get(layout, ("cpu", []))
  losses, log = _train(tmp_path, run, prepared_dir,
                       [*params, f"utils.run.init_checkpoint = '{init}'"])
  print(f"{layout}: {losses}  (1 device: {expected})")
  assert "Variables in graph but not in" in log  # Mesh TF read the init checkpoint ...
  # Step 1's loss is a forward pass of the same weights over the same batch: a layout may change
  # only float32 summation order (seen up to 2e-7 relative). Later steps follow Adafactor
  # updates, which scale each weight's step by its gradient's running RMS and so amplify that
  # order to 1e-5 (model:2, one-hot lookup) and 1.2e-4 (model:2, gather lookup), each seen once
  # in clean-clone CI runs of unchanged code. A wrong layout or a misread batch moves losses by
  # percents: at step 1 already where the forward pass is wrong, from step 2 where gradients are.
  assert losses[0] == pytest.approx(expected[0], rel=1e-5)
  assert losses[1:] == pytest.approx(expected[1:], rel=1e-3)
  if run != "cpu":
    devices = int(run[-1])
    assert f"code_t5.train_model: {devices} CPU devices, soft placement False" in log
