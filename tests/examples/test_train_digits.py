"""The README's first command, shortened: train, export, reload."""
import numpy as np
import scipy.ndimage

import mnn.expr as F
from mnn import nn
from mnn.examples import train_digits as td


def test_upscaling_is_bilinear_with_aligned_corners():
    (x_train, y_train), (x_test, y_test) = td.load_digits()
    assert x_train.shape[1:] == (1, 28, 28) and x_train.dtype == np.float32
    assert len(x_train) + len(x_test) == 1797 and len(x_test) == 359
    assert set(np.unique(y_train)) == set(range(10))
    with np.load(td.DATA_FILE) as f:
        images = f["images"].astype(np.float64) / 16.0
    # Which original image is x_test[0]? The split is a seeded permutation.
    order = np.random.default_rng(0).permutation(1797)
    ref = scipy.ndimage.zoom(images[order[0]], 28 / 8, order=1, grid_mode=False)
    np.testing.assert_allclose(x_test[0, 0], ref, atol=1e-6)


def test_short_training_run_exports_and_reloads(tmp_path, capsys):
    acc, acc_params, acc_file = td.main(["--epochs", "2", "--quiet", "--threads", "1",
                                         "--out", str(tmp_path)])
    assert acc > 0.85
    assert acc_params == acc  # same weights, same graph
    # The loaded file runs through the compiled plan (other kernels, fused activations):
    # rounding may flip one near-tie among the 359 test images.
    assert abs(acc_file - acc) <= 1 / 359 + 1e-12
    out = capsys.readouterr().out
    assert "test accuracy" in out and "nn.load_module_from_file" in out
    # The exported file computes the network's logits.
    (_, _), (x_test, _) = td.load_digits()
    restored = td.LeNet()
    restored.load_parameters(F.load_as_list(str(tmp_path / "lenet_digits.params.mnn")))
    restored.train(False)
    module = nn.load_module_from_file(str(tmp_path / "lenet_digits.mnn"), ["image"], ["logits"])
    np.testing.assert_allclose(np.asarray(module(F.const(x_test[:5]))),
                               np.asarray(restored(F.const(x_test[:5]))), rtol=1e-4, atol=1e-4)


def test_progress_bar(capsys):
    td._progress(1, 3, 5, 10, 0.5)
    td._progress(1, 3, 10, 10, 0.25)
    out = capsys.readouterr().out
    assert "[############------------] 5/10" in out and out.endswith("10/10 loss 0.2500\n")
