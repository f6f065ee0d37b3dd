"""Paddle-compatible protobuf messages (``framework_pb2``) of fluidscope's IR."""
from . import framework_pb2

__all__ = ["framework_pb2"]
