"""Errors a user met in the views (issue #18, item 6): ``expand={...}`` (or ``collapse``)
naming layers the program does not have used to fold or open nothing, silently."""
import pytest

import fluidscope.designer as fd
from fluidscope.engine.errors import FluidscopeError
from fluidscope.widgets import GraphView, program_to_dot


def _program():
    """encoder/fc_0, encoder/fc_1, fc_2, mean_0: layers inside a name_scope and outside."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 4])
        with fd.name_scope("encoder"):
            h = fd.fc(fd.fc(x, 8, act="relu"), 8)
        fd.mean(fd.fc(h, 3))
    return main


def test_expand_with_an_unknown_layer_says_which_names_are_unknown():
    main = _program()
    with pytest.raises(FluidscopeError) as info:
        program_to_dot(main, collapse=True, expand={"encoder", "fc_9", "decoder"})
    message = str(info.value)
    assert message.startswith("program_to_dot: expand names no layer of this program: "
                              "'decoder' (did you mean 'encoder'?), 'fc_9' (did you mean")
    assert "its layers are encoder, encoder/fc_0, encoder/fc_1, fc_2, mean_0" in message


def test_unknown_layer_gets_a_guess_when_one_is_close():
    with pytest.raises(FluidscopeError, match=r"'encodr' \(did you mean 'encoder'\?\)"):
        program_to_dot(_program(), expand=["encodr"])


def test_collapse_with_an_unknown_layer_is_refused_too():
    with pytest.raises(FluidscopeError, match="collapse names no layer of this program: 'fc_7'"):
        program_to_dot(_program(), collapse={"fc_2", "fc_7"})


def test_known_layers_still_fold_and_open():
    main = _program()
    folded = program_to_dot(main, collapse=True)
    drilled = program_to_dot(main, collapse=True, expand={"encoder"})
    nested = program_to_dot(main, collapse={"encoder/fc_1"}, expand=["/encoder/fc_1/"])
    assert 'id="group:0:/encoder/"' in folded and 'id="group:0:/encoder/"' not in drilled
    assert 'id="group:0:/encoder/fc_0/"' in drilled
    assert "group:" not in nested  # a layer collapsed and opened again draws its ops


def test_graph_view_with_an_unknown_expand_names_it():
    with pytest.raises(FluidscopeError, match="no layer 'fc_9'"):
        GraphView(_program(), expand={"fc_9"}, renderer="browser")
