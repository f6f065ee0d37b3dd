"""Typed text of number, float, int, shape and list attributes (widgets/canvas/attr_text.py):
what each reads as, exactly (an int stays an int for a ``number``, a float attribute is
always a float), and the refusals' words (issue #17: mutants of ``_number`` had no test)."""
import math

import pytest

from fluidscope.engine import DesignError
from fluidscope.widgets.canvas.attr_text import parse_attr_text


@pytest.mark.parametrize("text, value", [
    ("3", 3), ("-2", -2), ("+4", 4), (" 7 ", 7), ("2.5", 2.5), ("1e2", 100.0), ("-0.5", -0.5)])
def test_a_number_attribute_keeps_ints_as_ints(text, value):
    got = parse_attr_text("fill_constant", "value", text)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("text, value", [("0.25", 0.25), ("1", 1.0), (" .5 ", 0.5),
                                         ("1e-3", 0.001)])
def test_a_float_attribute_is_always_a_float(text, value):
    got = parse_attr_text("dropout", "dropout_prob", text)
    assert type(got) is float and math.isclose(got, value)


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "Infinity", "half"])
def test_non_finite_or_wordy_numbers_are_refused(text):
    with pytest.raises(DesignError) as err:
        parse_attr_text("fill_constant", "value", text, where="fill_0")
    assert str(err.value) == (f"fill_0: value {text!r} does not read as a number such as 0.5")
    with pytest.raises(DesignError) as err:
        parse_attr_text("dropout", "dropout_prob", text)
    assert str(err.value) == (f"dropout: dropout_prob {text!r} does not read as a number "
                              "such as 0.5")


def test_ints_shapes_and_lists():
    assert parse_attr_text("fc", "size", " +2 ") == 2
    with pytest.raises(DesignError, match=r"fc: size '3.0' does not read as an int such as 3$"):
        parse_attr_text("fc", "size", "3.0")
    assert parse_attr_text("data", "shape", "?, 3") == [None, 3]
    assert parse_attr_text("data", "shape", "null, NONE, 2") == [None, None, 2]
    assert parse_attr_text("embedding", "size", "[30, 16]") == [30, 16]
    assert parse_attr_text("embedding", "size", "30×16") == [30, 16]
    assert parse_attr_text("conv2d", "filter_size", "null") is None
    with pytest.raises(DesignError, match="does not read as an int or ints"):
        parse_attr_text("conv2d", "filter_size", "?")  # '?' means 'any' only in a shape
    assert parse_attr_text("pool2d", "pool_padding", " valid ") == "VALID"
    assert parse_attr_text("pool2d", "pool_padding", "(1, 2)") == [1, 2]
    assert parse_attr_text("pool2d", "pool_padding", "3") == 3
    with pytest.raises(DesignError, match="does not read as an int, ints such as"):
        parse_attr_text("pool2d", "pool_padding", "[]")


def test_the_refusals_name_the_node_the_attribute_and_what_it_has():
    with pytest.raises(DesignError) as err:
        parse_attr_text("dropout", "p", "0.5", where="drop_0")
    assert str(err.value) == ("drop_0 (dropout) has no attribute 'p'; it has "
                              "dropout_implementation, dropout_prob, is_test, seed")
    with pytest.raises(DesignError) as err:
        parse_attr_text("conv2d", "filter_size", 3, where="conv_0")
    assert str(err.value) == "conv_0: the text of 'filter_size' must be a string, got 3"
    with pytest.raises(DesignError) as err:
        parse_attr_text("dropout", "is_test", "true")
    assert str(err.value) == ("dropout: 'is_test' is a bool attribute, which is not typed as "
                              "text; set it with set_attr")
