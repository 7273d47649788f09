"""set_algo_parameters / get_algo_parameters / reset_algo_parameters and set_ps_context / get_ps_context /
reset_ps_context: MindSpore 2.10's keys, defaults, checks and messages (values taken from MindSpore 2.10 on CPU)."""
import pytest

import kiln as ms


@pytest.fixture(autouse=True)
def _reset():
    yield
    ms.reset_algo_parameters()
    ms.reset_ps_context()


def test_algo_defaults_set_get_reset():
    want = {"fully_use_devices": False, "elementwise_op_strategy_follow": False, "enable_algo_approxi": False,
            "algo_approxi_epsilon": 0.1, "tensor_slice_align_enable": False, "tensor_slice_align_size": 16}
    assert {k: ms.get_algo_parameters(k) for k in want} == want
    ms.set_algo_parameters(elementwise_op_strategy_follow=True, tensor_slice_align_size=64, algo_approxi_epsilon=1)
    assert ms.get_algo_parameters("elementwise_op_strategy_follow") is True
    assert ms.get_algo_parameters("tensor_slice_align_size") == 64
    assert ms.get_algo_parameters("algo_approxi_epsilon") == 1.0
    ms.reset_algo_parameters()
    assert {k: ms.get_algo_parameters(k) for k in want} == want


@pytest.mark.parametrize("kwargs, err, msg", [
    ({"bogus": 1}, ValueError, "Set context keyword bogus is not recognized"),
    ({"fully_use_devices": 1}, TypeError, "'fully_use_devices' must be <class 'bool'>"),
    ({"tensor_slice_align_size": True}, TypeError, "'tensor_slice_align_size' must be <class 'int'>"),
    ({"tensor_slice_align_size": 2000}, ValueError, r"Align_size must be in \[1, 1024\], but got 2000"),
    ({"algo_approxi_epsilon": 0.0}, ValueError, r"must be in \(0, 1\]"),
])
def test_algo_bad_values(kwargs, err, msg):
    with pytest.raises(err, match=msg):
        ms.set_algo_parameters(**kwargs)
    assert ms.get_algo_parameters("fully_use_devices") is False  # nothing half-applied


def test_algo_unknown_get():
    with pytest.raises(ValueError, match="Get context keyword x is not recognized"):
        ms.get_algo_parameters("x")


def test_ps_context():
    assert (ms.get_ps_context("enable_ps"), ms.get_ps_context("config_file_path"),
            ms.get_ps_context("enable_ssl")) == (False, "", False)
    ms.set_ps_context(enable_ps=False, enable_ssl=True, client_password="", server_password="")
    assert ms.get_ps_context("enable_ssl") is True
    with pytest.raises(ValueError, match="client_password is not recognized"):
        ms.get_ps_context("client_password")
    with pytest.raises(ValueError, match="parameter-server"):
        ms.set_ps_context(enable_ps=True)
    with pytest.raises(TypeError, match="'enable_ps' must be <class 'bool'>"):
        ms.set_ps_context(enable_ps=1)
    with pytest.raises(ValueError, match="Set PS context keyword nope is not recognized"):
        ms.set_ps_context(nope=1)
    ms.reset_ps_context()
    assert ms.get_ps_context("enable_ssl") is False
