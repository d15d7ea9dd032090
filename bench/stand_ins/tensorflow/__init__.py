"""A numpy stand-in for the little of TensorFlow that two of the vendor's per-API data scripts use
(matmul_ibshareB's golden matmul through tf.compat.v1 placeholders and a Session; add_broadcast's
tf.bfloat16.as_numpy_dtype as a dictionary key), so that their gen_data.py runs unmodified where
TensorFlow is not installed. bench/ascendc_vendor_examples.py puts this directory on PYTHONPATH only
after such a script failed to import tensorflow. float32 arithmetic, as the scripts feed float32.
Anything else a script asks of it raises, naming the missing name."""
import numpy as np


class _Node:
    def __init__(self, fn, *inputs):
        self.fn, self.inputs = fn, inputs

    def eval(self, feed):
        if self in feed:
            return np.asarray(feed[self], dtype=np.float32)
        return self.fn(*(i.eval(feed) if isinstance(i, _Node) else i for i in self.inputs))


def _placeholder(dtype, shape=None, name=None):
    node = _Node(None)
    node.fn = lambda: (_ for _ in ()).throw(ValueError("tensorflow stand-in: placeholder not fed"))
    return node


class _Session:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def run(self, fetch, feed_dict=None):
        return fetch.eval(feed_dict or {})


class _V1:
    placeholder = staticmethod(_placeholder)
    Session = _Session

    @staticmethod
    def disable_eager_execution():
        pass


class _Compat:
    v1 = _V1


compat = _Compat


def matmul(a, b, transpose_a=False, transpose_b=False):
    def mm(x, y):
        x = np.swapaxes(x, -1, -2) if transpose_a else x
        y = np.swapaxes(y, -1, -2) if transpose_b else y
        return np.matmul(x.astype(np.float32), y.astype(np.float32))
    return _Node(mm, a, b)


def add(a, b):
    return _Node(lambda x, y: (np.asarray(x, np.float32) + np.asarray(y, np.float32)), a, b)


class _BFloat16:
    """tf.bfloat16: only its as_numpy_dtype, a type distinct from numpy's (the scripts use it as a key)."""
    class as_numpy_dtype:  # noqa: N801
        pass


bfloat16 = _BFloat16


def __getattr__(name):
    raise AttributeError("tensorflow stand-in (bench/stand_ins): no %r; install TensorFlow for this script" % name)
