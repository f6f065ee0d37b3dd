"""The layer catalog: one spec per public layer, declared at the function, agreeing with it."""
import inspect

import pytest

import fluidscope.designer as fd
from fluidscope.designer import layer_specs as catalog, layers

# Public names that are not layer functions but parts of one: the with-target of
# mixed_layer, and a recurrent group's static in-link (a flag on the group's input).
NOT_LAYERS = {"MixedLayer", "StaticInput"}


def test_every_public_layer_has_a_spec():
    missing = [n for n in layers.__all__
               if n not in NOT_LAYERS and catalog.spec_of(getattr(layers, n)) is None]
    assert missing == []


@pytest.mark.parametrize("spec", catalog.catalog(), ids=lambda s: s.name)
def test_spec_agrees_with_its_function(spec):
    params = inspect.signature(getattr(fd, spec.name)).parameters
    declared = set(spec.input_names) | set(spec.attr_names) | set(spec.structural)
    has_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    named = {n for n, p in params.items() if p.kind is not inspect.Parameter.VAR_KEYWORD}
    assert named - {"name"} - declared == set()
    assert declared - named <= ({a.name for a in spec.attrs} if has_kwargs else set())
    for attr in spec.attrs:
        if attr.name in params and params[attr.name].default is not inspect.Parameter.empty:
            assert attr.default == params[attr.name].default
            assert catalog.check_value(attr, attr.default) is None, attr
    assert spec.doc and spec.category and spec.outputs


def test_act_offers_the_registry_activations_and_pool_type_the_ops_values():
    act = catalog.get("fc").attr("act")
    assert set(catalog.activations()) <= set(act.choices) and None in act.choices
    assert catalog.get("sequence_pool").attr("pool_type").choices == (
        "average", "sum", "sqrt", "max", "last", "first")


def test_unknown_layer_names_close_matches():
    with pytest.raises(fd.DesignError, match="did you mean fc"):
        catalog.get("fcc")


def test_check_value_reports_type_and_choice_problems():
    fc = catalog.get("fc")
    assert catalog.check_value(fc.attr("size"), 3) is None
    assert "int" in catalog.check_value(fc.attr("size"), "3")
    assert "one of" in catalog.check_value(fc.attr("act"), "not_an_activation")


def test_the_palette_lists_every_registry_op_with_its_slots_and_attributes():
    from fluidscope.engine import registry
    ops = {s.name: s for s in fd.catalog(ops=True) if s.category.startswith("op/")}
    assert set(ops) == {f"op:{t}" for t in registry.forward_ops()}
    mul = ops["op:mul"]
    assert mul.input_names == ["X", "Y"] and mul.outputs == ("Out",)
    assert mul.attr("x_num_col_dims").default == 1 and mul.attr("op_role") is None
    assert ops["op:sum"].input("X").many
