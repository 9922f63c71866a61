#!/usr/bin/env python3
# tests/hostile/forge.py - forges the files versus writes for itself, as someone who knows their
# formats would: journals and parts (records re-framed with valid FNV-1a checksums) and training
# checkpoints (safetensors; the crc32 recomputed unless asked not to).  tests/cli_hostile2.sh feeds
# the results to versus, which must refuse them by their values, not by a broken checksum.
#
#   forge.py journal IN OUT [header KEY=JSON]... [i64-from-end OFFSET VALUE]
#   forge.py checkpoint IN OUT [state KEY=JSON]... [nan TENSOR] [keep-crc]
import json, struct, sys, zlib

MAGIC = b'VSJ1'


def fnv1a(data, h=0xcbf29ce484222325):
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h


def records(buf):
    pos = 0
    while pos + 28 <= len(buf) and buf[pos:pos + 4] == MAGIC:
        item, n = struct.unpack_from('<qQ', buf, pos + 4)
        yield item, bytearray(buf[pos + 20:pos + 20 + n])
        pos += 28 + n


def frame(item, payload):
    head = struct.pack('<qQ', item, len(payload))
    return MAGIC + head + bytes(payload) + struct.pack('<Q', fnv1a(bytes(payload), fnv1a(head)))


def journal(args):
    src, dst, edits = args[0], args[1], args[2:]
    out = bytearray()
    for item, payload in records(open(src, 'rb').read()):
        i = 0
        while i < len(edits):
            if edits[i] == 'header' and item == -1:
                h = json.loads(payload)
                key, value = edits[i + 1].split('=', 1)
                h[key] = json.loads(value)
                payload = bytearray(json.dumps(h).encode())
            if edits[i] == 'i64-from-end' and item >= 0:
                struct.pack_into('<q', payload, len(payload) - int(edits[i + 1]), int(edits[i + 2]))
                i += 1
            i += 2
        out += frame(item, payload)
    open(dst, 'wb').write(out)


def checkpoint(args):
    src, dst, edits = args[0], args[1], args[2:]
    buf = open(src, 'rb').read()
    n = struct.unpack_from('<Q', buf)[0]
    header = json.loads(buf[8:8 + n])
    data = bytearray(buf[8 + n:])
    meta = header['__metadata__']
    state = json.loads(meta['state'])
    keep_crc = False
    i = 0
    while i < len(edits):
        if edits[i] == 'state':
            key, value = edits[i + 1].split('=', 1)
            node, path = state, key.split('.')
            for p in path[:-1]:
                node = node[p]
            node[path[-1]] = json.loads(value)
            i += 2
        elif edits[i] == 'nan':
            a, b = header[edits[i + 1]]['data_offsets']
            struct.pack_into('<f', data, a, float('nan'))
            i += 2
        elif edits[i] == 'keep-crc':
            keep_crc = True
            i += 1
        else:
            sys.exit('forge.py: unknown edit ' + edits[i])
    meta['state'] = json.dumps(state)
    if not keep_crc:
        c = zlib.crc32(meta['state'].encode())
        for name, e in header.items():
            if name == '__metadata__':
                continue
            a, b = e['data_offsets']
            c ^= zlib.crc32(bytes(data[a:b]), zlib.crc32(name.encode() + b'\0'))
        meta['crc32'] = '%08x' % c
    h = json.dumps(header).encode()
    h += b' ' * (-len(h) % 8)
    open(dst, 'wb').write(struct.pack('<Q', len(h)) + h + data)


{'journal': journal, 'checkpoint': checkpoint}[sys.argv[1]](sys.argv[2:])
