"""The token n-gram model of the model-free line-completion baseline."""

import collections

import numpy as np
import pytest

from code_t5.data import flcc
from code_t5.data import line_completion
from code_t5.data import sources
from code_t5.evaluation import ngram


def test_tokens_cover_the_text_exactly():
  for f in flcc.read_files(sources.DEV_ROOT, only_split="validation"):
    assert "".join(ngram.tokenize(f.text)) == f.text
  assert ngram.tokenize("    x_1 = f(a)\n") == ["    ", "x_1", " ", "=", " ", "f", "(", "a",
                                                     ")", "\n"]


def test_ngram_completes_lines_it_has_seen_and_heals_a_typed_word():
  model = ngram.NgramModel().fit(["def f(x):\n    return x + 1\n"] * 3)
  assert model.complete("def f(x):\n    ") == "return x + 1"
  assert model.complete("def f(x):\n    ret") == "urn x + 1"
  assert model.complete("def f(x):\n    return x ") == "+ 1"
  assert model.complete("") == "def f(x):"


class _ReferenceNgram(ngram.NgramModel):
  """The Counter-based n-gram NgramModel was before it scaled (kept here as the specification)."""

  def fit(self, texts):
    counts = collections.defaultdict(collections.Counter)
    for text in texts:
      tokens = ["\n"] + ngram.tokenize(text)
      for i in range(1, len(tokens)):
        for n in range(0, self.order):
          if i - n < 0:
            break
          counts[tuple(tokens[i - n:i])][tokens[i]] += 1
    self.best = {context: counter.most_common(ngram.TOP_CONTINUATIONS)
                 for context, counter in counts.items()}
    return self

  def continuations(self, context):
    return [token for token, _ in self.best.get(tuple(context), ())]


def _assert_same_tables(reference, model):
  for context, best in reference.best.items():
    assert model.continuations(context) == [token for token, _ in best], context
  assert sum(model.stats["contexts"]) == len(reference.best)


@pytest.fixture(scope="module")
def dev_train_texts():
  return [f.text for f in flcc.read_files(sources.DEV_ROOT, only_split="train")]


def test_ngram_is_the_counter_model_on_dataset_dev(dev_train_texts):
  reference = _ReferenceNgram().fit(dev_train_texts)
  model = ngram.NgramModel().fit(iter(dev_train_texts))
  _assert_same_tables(reference, model)
  files = list(flcc.read_files(sources.DEV_ROOT, only_split="validation"))
  points = list(line_completion.points_of_files(files))
  assert len(points) == 192
  for source_file, point in points:
    context = point.context(source_file.text)
    assert model.complete(context) == reference.complete(context)
  assert model.stats["files"] == len(dev_train_texts)
  assert model.stats["tokens"] == sum(len(ngram.tokenize(t)) for t in dev_train_texts)


@pytest.mark.parametrize("order", [1, 2, 3, 5])
def test_ngram_of_any_order_is_the_counter_model(dev_train_texts, order):
  texts = dev_train_texts[:20]
  _assert_same_tables(_ReferenceNgram(order).fit(texts), ngram.NgramModel(order).fit(texts))


def test_equal_counts_rank_by_first_occurrence_and_top_continuations_are_kept():
  # After "=", "b" and "a" occur twice each and "c" three times: c, then b (seen first), then a.
  model = ngram.NgramModel().fit(["x=b\nx=a\n", "x=c\nx=b\nx=c\nx=a\nx=c\n"])
  assert model.continuations(["x", "="]) == ["c", "b", "a"]
  assert model.continuations(["="]) == ["c", "b", "a"]
  assert model.complete("x=") == "c"
  # Counts tie across files too, and only TOP_CONTINUATIONS of 40 continuations are kept: the
  # ones that occur twice (in order of first occurrence), then the first of those seen once.
  words = [f"w{i}" for i in range(40)]
  texts = ["".join(f"k {w}\n" for w in words), "".join(f"k {w}\n" for w in words[::-3])]
  model = ngram.NgramModel().fit(texts)
  twice = [w for w in words if w in words[::-3]]
  expected = (twice + [w for w in words if w not in twice])[:ngram.TOP_CONTINUATIONS]
  assert model.continuations(["k", " "]) == expected
  _assert_same_tables(_ReferenceNgram().fit(texts), model)


def test_contexts_do_not_cross_files_and_unknown_tokens_back_off():
  texts = ["a b", "c d\n"]
  model = ngram.NgramModel().fit(texts)
  assert model.continuations(["b"]) == []  # "b" ends its file: nothing follows it
  assert model.continuations(["\n"]) == ["a", "c"]  # every file starts like a line
  assert model.continuations(["b", "\n"]) == []
  assert model.next_token(["never", "seen", " "]) == "b"  # backs off to " ": b, d (a tie)
  assert model.continuations([" "]) == ["b", "d"]
  assert model.complete("zzz q") == ""  # healing "q": no token starts with it
  # Heals "a" from the empty context, then " b", then "b" ends a file: back off to " " etc.
  assert model.complete("zzz a") == _ReferenceNgram().fit(texts).complete("zzz a")
  assert model.complete("zzz a").startswith(" b b")
  assert ngram.NgramModel().fit([]).complete("x") == ""


def test_healing_extends_the_typed_word_from_the_longest_context_that_has_one():
  texts = ["if x:\n    return value\n"] * 2 + ["if x:\n    raise Error\n"] + ["r = result\n"]
  model = ngram.NgramModel().fit(texts)
  reference = _ReferenceNgram().fit(texts)
  for typed in ["if x:\n    ", "if x:\n    r", "if x:\n    ra", "if x:\n    rai", "r = re",
                "q = res", "r = valu", "if x:\n    return v", "zz"]:
    assert model.complete(typed) == reference.complete(typed), typed
  assert model.complete("if x:\n    ") == "return value"
  assert model.complete("if x:\n    ra") == "ise Error"
  assert model.complete("q = res") == "ult"


def test_a_saved_model_loads_as_the_same_model(dev_train_texts, tmp_path):
  model = ngram.NgramModel().fit(dev_train_texts)
  model.save(tmp_path / "model.npz", key="k1")
  loaded = ngram.NgramModel.load(tmp_path / "model.npz", key="k1")
  assert loaded.stats == model.stats and loaded._tokens == model._tokens
  files = list(flcc.read_files(sources.DEV_ROOT, only_split="validation"))
  for source_file, point in line_completion.points_of_files(files):
    context = point.context(source_file.text)
    assert loaded.complete(context) == model.complete(context)
  for order in (1, 2, 5):  # and other orders, and a model of nothing
    for texts in (dev_train_texts[:5], []):
      small = ngram.NgramModel(order).fit(texts)
      small.save(tmp_path / "small.npz")
      again = ngram.NgramModel.load(tmp_path / "small.npz")
      assert again.order == order and again.complete("def ") == small.complete("def ")
      assert again.continuations(["\n"]) == small.continuations(["\n"])


def test_a_damaged_or_foreign_model_file_is_one_line_error(tmp_path):
  path = tmp_path / "model.npz"
  model = ngram.NgramModel().fit(["def f(x):\n    return x + 1\n", "x = f(2)\n"] * 3)
  model.save(path, key="k1")
  good = path.read_bytes()
  with pytest.raises(ngram.ModelFileError, match="its key is 'k1', not 'k2'"):
    ngram.NgramModel.load(path, key="k2")
  for data in [b"", b"not a zip", good[:len(good) // 2], good[:-1]]:
    path.write_bytes(data)
    with pytest.raises(ngram.ModelFileError) as error:
      ngram.NgramModel.load(path)
    assert "\n" not in str(error.value)
  # A flipped byte (every 7th): an error, or (in zip header fields the reader ignores) the same model;
  # the arrays are checked by the zip's CRC-32 and by load.
  failed = 0
  for at in range(0, len(good), 7):
    path.write_bytes(good[:at] + bytes([good[at] ^ 0x55]) + good[at + 1:])
    try:
      loaded = ngram.NgramModel.load(path)
    except ngram.ModelFileError as error:
      assert "\n" not in str(error)
      failed += 1
      continue
    assert loaded._tokens == model._tokens and loaded.stats == model.stats
    for ours, theirs in zip(loaded._offsets + loaded._next + loaded._gram_keys,
                            model._offsets + model._next + model._gram_keys):
      np.testing.assert_array_equal(ours, theirs)
  assert failed > len(good) // 14
