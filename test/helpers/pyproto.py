#!/usr/bin/env python3
"""The independent protobuf implementation of the tests: Google's Python protobuf (upb).

Reads one JSON request on stdin, prints one JSON answer on stdout (test/helpers/pyproto.js runs it in the venv it
makes under .tools/pyproto-venv, with protobuf and grpcio-tools from PyPI).

Request:
  {"protos": [paths], "includes": [dirs], "type": "shop.v1.Order",
   "inputs": [{"json": <value>} | {"json_text": "<one JSON value>"} | {"binary_b64": "<base64>"}
              | {"json_file": "<path>"} | {"binary_file": "<path>"}, ...],
   "descriptor_set_out": "<path>"}      (optional: also write the FileDescriptorSet there, as protoc wrote it when
                                         protos are all .proto files)
  protos: .proto files, compiled with grpc_tools.protoc (-I each include, then grpc_tools' own include dir for the
  well-known types; --include_imports), or FileDescriptorSet files (.binpb, .pb), read as they are.
  type and inputs may be left out (then only the descriptor set is written).
  json_text is read by Python's json module, so it keeps what a JavaScript round trip would lose (-0.0, integers
  beyond 2^53 written as JSON numbers). A file stands for every sample in it, in order, as RESPONSE= reads one:
  json_file a JSON object (one sample), a JSON array (each element) or NDJSON (each non-empty line); binary_file
  length-delimited binary messages (each a varint length, then that many bytes).

Answer:
  {"results": [{"json": <canonical JSON>, "binary_b64": "<base64>"} | {"error": "<message>"}, ...]}
  json: json_format.MessageToDict(message, descriptor_pool=pool) with Python's default options, which are:
    lowerCamelCase names (json_name where the .proto sets it; preserving_proto_field_name=False),
    enums by name (use_integers_for_enums=False; an unknown number stays a number),
    fields without presence left out at their zero value (always_print_fields_with_no_presence=False),
    64-bit integers as strings (unquote_int64_if_possible=False), doubles as Python's repr, floats with the fewest
    significant digits from 6 up that give the same 32-bit float (0.1, not 0.10000000149011612; but 1.4013e-45 for
    the smallest subnormal, and 3.4028235e+38 for the largest float, which Python's own ParseDict then refuses as too
    large), NaN/Infinity/-Infinity as strings, -0.0 kept, bytes as standard base64 with padding, Timestamp and
    Duration with 0, 3, 6 or 9 fraction digits, Timestamp in UTC with "Z", map entries in no set order.
  binary_b64: message.SerializeToString(deterministic=True) (map entries sorted by key), base64.
  One result per input, but a file input gives one per sample in it. An input Python refuses (ParseDict's or
  ParseFromString's error, a file it cannot read or split) gets {"error": ...} in its place.
Exits 1 with {"error": "..."} when the protos do not compile; 2 on a malformed request.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory


def grpc_tools_include():
    import grpc_tools
    return os.path.join(os.path.dirname(grpc_tools.__file__), '_proto')


def descriptor_set(protos, includes):
    """One FileDescriptorSet with every file the protos need, in dependency order; and protoc's own bytes of it
    when protoc wrote all of it (only .proto files given), else None."""
    fds = descriptor_pb2.FileDescriptorSet()
    written = None
    sources = [p for p in protos if not p.endswith(('.binpb', '.pb'))]
    for path in protos:
        if path.endswith(('.binpb', '.pb')):
            with open(path, 'rb') as f:
                fds.MergeFromString(f.read())
    if sources:
        with tempfile.TemporaryDirectory(prefix='pyproto-') as tmp:
            out = os.path.join(tmp, 'set.binpb')
            args = [sys.executable, '-m', 'grpc_tools.protoc', '--include_imports', f'--descriptor_set_out={out}']
            args += [f'-I{d}' for d in includes] + [f'-I{grpc_tools_include()}'] + sources
            done = subprocess.run(args, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError('protoc failed: ' + (done.stderr.strip() or f'exit {done.returncode}'))
            with open(out, 'rb') as f:
                written = f.read()
            fds.MergeFromString(written)
    # A file may come twice (two sets, or a set and a .proto): keep its first copy.
    seen = set()
    unique = descriptor_pb2.FileDescriptorSet()
    for file in fds.file:
        if file.name not in seen:
            seen.add(file.name)
            unique.file.add().CopyFrom(file)
    return unique, (written if len(sources) == len(protos) else None)


def pool_of(fds):
    pool = descriptor_pool.DescriptorPool()
    for file in fds.file:
        pool.Add(file)
    return pool


def json_samples(text):
    """The samples of a RESPONSE-style JSON file: an object, an array of them, or NDJSON."""
    try:
        whole = json.loads(text)
    except ValueError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return whole if isinstance(whole, list) else [whole]


def binary_samples(data):
    """Length-delimited messages: each a varint length, then that many bytes."""
    samples, i = [], 0
    while i < len(data):
        length = shift = 0
        while True:
            if i >= len(data):
                raise ValueError('truncated length prefix')
            byte = data[i]
            i += 1
            length |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        if i + length > len(data):
            raise ValueError(f'a message of {length} bytes runs past the end of the file')
        samples.append(data[i:i + length])
        i += length
    return samples


def expand(item):
    """The inputs an item stands for: itself, or each sample of its file."""
    try:
        if 'json_file' in item:
            with open(item['json_file'], encoding='utf-8') as f:
                return [{'json': s} for s in json_samples(f.read())]
        if 'binary_file' in item:
            with open(item['binary_file'], 'rb') as f:
                return [{'binary': s} for s in binary_samples(f.read())]
    except Exception as err:
        return [{'error': f'{type(err).__name__}: {err}'}]
    return [item]


def convert(cls, pool, item):
    message = cls()
    try:
        if 'error' in item:
            return item
        if 'json' in item:
            json_format.ParseDict(item['json'], message, descriptor_pool=pool)
        elif 'json_text' in item:
            json_format.ParseDict(json.loads(item['json_text']), message, descriptor_pool=pool)
        elif 'binary_b64' in item:
            message.ParseFromString(base64.b64decode(item['binary_b64'], validate=True))
        elif 'binary' in item:
            message.ParseFromString(item['binary'])
        else:
            return {'error': 'an input needs "json", "json_text", "binary_b64", "json_file" or "binary_file"'}
        return {
            'json': json_format.MessageToDict(message, descriptor_pool=pool),
            'binary_b64': base64.b64encode(message.SerializeToString(deterministic=True)).decode('ascii'),
        }
    except Exception as err:  # what Python refuses is an answer, not a crash
        return {'error': f'{type(err).__name__}: {err}'}


def main():
    try:
        request = json.load(sys.stdin)
        protos, includes = request['protos'], request.get('includes', [])
    except (ValueError, KeyError, TypeError) as err:
        print(json.dumps({'error': f'malformed request: {err}'}))
        return 2
    try:
        fds, written = descriptor_set(protos, includes)
        pool = pool_of(fds)
    except Exception as err:
        print(json.dumps({'error': str(err)}))
        return 1
    if request.get('descriptor_set_out'):
        with open(request['descriptor_set_out'], 'wb') as f:
            f.write(written if written is not None else fds.SerializeToString(deterministic=True))
    answer = {}
    if request.get('type'):
        try:
            cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(request['type']))
        except KeyError:
            print(json.dumps({'error': f'no message type {request["type"]} in {protos}'}))
            return 1
        answer['results'] = [convert(cls, pool, one) for item in request.get('inputs', []) for one in expand(item)]
    # allow_nan=False: MessageToDict writes NaN and the infinities as strings, so a bare NaN here would be a bug.
    print(json.dumps(answer, allow_nan=False, ensure_ascii=False))
    return 0


if __name__ == '__main__':
    sys.exit(main())
