"""A protobuf wire pre-scanner: find the first wrong byte of a binary message, and say where.

Python's protobuf parser says only that a message does not parse; ``check_wire`` walks
the wire format against the message's descriptor and raises ``WireError`` naming the
byte offset and the field path (``blocks[0].ops[3].attrs[1]``), so a truncated or
corrupt ``.pdmodel`` gets an error a person can act on.
"""
from __future__ import annotations

from google.protobuf.descriptor import FieldDescriptor


class WireError(Exception):
    """A byte of a protobuf stream that is wrong: where, in which field, and why."""

    def __init__(self, pos, path, what):
        super().__init__(f"at byte {pos}{f' ({path})' if path else ''}: {what}")


def read_varint(data, pos, end, path):
    """(value, position after it) of the varint at ``data[pos]``; WireError if it is cut."""
    value, shift, start = 0, 0, pos
    while True:
        if pos >= end:
            raise WireError(start, path, "truncated varint (the data ends inside a number)")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise WireError(start, path, "varint longer than 10 bytes")


def check_wire(data, pos, end, message, path=""):
    """Check the protobuf wire format of ``data[pos:end]`` against ``message`` (a
    Descriptor); raise ``WireError`` at the first byte that is wrong."""
    counts = {}
    while pos < end:
        tag_pos = pos
        tag, pos = read_varint(data, pos, end, path)
        number, wire = tag >> 3, tag & 7
        field = message.fields_by_number.get(number) if message else None
        name = field.name if field else f"field {number}"
        if number == 0 or wire not in (0, 1, 2, 5):
            raise WireError(tag_pos, path, f"invalid tag 0x{tag:x} (field {number}, wire "
                                            f"type {wire}); this is not a ProgramDesc here")
        if wire == 0:
            _, pos = read_varint(data, pos, end, path)
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        else:
            length, pos = read_varint(data, pos, end, path)
            if pos + length > end:
                raise WireError(tag_pos, path, f"{name} claims {length} bytes but only "
                                                f"{end - pos} remain (truncated file?)")
            k = counts[name] = counts.get(name, -1) + 1
            sub = f"{path}.{name}" if path else name
            if field is not None and field.is_repeated:
                sub += f"[{k}]"
            if field is not None and field.type == FieldDescriptor.TYPE_MESSAGE:
                check_wire(data, pos, pos + length, field.message_type, sub)
            elif field is not None and field.type == FieldDescriptor.TYPE_STRING:
                try:
                    bytes(data[pos:pos + length]).decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise WireError(pos + exc.start, sub, "invalid UTF-8 in a string") from None
            pos += length
        if pos > end:
            raise WireError(tag_pos, path, f"{name} runs past the end of its message")


__all__ = ["WireError", "read_varint", "check_wire"]
