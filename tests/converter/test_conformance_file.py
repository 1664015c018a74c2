"""The ONNX node suite through the converter AND the .mnn file: convert, write, read back
with the file reader, run (oracle: onnx's expected outputs).

tests/converter/onnx_node_expected_file_passes.txt lists the cases known to pass this way;
the list only grows. Regenerate candidates with
``python -m converter.conformance --through-file --passes-file FILE``.
"""
import pathlib

import pytest

from converter import conformance

EXPECTED = pathlib.Path(__file__).with_name("onnx_node_expected_file_passes.txt")


@pytest.fixture(scope="module")
def cases():
    return {c.name: c for c in conformance.load_cases()}


def _expected():
    return [line.strip() for line in EXPECTED.read_text().splitlines()
            if line.strip() and not line.startswith("#")]


def test_expected_file_passes_still_pass(cases):
    failures = []
    for name in _expected():
        case = cases.get(name)
        if case is None:
            failures.append(f"{name}: not in the installed onnx's node suite")
            continue
        reason = conformance.run_case(case, through_file=True)
        if reason is not None:
            failures.append(f"{name}: {reason}")
    assert not failures, "\n".join(failures)


def test_file_list_is_sorted_and_a_subset_of_the_graph_list():
    names = _expected()
    assert names == sorted(set(names))
    graph_list = pathlib.Path(__file__).with_name("onnx_node_expected_passes.txt")
    graph_names = {line.strip() for line in graph_list.read_text().splitlines()
                   if line.strip() and not line.startswith("#")}
    assert set(names) <= graph_names
