"""The view of a mixed_layer's rows, exactly (widgets/canvas/view.py ``_row_views``): each
row's handle, source, input slots with their kinds and accepts lists, and the build error
of that row only (issue #17: mutants of the row views survived the canvas tests)."""
from test_canvas_view import by_id, sequence_classifier, view_of

ANY = ["dense", "sequence", "ids", "ids_sequence"]
KEYS = ("index", "kind", "handle", "source", "inputs", "detail", "error")


def test_row_views_name_every_slot_its_source_and_only_their_own_error():
    d = sequence_classifier()
    m = d.add("mixed_layer", size=8, name="mix")
    d.add_row(m, "full_matrix_projection", inputs={"input": "pool"})
    d.add_row(m, "dot_mul_operator", inputs={"a": "pool"})
    d.add_row(m, "table_projection")
    rows = [{k: r[k] for k in KEYS} for r in by_id(view_of(d))["mix"]["rows"]]
    error = "mixed_layer layer 'mix': input 'b' is not connected (row 1, dot_mul_operator)"
    assert rows == [
        {"index": 0, "kind": "full_matrix_projection", "handle": "row:0:input",
         "source": "pool", "detail": "", "error": None,
         "inputs": [{"handle": "row:0:input", "slot": "input", "kind": "tensor",
                     "accepts": ANY, "source": "pool"}]},
        {"index": 1, "kind": "dot_mul_operator", "handle": "row:1:a", "source": "pool",
         "detail": "", "error": error,
         "inputs": [{"handle": "row:1:a", "slot": "a", "kind": "tensor", "accepts": ANY,
                     "source": "pool"},
                    {"handle": "row:1:b", "slot": "b", "kind": "tensor", "accepts": ANY,
                     "source": None}]},
        {"index": 2, "kind": "table_projection", "handle": "row:2:input", "source": None,
         "detail": "", "error": None,
         "inputs": [{"handle": "row:2:input", "slot": "input", "kind": "ids",
                     "accepts": ["ids", "ids_sequence"], "source": None}]},
    ]
