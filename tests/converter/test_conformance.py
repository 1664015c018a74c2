"""The ONNX backend node suite through the converter (oracle: onnx's expected outputs).

Two lists of cases known to pass, each of which only grows: through the express graph
(tests/converter/onnx_node_expected_passes.txt) and through the .mnn file as well —
convert, write, read back with the file reader, run
(tests/converter/onnx_node_expected_file_passes.txt). A listed case that fails (or
disappears from the installed onnx) fails its test. Regenerate candidates with
``python -m converter.conformance [--through-file] --passes-file FILE``.
"""
import pathlib

import pytest

from converter import conformance

EXPECTED = pathlib.Path(__file__).with_name("onnx_node_expected_passes.txt")
EXPECTED_FILE = pathlib.Path(__file__).with_name("onnx_node_expected_file_passes.txt")


@pytest.fixture(scope="module")
def cases():
    return {c.name: c for c in conformance.load_cases()}


def _expected(path=EXPECTED):
    return [line.strip() for line in path.read_text().splitlines()
            if line.strip() and not line.startswith("#")]


def _failures(cases, names, through_file):
    failures = []
    for name in names:
        case = cases.get(name)
        if case is None:
            failures.append(f"{name}: not in the installed onnx's node suite")
            continue
        reason = conformance.run_case(case, through_file=through_file)
        if reason is not None:
            failures.append(f"{name}: {reason}")
    return failures


def test_expected_passes_still_pass(cases):
    failures = _failures(cases, _expected(), through_file=False)
    assert not failures, "\n".join(failures)


def test_expected_file_passes_still_pass(cases):
    failures = _failures(cases, _expected(EXPECTED_FILE), through_file=True)
    assert not failures, "\n".join(failures)


def test_file_list_is_sorted_and_a_subset_of_the_graph_list():
    names = _expected(EXPECTED_FILE)
    assert names == sorted(set(names))
    assert set(names) <= set(_expected())


def test_expected_list_is_sorted_and_unique():
    names = _expected()
    assert names == sorted(set(names))


def test_runner_reports_a_wrong_result(cases):
    # The runner must be able to fail: corrupt an expected output and check it notices.
    import copy

    import numpy as np

    case = copy.deepcopy(cases["test_add"])
    inputs, outputs = case.data_sets[0]
    case.data_sets[0] = (inputs, [np.asarray(outputs[0]) + 1.0])
    assert conformance.run_case(case).startswith("mismatch")


def test_focus_set_is_the_documented_filter(cases):
    focus = [c for c in cases.values() if conformance.in_focus(c)]
    assert focus, "the focus set is empty"
    for c in focus:
        assert conformance.case_op(c) in conformance.FOCUS_OPS
        assert not c.name.startswith(("test_bernoulli", "test_training_dropout"))


def test_through_file_compare_accepts_only_the_int32_the_file_holds():
    # The .mnn file holds int64 and bool as int32 (as MNN computes them): through the file
    # such an output may come back int32 but must still hold exactly the expected values.
    import numpy as np

    want = np.array([1, 2, 3], np.int64)
    conformance._compare("y", want.astype(np.int32), want, narrowed=True)
    with pytest.raises(AssertionError):
        conformance._compare("y", np.array([1, 2, 4], np.int32), want, narrowed=True)
    with pytest.raises(AssertionError, match="dtype"):
        conformance._compare("y", want.astype(np.int32), want)
    with pytest.raises(AssertionError, match="dtype"):
        conformance._compare("y", np.array([1.0, 2.0], np.float32),
                             np.array([1.0, 2.0], np.float64), narrowed=True)
