"""imread/imwrite/imdecode/imencode against cv2 on generated images."""
import cv2
import numpy as np
import pytest

import mnn.cv as cv
import mnn.expr as F


@pytest.mark.parametrize("ext", [".png", ".bmp", ".tiff"])
def test_lossless_roundtrip_matches_cv2(tmp_path, photo, ext):
    path = str(tmp_path / ("a" + ext))
    assert cv.imwrite(path, photo)
    ours = cv.imread(path)
    assert isinstance(ours, F.Var)
    np.testing.assert_array_equal(np.asarray(ours), cv2.imread(path))
    np.testing.assert_array_equal(np.asarray(ours), photo)


def test_read_cv2_written_png_flags(tmp_path, photo, photo4):
    path = str(tmp_path / "c.png")
    cv2.imwrite(path, photo)
    np.testing.assert_array_equal(np.asarray(cv.imread(path, cv.IMREAD_GRAYSCALE)),
                                  cv2.imread(path, cv2.IMREAD_GRAYSCALE))
    path4 = str(tmp_path / "d.png")
    cv2.imwrite(path4, photo4)
    np.testing.assert_array_equal(np.asarray(cv.imread(path4, cv.IMREAD_UNCHANGED)),
                                  cv2.imread(path4, cv2.IMREAD_UNCHANGED))
    np.testing.assert_array_equal(np.asarray(cv.imread(path4)), cv2.imread(path4))


def test_sixteen_bit_png(tmp_path):
    img = (np.arange(60 * 40, dtype=np.uint16).reshape(40, 60) * 27).astype(np.uint16)
    path = str(tmp_path / "g16.png")
    cv2.imwrite(path, img)
    np.testing.assert_array_equal(np.asarray(cv.imread(path, cv.IMREAD_UNCHANGED)),
                                  cv2.imread(path, cv2.IMREAD_UNCHANGED))


def test_jpeg_decode_close_to_cv2(photo):
    ok, buf = cv2.imencode(".jpg", photo, [cv2.IMWRITE_JPEG_QUALITY, 95])
    assert ok
    ours = np.asarray(cv.imdecode(buf, cv.IMREAD_COLOR))
    theirs = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    # Two libjpeg builds: IDCT and chroma upsampling differ by a few levels at most.
    diff = np.abs(ours.astype(int) - theirs.astype(int))
    assert diff.mean() < 1.0 and diff.max() <= 12


def test_imencode_decodable_by_cv2(photo):
    ok, buf = cv.imencode(".png", photo)
    assert ok and buf.dtype == np.uint8 and buf.ndim == 1
    np.testing.assert_array_equal(cv2.imdecode(buf, cv2.IMREAD_COLOR), photo)
    ok, buf = cv.imencode(".jpg", photo, [cv.IMWRITE_JPEG_QUALITY, 90])
    back = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    _, ref = cv2.imencode(".jpg", photo, [cv2.IMWRITE_JPEG_QUALITY, 90])
    ref_back = cv2.imdecode(ref, cv2.IMREAD_COLOR)
    ours_err = np.abs(back.astype(int) - photo.astype(int)).mean()
    cv2_err = np.abs(ref_back.astype(int) - photo.astype(int)).mean()
    assert ours_err < 1.25 * cv2_err


def test_have_reader_writer(tmp_path, photo):
    path = str(tmp_path / "x.png")
    cv2.imwrite(path, photo)
    assert cv.haveImageReader(path)
    assert not cv.haveImageReader(str(tmp_path / "missing.png"))
    assert cv.haveImageWriter("a.jpg") and not cv.haveImageWriter("a.xyz")


def test_errors(tmp_path, photo):
    with pytest.raises(FileNotFoundError, match="imread"):
        cv.imread(str(tmp_path / "nope.png"))
    with pytest.raises(ValueError, match="cannot decode"):
        cv.imdecode(np.frombuffer(b"not an image at all", np.uint8))
    with pytest.raises(ValueError, match="no writer for extension"):
        cv.imencode(".xyz", photo)
    with pytest.raises(ValueError, match="empty"):
        cv.imdecode(b"")


def test_jpeg_grayscale_is_decoded_luma(photo):
    ok, buf = cv2.imencode(".jpg", photo, [cv2.IMWRITE_JPEG_QUALITY, 92])
    ours = np.asarray(cv.imdecode(buf, cv.IMREAD_GRAYSCALE))
    theirs = cv2.imdecode(buf, cv2.IMREAD_GRAYSCALE)
    assert ours.shape == theirs.shape and ours.dtype == np.uint8
    assert np.abs(ours.astype(int) - theirs.astype(int)).max() <= 2


def test_exif_orientation_applied(tmp_path):
    from PIL import Image

    rgb = np.zeros((20, 40, 3), np.uint8)
    rgb[:, :10] = (255, 0, 0)
    img = Image.fromarray(rgb)
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 degrees clockwise on display
    path = str(tmp_path / "rot.jpg")
    img.save(path, exif=exif.tobytes(), quality=95)
    ours = np.asarray(cv.imread(path))
    theirs = cv2.imread(path)
    assert ours.shape == theirs.shape == (40, 20, 3)
    assert np.abs(ours.astype(int) - theirs.astype(int)).mean() < 2
    unrotated = np.asarray(cv.imread(path, cv.IMREAD_COLOR | cv.IMREAD_IGNORE_ORIENTATION))
    assert unrotated.shape == cv2.imread(path, cv2.IMREAD_COLOR |
                                         cv2.IMREAD_IGNORE_ORIENTATION).shape
