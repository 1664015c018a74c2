"""Train a LeNet-style CNN on handwritten digits, export it to .mnn and run the file.

    python -m mnn.examples.train_digits [--epochs N] [--out DIR] [--threads N]

The data is scikit-learn's bundled 8x8 digits (1797 images, shipped here as
``data/digits.npz``), upscaled to 28x28 with bilinear interpolation and split 80/20 into
train and test sets. Training uses MNN's API: ``nn.Module`` with ``nn.conv`` and
``nn.linear``, ``data.DataLoader``, ``optim.SGD`` with momentum, and a numerically
stable cross entropy. The trained network is saved twice: its parameters
(``F.save(net.parameters, ...)``, reloaded with ``F.load_as_list``) and, after
``net.train(False)``, the inference graph (``F.save([output], ...)``) which
``nn.load_module_from_file`` loads and runs on the test set.
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np

import mnn.expr as F
from mnn import data, nn, optim

DATA_FILE = os.path.join(os.path.dirname(__file__), "data", "digits.npz")
SIZE = 28


def _bilinear_matrix(src, dst):
    """``dst x src`` matrix resampling a row of ``src`` pixels to ``dst`` (align corners)."""
    pos = np.linspace(0.0, src - 1.0, dst)
    low = np.floor(pos).astype(int)
    high = np.minimum(low + 1, src - 1)
    frac = pos - low
    m = np.zeros((dst, src))
    m[np.arange(dst), low] += 1.0 - frac
    m[np.arange(dst), high] += frac
    return m


def load_digits(size=SIZE, seed=0):
    """Train and test sets: float32 images ``[n, 1, size, size]`` in [0, 1], int32 labels."""
    with np.load(DATA_FILE) as f:
        images, labels = f["images"].astype(np.float64) / 16.0, f["labels"].astype(np.int32)
    m = _bilinear_matrix(images.shape[1], size)
    big = np.einsum("ij,njk,lk->nil", m, images, m).astype(np.float32)[:, None]
    order = np.random.default_rng(seed).permutation(len(labels))
    n_test = len(labels) // 5
    test, train = order[:n_test], order[n_test:]
    return (big[train], labels[train]), (big[test], labels[test])


class ArrayDataset(data.Dataset):
    """Examples ``([image], [label])`` from two arrays, each image moved by a random shift
    of up to ``shift`` pixels per axis (augmentation: 1437 training digits are few)."""

    def __init__(self, images, labels, shift=0, seed=None):
        self.images, self.labels, self.shift = images, labels, int(shift)
        self._rng = np.random.default_rng(seed)

    def __getitem__(self, index):
        image = self.images[index]
        if self.shift:
            # The digits have empty borders wider than the shift, so wrapping is harmless.
            dy, dx = self._rng.integers(-self.shift, self.shift + 1, 2)
            image = np.roll(image, (dy, dx), axis=(1, 2))
        return [image], [self.labels[index]]

    def __len__(self):
        return len(self.labels)


class LeNet(nn.Module):
    """conv 5x5 -> relu -> max pool -> conv 5x5 -> relu -> max pool -> fc -> relu -> fc."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.conv(1, 8, [5, 5])
        self.conv2 = nn.conv(8, 16, [5, 5])
        self.fc1 = nn.linear(16 * 4 * 4, 64)
        self.fc2 = nn.linear(64, 10)

    def forward(self, x):
        """Logits ``[N, 10]`` of images ``[N, 1, 28, 28]``."""
        x = F.max_pool(F.relu(self.conv1(x)), [2, 2], [2, 2])
        x = F.max_pool(F.relu(self.conv2(x)), [2, 2], [2, 2])
        x = F.reshape(x, [0, -1])
        return self.fc2(F.relu(self.fc1(x)))


def _progress(epoch, epochs, done, total, loss, width=24, stream=None):
    stream = sys.stdout if stream is None else stream
    filled = int(width * done / total)
    bar = "#" * filled + "-" * (width - filled)
    stream.write(f"\repoch {epoch}/{epochs} [{bar}] {done}/{total} loss {loss:.4f}")
    if done == total:
        stream.write("\n")
    stream.flush()


def accuracy(predict, images, labels, batch=256):
    """Fraction of ``images`` that ``predict`` (Vars in, logits Var out) labels right."""
    correct = 0
    for i in range(0, len(labels), batch):
        logits = np.asarray(predict(F.const(images[i:i + batch])))
        correct += int((logits.argmax(1) == labels[i:i + batch]).sum())
    return correct / len(labels)


def train(epochs=10, batch_size=32, learning_rate=0.05, seed=0, quiet=False):
    """Train LeNet on the digits; returns ``(net, test_set, seconds)``."""
    nn.init.seed(seed)
    (x_train, y_train), test = load_digits(seed=seed)
    net = LeNet()
    loader = data.DataLoader(ArrayDataset(x_train, y_train, shift=2, seed=seed), batch_size,
                             shuffle=True, seed=seed)
    opt = optim.SGD(net, learning_rate, momentum=0.9, weight_decay=1e-4)
    steps = epochs * loader.iter_number
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        net.train(True)
        for i, (inputs, targets) in enumerate(loader):
            opt.learning_rate = optim.cosine(learning_rate, (epoch - 1) * loader.iter_number + i,
                                             steps)
            loss = nn.loss.softmax_cross_entropy(net(inputs[0]), targets[0])
            opt.step(loss)
            if not quiet:
                _progress(epoch, epochs, i + 1, loader.iter_number, float(loss))
    return net, test, time.perf_counter() - start


def export(net, folder):
    """Save the parameters and the inference graph; returns the two paths."""
    params_path = os.path.join(folder, "lenet_digits.params.mnn")
    model_path = os.path.join(folder, "lenet_digits.mnn")
    F.save(net.parameters, params_path)
    net.train(False)
    image = F.placeholder([1, 1, SIZE, SIZE], F.NCHW)
    image.name = "image"
    logits = net(image)
    logits.name = "logits"
    F.save([logits], model_path)
    return params_path, model_path


def main(argv=None):
    """Train, evaluate, export and reload; returns the three test accuracies."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10)
    # One thread by default: this network's kernels are tiny (8 and 16 channels), so
    # handing work to a second thread costs more than it saves, and on a busy machine
    # waiting threads slow every step down (measured: 0.4 s vs 5-24 s per epoch).
    parser.add_argument("--threads", type=int, default=1,
                        help="kernel and BLAS threads (default 1)")
    parser.add_argument("--out", default=None,
                        help="folder for the .mnn files (default: a temporary folder)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    F.set_thread_number(args.threads)

    net, (x_test, y_test), seconds = train(args.epochs, seed=args.seed, quiet=args.quiet)
    net.train(False)
    acc = accuracy(net, x_test, y_test)
    print(f"trained {args.epochs} epochs in {seconds:.1f} s; test accuracy {acc:.2%} "
          f"({len(y_test)} images)")

    with tempfile.TemporaryDirectory() as tmp:
        folder = args.out or tmp
        os.makedirs(folder, exist_ok=True)
        params_path, model_path = export(net, folder)

        restored = LeNet()
        restored.load_parameters(F.load_as_list(params_path))
        restored.train(False)
        acc_params = accuracy(restored, x_test, y_test)
        print(f"parameters saved to {os.path.basename(params_path)} and reloaded: "
              f"test accuracy {acc_params:.2%}")

        module = nn.load_module_from_file(model_path, ["image"], ["logits"])
        acc_file = accuracy(module, x_test, y_test)
        print(f"inference model {os.path.basename(model_path)} "
              f"({os.path.getsize(model_path) // 1024} KB) loaded with "
              f"nn.load_module_from_file: test accuracy {acc_file:.2%}")
        if args.out:
            print(f"files kept in {folder}")
    return acc, acc_params, acc_file


if __name__ == "__main__":
    main()
