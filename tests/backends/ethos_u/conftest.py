import pytest


@pytest.fixture(scope="module")
def reference():
    """The TOSA reference model (a server process), shared by a test module's checks."""
    from pteron.tosa import ReferenceModel

    ref = ReferenceModel()
    yield ref
    ref.close()
