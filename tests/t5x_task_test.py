"""code_t5/convert/t5x_task.py: the project's vocabulary and tasks in plain seqio, for T5X.

Proven here on dataset-dev, against the project's own classes and registered tasks:
* the vocabulary binding (seqio.SentencePieceVocabulary(file, extra_ids=100)) gives the project's
  ids on every file, in Python and in TensorFlow (what T5X's tokenize runs), sentinels included;
  it differs on exactly two spellings, which no file holds: a literal "▁" (read as a space) and
  " <extra_id_N>" (read as a sentinel);
* its FLCC reader yields the project's files, in the project's order, for each split;
* its tasks yield the project's tasks' examples for the same texts: cursor_lm as one targets-only
  sequence (inputs + targets, as Mesh TF's delimited_lm joins them) and as inputs/targets, v4's
  code below the cursor's line included, prefix_lm and span_corruption;
* it imports nothing of code_t5 (run with code_t5 made unimportable).
"""

import contextlib
import importlib.util
import os
import pathlib
import random
import subprocess
import sys

import gin
import numpy as np
import pytest
import seqio
import tensorflow as tf

import code_t5  # pylint: disable=unused-import  (registers the project's tasks)
from code_t5 import test_utils
from code_t5.data import flcc
from code_t5.data import line_completion
from code_t5.data import near_copies
from code_t5.data import preprocessors
from code_t5.data import sources
from code_t5.data import spm_vocabulary
from code_t5.data import task_names
from code_t5.data import tasks
from code_t5.data import vocab

REPO = pathlib.Path(__file__).resolve().parent.parent
MODULE = REPO / "code_t5" / "convert" / "t5x_task.py"
LENGTHS = {"inputs": 256, "targets": 256}  # the shipped model's run.sequence_length
SEED = 7


def _load_module():
  """The module as T5X imports it: a top-level `t5x_task`, from its file."""
  spec = importlib.util.spec_from_file_location("t5x_task", MODULE)
  module = importlib.util.module_from_spec(spec)
  sys.modules["t5x_task"] = module
  spec.loader.exec_module(module)
  return module


t5x_task = _load_module()


@pytest.fixture(scope="module")
def project_vocabulary():
  return spm_vocabulary.dev_spm_vocabulary()


@pytest.fixture(scope="module")
def seqio_vocabulary():
  return t5x_task.vocabulary(str(vocab.DEV_SPM_MODEL))


@pytest.fixture(scope="module")
def dev_texts():
  return [f.text for f in flcc.read_files(sources.DEV_ROOT)]


# ---------------------------------------------------------------- the vocabulary

def test_vocabulary_gives_the_project_ids_on_every_dev_file(project_vocabulary, seqio_vocabulary,
                                                            dev_texts):
  assert len(dev_texts) == 318
  assert not any(vocab.SPACE_SYMBOL in text or "<extra_id_" in text for text in dev_texts)
  assert isinstance(seqio_vocabulary, seqio.SentencePieceVocabulary)
  assert type(seqio_vocabulary) is not type(project_vocabulary)
  compared = 0
  for text in dev_texts:
    ids = project_vocabulary.encode(text)
    assert seqio_vocabulary.encode(text) == ids
    compared += len(ids)
  assert compared > 800_000
  # TensorFlow's encoder (seqio's tokenize, what T5X runs) on the same files.
  encoded = seqio_vocabulary.encode_tf(tf.constant(dev_texts))
  for text, ids in zip(dev_texts, encoded):
    assert ids.numpy().tolist() == project_vocabulary.encode(text)


def test_vocabulary_sentinels_and_size_are_the_project_ones(project_vocabulary, seqio_vocabulary):
  assert seqio_vocabulary.vocab_size == project_vocabulary.vocab_size == 8100
  assert seqio_vocabulary.extra_ids == project_vocabulary.extra_ids == vocab.NUM_EXTRA_IDS
  for special in ("pad_id", "eos_id", "unk_id"):
    assert getattr(seqio_vocabulary, special) == getattr(project_vocabulary, special)
  # seqio's span corruption takes sentinel N as vocab_size - 1 - N (t5's sentinel_id): the
  # piece "▁<extra_id_N>" of seqio's model sits exactly there.
  for n in range(vocab.NUM_EXTRA_IDS):
    sentinel = project_vocabulary.vocab_size - 1 - n
    assert seqio_vocabulary.tokenizer.piece_to_id(f"▁<extra_id_{n}>") == sentinel
    assert project_vocabulary.decode([sentinel]) == ""


def _with_symbol(text, rng, count=3):
  positions = sorted(rng.sample(range(len(text) + 1), count))
  parts = [text[i:j] for i, j in zip([0] + positions, positions + [len(text)])]
  return vocab.SPACE_SYMBOL.join(parts)


def test_vocabulary_reads_a_literal_space_symbol_as_a_space(project_vocabulary, seqio_vocabulary,
                                                            dev_texts):
  """The one difference on code: plain SentencePiece turns "▁" into a space; the project keeps
  it (its three UTF-8 byte pieces)."""
  rng = random.Random(0)
  symbol_bytes = [project_vocabulary.tokenizer.piece_to_id(f"<0x{b:02X}>")
                  for b in vocab.SPACE_SYMBOL.encode("utf-8")]
  for text in dev_texts:
    marked = _with_symbol(text[:2000], rng)
    ids = seqio_vocabulary.encode(marked)
    assert ids != project_vocabulary.encode(marked)
    assert ids == project_vocabulary.encode(marked.replace(vocab.SPACE_SYMBOL, " "))
    assert project_vocabulary.decode(project_vocabulary.encode(marked)) == marked
  parts = text[:50], text[50:100]
  assert project_vocabulary.encode(vocab.SPACE_SYMBOL.join(parts)) == (
      project_vocabulary.encode(parts[0]) + symbol_bytes + project_vocabulary.encode(parts[1]))


def test_vocabulary_reads_a_sentinel_spelling_after_a_space_as_the_sentinel(project_vocabulary,
                                                                           seqio_vocabulary):
  """The other: seqio's sentinel pieces are "▁<extra_id_N>"; the project never encodes text to
  a sentinel. Without the space before it, the spelling is text in both."""
  for n in (0, 7, 99):
    text = f"x = ' <extra_id_{n}>'\n"
    sentinel = seqio_vocabulary.vocab_size - 1 - n
    assert sentinel in seqio_vocabulary.encode(text)
    assert sentinel not in project_vocabulary.encode(text)
    glued = f"x = '<extra_id_{n}>'\n"
    assert seqio_vocabulary.encode(glued) == project_vocabulary.encode(glued)


# ---------------------------------------------------------------- the files

def test_its_copies_of_the_project_constants_are_the_project_ones():
  # The module must run without code_t5, so it copies what its reader and cursor task read from
  # code_t5.data; dataset-dev alone (the tests below) has no file that a drifted generated-code
  # marker or limit would treat differently, so the copies are compared here.
  defaults = flcc.Filters()
  assert (t5x_task.MAX_FILE_BYTES, t5x_task.MAX_LINE_CHARS, t5x_task.MAX_MEAN_LINE_CHARS) == (
      defaults.max_file_bytes, defaults.max_line_chars, defaults.max_mean_line_chars)
  assert t5x_task._GENERATED.pattern == flcc._GENERATED.pattern  # pylint: disable=protected-access
  assert t5x_task._GENERATED_HEAD_CHARS == flcc._GENERATED_HEAD_CHARS  # pylint: disable=protected-access
  assert t5x_task._DEV_NULL == flcc.DEV_NULL  # pylint: disable=protected-access
  assert t5x_task._MIN_REPOS_FOR_HELD_OUT == flcc.MIN_REPOS_FOR_HELD_OUT  # pylint: disable=protected-access
  assert t5x_task.MAX_CHARS_PER_TOKEN == line_completion.MAX_CHARS_PER_TOKEN
  assert t5x_task._BYTES_PER_TOKEN == preprocessors._BYTES_PER_TOKEN  # pylint: disable=protected-access
  # v4's: a drifted count or separator reads a different context than the project trained on.
  assert t5x_task.BELOW_TOKENS == task_names.BELOW_TOKENS
  assert (t5x_task.MAX_DEPTH, t5x_task.MAX_PATHS_JSON_BYTES) == (flcc.MAX_DEPTH,
                                                               flcc.MAX_PATHS_JSON_BYTES)
  assert (t5x_task.NEAR_COPY_MIN_CHARS, t5x_task.NEAR_COPY_MIN_LONG_LINES) == (
      near_copies.MIN_CHARS, near_copies.MIN_LONG_LINES)
  for f in flcc.read_files(sources.DEV_ROOT, only_split="test"):
    assert t5x_task._long_lines(f.text) == near_copies.long_lines(f.text)  # pylint: disable=protected-access
  for size in (t5x_task.vocabulary().vocab_size, 8100, 32_100):
    assert t5x_task.below_separator(size) == task_names.below_separator(size)


@pytest.mark.parametrize("split, count", [("train", 285), ("validation", 24), ("test", 9)])
def test_reader_yields_the_project_files_in_its_order(split, count):
  expected = [f.text for f in flcc.read_files(sources.DEV_ROOT, only_split=split)]
  assert len(expected) == count
  assert list(t5x_task.read_files(str(sources.DEV_ROOT), split)) == expected


def test_reader_reads_a_strangers_root_as_the_project_does(tmp_path):
  """Links, a FIFO, a sparse paths.json and folders nested past the recursion limit: read as the
  project's reader reads them (helper-25's audit: a link put a file of the user's in the training
  text, a FIFO blocked for good, a 20 GB paths.json was asked for whole)."""
  secret = tmp_path / "secret.py"
  secret.write_text("SECRET = 'hunter2'\n")
  repos = {test_utils.repo_in_split("train", skip=i): {"m.py": f"value = {i}\n"} for i in range(3)}
  root = test_utils.make_flcc_tree(tmp_path / "root", repos)
  first = test_utils.dataset_file(root, test_utils.repo_in_split("train"), "m.py").parent
  (first / "link.py").symlink_to(secret)
  (first / "folder").symlink_to(tmp_path)
  os.mkfifo(first / "pipe.py")
  with test_utils.folder_chain(first / "deep", sys.getrecursionlimit() + 100) as bottom:
    (bottom / "deep.py").write_text("deep = 1\n")
    meta = root / "v3" / "repositories" / test_utils.repo_in_split("train", skip=1)
    [paths_json] = meta.glob("*/paths.json")
    with open(paths_json, "r+b") as f:
      f.truncate(t5x_task.MAX_PATHS_JSON_BYTES + 1)  # sparse: a few kB on disk
    splits = flcc.Splits(validation=0.0, test=0.0)
    expected = [f.text for f in flcc.read_files(root, splits=splits, only_split="train")]
    got = list(t5x_task.read_files(str(root), "train", 0.0, 0.0))
  assert got == expected and "SECRET = 'hunter2'\n" not in got
  assert "value = 1\n" not in got  # its paths.json is past the limit: no repository


def test_reader_drops_the_train_files_that_copy_a_held_out_roots_file_as_the_project_does(
    tmp_path):
  """--held-out-root in T5X: over a root whose train split holds backports of dataset-dev's
  validation and test files (whole, three quarters, a third), the reader keeps the files the
  project's reader keeps with the same held-out root and share, in its order, every split."""
  dev = {f.path: f.text for f in flcc.read_files(sources.DEV_ROOT) if f.split != "train"}
  socketserver = dev["socketserver.py"].splitlines(keepends=True)
  tracemalloc = dev["tracemalloc.py"].splitlines(keepends=True)
  root = test_utils.make_flcc_tree(tmp_path / "root", {
      test_utils.repo_in_split("train"): {
          "backports/socketserver.py": "".join(socketserver),
          "backports/tracemalloc.py": "".join(tracemalloc[:len(tracemalloc) * 3 // 4]),
          "borrows.py": "".join(tracemalloc[:len(tracemalloc) // 3]),
          "own.py": "x = 1\n"},
      test_utils.repo_in_split("validation"): {"socketserver_again.py": "".join(socketserver)},
      test_utils.repo_in_split("train", skip=1): {"other.py": "y = 2\n"}})
  for share in (0.5, 0.3):
    filters = flcc.Filters(held_out_roots=(str(sources.DEV_ROOT),), held_out_min_share=share)
    for split in flcc.SPLITS:
      expected = [f.text for f in flcc.read_files(root, filters, only_split=split)]
      assert list(t5x_task.read_files(str(root), split, held_out_roots=[str(sources.DEV_ROOT)],
                                      held_out_min_share=share)) == expected
  kept = list(t5x_task.read_files(str(root), "train", held_out_roots=str(sources.DEV_ROOT)))
  assert "".join(tracemalloc[:len(tracemalloc) // 3]) in kept and "x = 1\n" in kept
  assert not any(text.startswith(("".join(tracemalloc[:40]), "".join(socketserver[:40])))
                 for text in kept if text != "".join(tracemalloc[:len(tracemalloc) // 3]))
  # The validation copy stays: the backport dropped from train claims no content.
  assert list(t5x_task.read_files(str(root), "validation",
                                  held_out_roots=[str(sources.DEV_ROOT)])) == ["".join(socketserver)]


# ---------------------------------------------------------------- the tasks

def _project_task_on_reader_order(project_task_name, split="validation"):
  """The project's registered task (its preprocessors, vocabulary and features) over the files
  in the reader's order: what the project's task makes of the same texts."""
  texts = [f.text for f in flcc.read_files(sources.DEV_ROOT, only_split=split)]
  project = seqio.get_mixture_or_task(project_task_name)
  name = f"same_texts_{project_task_name}"
  if name in seqio.TaskRegistry.names():
    seqio.TaskRegistry.remove(name)
  source = seqio.FunctionDataSource(
      lambda split, shuffle_files, seed=None: tf.data.Dataset.from_tensor_slices(
          {"text": tf.constant(texts)}), splits=[split])
  seqio.TaskRegistry.add(name, source=source, preprocessors=project.preprocessors,
                         output_features=project.output_features)
  return _examples(name, LENGTHS, split)


def _examples(name, lengths, split="validation"):
  task = seqio.get_mixture_or_task(name)
  return list(task.get_dataset(lengths, split=split, shuffle=False, seed=SEED, use_cached=False)
              .as_numpy_iterator())


def _register(seqio_vocabulary, objective, layout, **kwargs):
  return t5x_task.register(objective, layout, root=str(sources.DEV_ROOT), vocab=seqio_vocabulary,
                           inputs_length=LENGTHS["inputs"], targets_length=LENGTHS["targets"],
                           **kwargs)


def test_cursor_lm_targets_only_is_the_project_example_joined(seqio_vocabulary):
  """The causal LM's T5X example: the project's cursor_lm (v2) inputs + targets, EOS after each,
  as one `targets` feature of 512 tokens -- the sequence Mesh TF's delimited_lm trained on."""
  project = _project_task_on_reader_order(tasks.name_of("cursor_lm", "spm_dev", "v2"))
  name = _register(seqio_vocabulary, "cursor_lm", "targets_only")
  ours = _examples(name, {"targets": sum(LENGTHS.values())})
  assert len(ours) == len(project) == 228
  compared = 0
  for mine, theirs in zip(ours, project):
    assert set(mine) == {"targets"}
    joined = np.concatenate([theirs["inputs"], theirs["targets"]])
    np.testing.assert_array_equal(mine["targets"], joined)
    assert mine["targets"][len(theirs["inputs"]) - 1] == t5x_task.EOS_ID
    compared += len(joined)
  assert compared > 100_000


def test_cursor_lm_inputs_targets_is_the_project_example(seqio_vocabulary):
  """For the encoder-decoder (models/shared-cursor_lm.gin), and v1's cursors too."""
  project = _project_task_on_reader_order(tasks.name_of("cursor_lm", "spm_dev", "v1"))
  name = _register(seqio_vocabulary, "cursor_lm", "inputs_targets", cursors_in_indentation=True)
  ours = _examples(name, LENGTHS)
  assert len(ours) == len(project) > 200
  for mine, theirs in zip(ours, project):
    for key in ("inputs", "targets"):
      np.testing.assert_array_equal(mine[key], theirs[key])


@contextlib.contextmanager
def _canonical_pieces():
  """The project's v3/v4 tasks without sampling (tokenize_with_subword_sampling.alpha 0) while
  the block runs: sampled pieces differ on each read, canonical ones compare."""
  parameter = "code_t5.tokenize_with_subword_sampling.alpha"
  with gin.unlock_config():
    gin.bind_parameter(parameter, 0.0)
  try:
    yield
  finally:
    with gin.unlock_config():
      gin.bind_parameter(parameter, 0.1)


def test_cursor_lm_v4_is_the_project_example_code_below_included(seqio_vocabulary):
  """v4 with canonical pieces: the project's examples, in both layouts -- half of the inputs
  start with the code below the cursor's line and the separator, drawn for the same examples."""
  with _canonical_pieces():
    project = _project_task_on_reader_order(tasks.name_of("cursor_lm", "spm_dev", "v4"))
  joined = _examples(_register(seqio_vocabulary, "cursor_lm", "targets_only", below_rate=0.5,
                               name="v4_joined"), {"targets": sum(LENGTHS.values())})
  apart = _examples(_register(seqio_vocabulary, "cursor_lm", "inputs_targets", below_rate=0.5,
                              name="v4_apart"), LENGTHS)
  assert len(joined) == len(apart) == len(project) == 228
  separator = t5x_task.below_separator(seqio_vocabulary.vocab_size)
  with_below = 0
  for mine, theirs, whole in zip(apart, project, joined):
    for key in ("inputs", "targets"):
      np.testing.assert_array_equal(mine[key], theirs[key])
    np.testing.assert_array_equal(whole["targets"],
                                  np.concatenate([theirs["inputs"], theirs["targets"]]))
    inputs = theirs["inputs"].tolist()
    if separator in inputs:
      with_below += 1
      assert 0 < inputs.index(separator) <= t5x_task.BELOW_TOKENS
  # The same cursors as v2 (seqio's first three seeds), half of them with the code below.
  v2 = _project_task_on_reader_order(tasks.name_of("cursor_lm", "spm_dev", "v2"))
  assert [x["targets"].tolist() for x in v2] == [x["targets"].tolist() for x in apart]
  assert 0.3 * len(project) <= with_below <= 0.65 * len(project)


def test_cursor_lm_v4_encodes_the_code_below_canonically_when_it_samples(seqio_vocabulary):
  """v4 samples the pieces of each side (v3), not those of the code below: the project's
  below_first encodes it canonically, as the engine does."""
  canonical, sampled = [
      _examples(_register(seqio_vocabulary, "cursor_lm", "inputs_targets", below_rate=0.5,
                          subword_alpha=alpha, name=f"v4_alpha_{alpha}"), LENGTHS)
      for alpha in (0.0, 0.1)]
  separator = t5x_task.below_separator(seqio_vocabulary.vocab_size)
  with_below = differ = 0
  for a, b in zip(canonical, sampled):
    a, b = a["inputs"].tolist(), b["inputs"].tolist()
    assert (separator in a) == (separator in b)
    if separator in a:
      with_below += 1
      assert a[:a.index(separator) + 1] == b[:b.index(separator) + 1]
      differ += a != b
  assert with_below > 50 and differ > 0.5 * with_below


def test_cursor_lm_subword_sampling_spells_the_same_texts(seqio_vocabulary):
  """v3: the same cursors as v2, each side's pieces sampled (BPE-dropout): same text, more ids."""
  canonical = _examples(_register(seqio_vocabulary, "cursor_lm", "targets_only",
                                  name="canonical"), {"targets": 512})
  sampled = _examples(_register(seqio_vocabulary, "cursor_lm", "targets_only", subword_alpha=0.1,
                                name="sampled"), {"targets": 512})
  assert len(sampled) == len(canonical)
  differ = 0
  for a, b in zip(canonical, sampled):
    a, b = a["targets"].tolist(), b["targets"].tolist()
    differ += a != b
    (before, after), (sampled_before, sampled_after) = [
        [seqio_vocabulary.decode(side) for side in (x[:x.index(1)], x[x.index(1) + 1:-1])]
        for x in (a, b)]
    # Both sides are cut to 255 ids, and sampled ids are shorter: the text before the cursor
    # ends the same, the text after it starts the same.
    assert before.endswith(sampled_before) and after.startswith(sampled_after)
    assert len(sampled_before) + len(sampled_after) > 0.5 * (len(before) + len(after))
  assert differ > 0.5 * len(canonical)


@pytest.mark.parametrize("objective", ["prefix_lm", "span_corruption"])
def test_t5_objectives_are_the_project_examples(objective, seqio_vocabulary):
  project = _project_task_on_reader_order(tasks.name_of(objective, "spm_dev"))
  ours = _examples(_register(seqio_vocabulary, objective, "inputs_targets"), LENGTHS)
  assert len(ours) == len(project) > 20
  for mine, theirs in zip(ours, project):
    for key in ("inputs", "targets"):
      np.testing.assert_array_equal(mine[key], theirs[key])


def test_targets_only_task_refuses_an_inputs_feature(seqio_vocabulary):
  """With `inputs`, T5X's decoder-only model would take the prefix-LM path (loss on the targets
  only): the task says so instead of training a different loss."""
  name = _register(seqio_vocabulary, "cursor_lm", "targets_only")
  with pytest.raises(ValueError, match=r"does not fit this targets_only task.*'targets': 512"):
    _examples(name, LENGTHS)
  with pytest.raises(ValueError, match="layout 'targets_only' is cursor_lm's"):
    _register(seqio_vocabulary, "prefix_lm", "targets_only")


def test_module_runs_without_code_t5(tmp_path):
  """Copied alone into a folder, with every `code_t5` import refused: imports, registers its
  tasks after gin's config is locked (as in T5X), reads dev-dataset files and yields a
  targets-only example."""
  (tmp_path / "t5x_task.py").write_bytes(MODULE.read_bytes())
  code = (
      "import sys\n"
      "class Refuse:\n"
      "  def find_spec(self, name, path=None, target=None):\n"
      "    if name == 'code_t5' or name.startswith('code_t5.'):\n"
      "      raise ImportError('code_t5 is not in a T5X environment')\n"
      "sys.meta_path.insert(0, Refuse())\n"
      "import t5x_task\n"
      # T5X registers the task once gin's config is locked (task.gin's MIXTURE_OR_TASK_NAME):
      # nothing imported then may add a gin configurable, as `import t5` does.
      "import gin\n"
      "gin.finalize()\n"
      f"vocab = t5x_task.vocabulary({str(vocab.DEV_SPM_MODEL)!r})\n"
      f"t5x_task.register('span_corruption', 'inputs_targets', {str(sources.DEV_ROOT)!r}, vocab)\n"
      f"name = t5x_task.register('cursor_lm', 'targets_only', {str(sources.DEV_ROOT)!r}, vocab,"
      " 64, 64)\n"
      "import seqio\n"
      "ds = seqio.get_mixture_or_task(name).get_dataset({'targets': 128}, split='test',"
      " shuffle=False, seed=1)\n"
      "example = next(iter(ds))\n"
      "print(name, sorted(example), int(example['targets'].shape[0]))\n"
      "print(sorted(m for m in sys.modules if m == 'code_t5' or m.startswith('code_t5.')))\n")
  result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, check=False,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3",
                                   PYTHONPATH=str(tmp_path)))
  assert result.returncode == 0, result.stderr[-3000:]
  lines = result.stdout.strip().splitlines()
  assert lines[-2].startswith("code_t5_cursor_lm_targets_only ['targets'] ")
  assert 0 < int(lines[-2].split()[-1]) <= 128
  assert lines[-1] == "[]"
