"""Line-completion points, their seqio task, and its eval through mesh_transformer_main."""

import json
import os
import subprocess

import pytest
import seqio
import tensorflow as tf

import code_t5  # pylint: disable=unused-import  (registers the tasks)
from code_t5.data import flcc
from code_t5.data import line_completion
from code_t5.data import line_completion_data
from code_t5.data import postprocessors
from code_t5.data import sources
from code_t5.data import spm_vocabulary
from code_t5.data import tasks
from code_t5.data import vocab
from code_t5.evaluation import baseline

SPM_TASK = "flcc_py_line_completion_spm_dev_v1"


def model_input_ids(context, vocabulary, length):
  """The context as the seqio task cuts it, in Python: the last `length - 1` pieces (EOS takes the
  last slot) of its last MAX_CHARS_PER_TOKEN * length characters (line_completion.py)."""
  window = context[-line_completion.MAX_CHARS_PER_TOKEN * length:] if length else ""
  ids = list(vocabulary.encode(window))
  return ids[len(ids) - (length - 1):] if len(ids) > length - 1 else ids


@pytest.fixture(scope="module")
def held_out_files():
  return [f for split in ("validation", "test") for f in flcc.read_files(sources.DEV_ROOT,
                                                                          only_split=split)]


# Point selection (pure Python).


def test_points_are_deterministic_and_depend_only_on_the_file(held_out_files):
  f = held_out_files[0]
  first = line_completion.select_points(f.text, f.repo, f.path)
  assert first == line_completion.select_points(f.text, f.repo, f.path)
  assert [p for _, p in line_completion.points_of_files(held_out_files[:1])] == first
  assert [p for g, p in line_completion.points_of_files(held_out_files) if g is f] == first
  assert first != line_completion.select_points(f.text, f.repo, f.path, seed=1)
  assert first != line_completion.select_points(f.text, f.repo, f.path + "x")


def test_every_point_is_context_plus_the_rest_of_its_line(held_out_files):
  kinds = {kind: 0 for kind in line_completion.KINDS}
  for f in held_out_files:
    points = line_completion.select_points(f.text, f.repo, f.path)
    assert points == sorted(points, key=lambda p: p.cursor)
    assert sum(p.kind == "line_start" for p in points) <= line_completion.START_POINTS_PER_FILE
    assert sum(p.kind == "inside" for p in points) <= line_completion.INSIDE_POINTS_PER_FILE
    for p in points:
      text = f.text
      context, target = p.context(text), p.target(text)
      assert context + target + text[p.end:] == text
      assert "\n" not in target and target.strip()
      assert p.end == len(text) or text[p.end] == "\n"
      line_start = context.rfind("\n") + 1
      assert p.line == text.count("\n", 0, p.cursor) + 1
      typed = context[line_start:]
      line_code = text[line_start:p.end].lstrip(" \t\f")
      assert sum(not c.isspace() for c in line_code) >= line_completion.MIN_LINE_CHARS
      if p.kind == "line_start":
        assert typed.strip(" \t\f") == "" and target == line_code
      else:
        assert typed.strip() and target.strip() and target != line_code
      kinds[p.kind] += 1
  assert kinds["line_start"] > 100 and kinds["inside"] > 100


def test_synthetic_file_skips_blank_and_short_lines_and_keeps_tabs():
  text = "def f():\n\tif x:\n\t\treturn 'é🙂'\n\n   \n)\n  y\nlast = 1"
  points = line_completion.select_points(text, "o/r", "f.py", start_points=10, inside_points=10)
  starts = {p.target(text) for p in points if p.kind == "line_start"}
  assert starts == {"def f():", "if x:", "return 'é🙂'", "last = 1"}  # not ")", "y", blanks
  for p in points:
    if p.kind == "inside":
      assert p.target(text) and p.context(text)[-1] not in "\n\t"


def test_left_truncation_keeps_the_end_of_the_context():
  context = "".join(f"line_{i} = {i}\n" for i in range(500)) + "    value = compu"
  for vocabulary, min_chars in ((vocab.byte_vocabulary(), 31),
                                (spm_vocabulary.dev_spm_vocabulary(), 60)):
    ids = model_input_ids(context, vocabulary, 32)
    assert len(ids) == 31  # one slot is left for EOS
    kept = vocabulary.decode(ids)
    assert context.endswith(kept) and len(kept) >= min_chars  # the end, not the start
  short = "x = 1\n"
  assert vocab.byte_vocabulary().decode(
      model_input_ids(short, vocab.byte_vocabulary(), 32)) == short


# The seqio task.


pytestmark = pytest.mark.usefixtures("tasks_use_prepared_dir")


@pytest.mark.parametrize("task_name", [tasks.LINE_COMPLETION, SPM_TASK])
def test_task_examples_are_the_points_left_truncated_with_eos(task_name):
  lengths = {"inputs": 48, "targets": 24}
  task = seqio.get_mixture_or_task(task_name)
  assert set(task.splits) == {"train", "validation", "test"}
  vocabulary = task.output_features["inputs"].vocabulary
  examples = list(task.get_dataset(lengths, split="validation", shuffle=False).as_numpy_iterator())
  files = list(flcc.read_files(sources.DEV_ROOT, only_split="validation"))
  points = list(line_completion.points_of_files(files))
  assert len(examples) == len(points) > 100
  for ex, (f, p) in zip(examples, points):
    inputs, targets = list(ex["inputs"]), list(ex["targets"])
    assert 1 <= len(inputs) <= lengths["inputs"] and inputs[-1] == vocabulary.eos_id  # may be empty
    assert 2 <= len(targets) <= lengths["targets"] and targets[-1] == vocabulary.eos_id
    assert inputs[:-1] == list(model_input_ids(p.context(f.text), vocabulary,
                                                               lengths["inputs"]))
    assert ex["targets_pretokenized"].decode("utf-8") == p.target(f.text)
    assert targets[:-1] == list(vocabulary.encode(p.target(f.text)))[:lengths["targets"] - 1]
    assert ex["inputs_pretokenized"] == vocabulary.decode_tf(tf.constant(inputs[:-1])).numpy()


def test_sampled_files_are_spread_and_independent_of_order(held_out_files):
  repos = {f.repo for f in held_out_files}
  sample = line_completion.sample_files(held_out_files, 8)
  assert len(sample) == 8 and len({f.repo for f in sample}) >= min(3, len(repos))
  assert [f for f in held_out_files if f in sample] == sample  # in the files' order
  assert {f.path for f in line_completion.sample_files(held_out_files[::-1], 8)} == {
      f.path for f in sample}
  assert set(map(id, sample)) <= set(map(id, line_completion.sample_files(held_out_files, 12)))
  assert line_completion.sample_files(held_out_files, None) == held_out_files


def test_line_postprocessor_cuts_decodes_at_the_first_newline():
  line = postprocessors.line_to_json_line
  assert postprocessors.from_json_line(line(b"x = 1\n    y = 2")) == "x = 1"
  assert postprocessors.from_json_line(line("a\tb\r\nc")) == "a\tb\r"
  assert postprocessors.from_json_line(line("return x", is_target=True)) == "return x"


# Eval through mesh_transformer_main, on the session's tiny checkpoints.


def _eval(experiment, model_dir, extra_params=()):
  log = model_dir / "eval_line_completion.log"
  with open(log, "w") as out:
    result = subprocess.run(
        experiment.eval_command(line_completion=True, extra_gin_params=[
            "mesh_eval_dataset_fn.num_eval_examples = 16",
            "Bitransformer.decode.max_decode_length = 8",
            "Unitransformer.sample_autoregressive.max_steps = 8", *extra_params]),
        stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
  text = log.read_text()
  assert result.returncode == 0, text[-3000:]
  return text


@pytest.mark.parametrize("model", ["shared-prefix_lm", "prefix_lm"])
def test_eval_reports_the_line_completion_metrics(tiny_run, model, tmp_path):
  experiment, model_dir = tiny_run(model)
  log = _eval(experiment, model_dir)
  for metric in ("exact_match", "edit_similarity", "prefix_match_chars", "prefix_match_ratio"):
    assert f"eval/{tasks.LINE_COMPLETION}/{metric} at step" in log
  eval_dir = model_dir / f"validation_eval_{line_completion.eval_dir_suffix('dataset-dev')}"
  targets = (eval_dir / f"{tasks.LINE_COMPLETION}_targets").read_text().splitlines()
  predictions = sorted(eval_dir.glob(f"{tasks.LINE_COMPLETION}_*_predictions"))[-1]
  predictions = predictions.read_text().splitlines()
  assert len(targets) == len(predictions) == 16
  assert all("\n" not in postprocessors.from_json_line(p) for p in predictions)

  if model != "shared-prefix_lm":
    return
  # `code-t5 baseline --model-dir` scores the same points and puts the model beside the baselines.
  out = tmp_path / "results.json"
  results = baseline.evaluate(sources.DEV_ROOT, model_dirs=[model_dir], echo=lambda _: None)
  baseline.write_json(results, out, force=False)
  systems = json.loads(out.read_text())["systems"]
  model_system = systems[f"model:{model_dir.name}"]
  assert model_system["points"] == 16 and model_system["task"] == tasks.LINE_COMPLETION
  assert set(model_system["metrics"]) == {"all", *line_completion.KINDS}
  assert {"empty", "ngram"} <= set(systems)


def test_points_of_a_split_in_several_shards_come_in_the_readers_order(tmp_path):
  # The shards are dealt the reader's files in turn; read one after another, the points came in
  # another order than the baseline's, which then refused a model's eval as another root's.
  prepared = sources.prepare(sources.flcc_dataset(root=sources.DEV_ROOT, prepared_dir=tmp_path,
                                                  shard_bytes=50_000))
  assert len(prepared.shards["validation"]) > 2
  records = tf.data.TFRecordDataset(str(
      line_completion_data.prepare_points(prepared, "validation") / "points.tfrecord"))
  written = [(tf.train.Example.FromString(r.numpy()).features.feature["path"]
              .bytes_list.value[0].decode()) for r in records]
  files = flcc.read_files(sources.DEV_ROOT, only_split="validation")
  assert written == list(dict.fromkeys(f.path for f, _ in line_completion.points_of_files(files)))
