"""code_t5.engine.sorting: entries sorted by key as a stable sort of the keys would order them."""

import numpy as np

from code_t5.engine import sorting


def test_entries_of_one_key_keep_their_order_as_a_stable_sort_keeps_it():
  # The copy cache keeps the last or the nearest places of a context, the similar code the
  # first window of the best: both read a key's entries in their order.
  rng = np.random.default_rng(0)
  for width, n in ((8, 5000), (300, 100_000), (1 << 31, 1000)):  # the last: past 63 bits
    keys = rng.integers(0, width, n).astype(np.int64) * width + rng.integers(0, width, n)
    values = np.sort(rng.choice(4 * n, n, replace=False)).astype(np.int64) + 1
    order = np.argsort(keys, kind="stable")
    got_keys, got_values = sorting.by_key(keys, values)
    assert np.array_equal(got_keys, keys[order]) and np.array_equal(got_values, values[order])
  empty = np.zeros(0, np.int64)
  assert [len(a) for a in sorting.by_key(empty, empty)] == [0, 0]
