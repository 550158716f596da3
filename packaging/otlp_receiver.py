"""A loopback OTLP/HTTP traces receiver for check-linux.sh, with Python's standard library only.

    python3 packaging/otlp_receiver.py PORT_FILE

It listens on a free port of 127.0.0.1, writes the port to PORT_FILE once it listens, and
answers every POST to /v1/traces as a collector does (200, an empty ExportTraceServiceResponse).
For each request it prints one line, `POST /v1/traces BYTES bytes SPANS spans`, counting the
spans in the protobuf body itself (no opentelemetry-proto here: the system Python runs it).
Other paths and methods are printed too, and answered 404. It runs until it is terminated.
"""

from __future__ import annotations

import gzip
import sys
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

TRACES_PATH = "/v1/traces"
LENGTH_DELIMITED = 2
# ExportTraceServiceRequest.resource_spans = 1, ResourceSpans.scope_spans = 2, ScopeSpans.spans = 2
SPAN_PATH = (1, 2, 2)


class MalformedMessage(ValueError):
    """The body is not a protobuf message."""


def varint(data: bytes, offset: int) -> tuple[int, int]:
    """The varint at `offset` and the offset after it."""
    value = shift = 0
    while True:
        if offset >= len(data):
            raise MalformedMessage("a varint runs past the end")
        byte = data[offset]
        offset += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, offset
        shift += 7


def embedded_messages(data: bytes, field: int) -> Iterator[bytes]:
    """The length-delimited values of `field` in the message `data`; other fields are skipped."""
    offset = 0
    while offset < len(data):
        key, offset = varint(data, offset)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            _, offset = varint(data, offset)
            continue
        if wire_type == 1:
            size = 8
        elif wire_type == 5:
            size = 4
        elif wire_type == LENGTH_DELIMITED:
            size, offset = varint(data, offset)
        else:
            raise MalformedMessage(f"wire type {wire_type} of field {number}")
        if offset + size > len(data):
            raise MalformedMessage(f"field {number} runs past the end")
        if number == field and wire_type == LENGTH_DELIMITED:
            yield data[offset : offset + size]
        offset += size


def count_spans(request: bytes) -> int:
    """The spans in an ExportTraceServiceRequest."""
    messages = [request]
    for field in SPAN_PATH:
        messages = [inner for message in messages for inner in embedded_messages(message, field)]
    return len(messages)


def decoded(body: bytes, encoding: str) -> bytes:
    if encoding == "gzip":
        return gzip.decompress(body)
    if encoding == "deflate":
        return zlib.decompress(body)
    return body


class TracesHandler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path != TRACES_PATH:
            self.answer(404, f"POST {self.path} {len(body)} bytes, not {TRACES_PATH}")
            return
        try:
            spans = count_spans(decoded(body, self.headers.get("Content-Encoding", "")))
        except (MalformedMessage, OSError, zlib.error) as error:
            self.answer(400, f"POST {self.path} {len(body)} bytes, unreadable: {error}")
            return
        self.answer(200, f"POST {self.path} {len(body)} bytes {spans} spans")

    def do_GET(self) -> None:
        self.answer(404, f"GET {self.path}")

    def answer(self, status: int, line: str) -> None:
        print(line, flush=True)
        self.send_response(status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")  # an empty ExportTraceServiceResponse
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass  # one line per request is printed by answer()


def main(port_file: str) -> None:
    server = HTTPServer(("127.0.0.1", 0), TracesHandler)
    written = Path(f"{port_file}.part")  # renamed once whole: the script waits for the file
    written.write_text(f"{server.server_address[1]}\n", encoding="utf-8")
    written.rename(port_file)
    server.serve_forever()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 packaging/otlp_receiver.py PORT_FILE")
    main(sys.argv[1])
