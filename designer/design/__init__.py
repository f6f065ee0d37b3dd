"""The design: a network at the level of layers, shared by the canvas and the Python API.

``Design`` (edits.py) is the editable model; ``build`` replays it through the layer
functions; ``files`` saves and loads it; ``from_program`` brings a program back.
"""
from .build import Build, design_guard
from .document import Document, Graph, Node, Ref, Row
from .edits import Design

__all__ = ["Design", "Build", "design_guard", "Document", "Graph", "Node", "Ref", "Row"]
