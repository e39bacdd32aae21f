#!/usr/bin/env python3
"""Writes the small vocabulary-only GGUF seeds of corpus/fuzz_gguf (the model seeds come from
`r1pi-model make`, see docs/model-tools.md). Usage: make_gguf_seeds.py OUT_DIR"""
import struct
import sys

U32, I32, F32, BOOL, STRING, ARRAY = 4, 5, 6, 7, 8, 9


def s(text):
    b = text.encode()
    return struct.pack('<Q', len(b)) + b


def kv(key, vtype, value):
    out = s(key) + struct.pack('<I', vtype)
    if vtype == U32: return out + struct.pack('<I', value)
    if vtype == BOOL: return out + struct.pack('<B', value)
    if vtype == STRING: return out + s(value)
    etype, items = value
    out += struct.pack('<IQ', etype, len(items))
    for item in items:
        out += s(item) if etype == STRING else struct.pack({I32: '<i', F32: '<f'}[etype], item)
    return out


def gguf(pairs):
    return b'GGUF' + struct.pack('<IQQ', 3, 0, len(pairs)) + b''.join(kv(*p) for p in pairs)


def write(path, pairs):
    with open(path, 'wb') as f:
        f.write(gguf(pairs))


out = sys.argv[1]
# Byte-level BPE: the GPT-2 byte mapping's printable bytes as tokens, two merges, specials.
byte_tokens = [chr(c) for c in range(ord('!'), ord('~') + 1)] + ['Ġ', 'Ċ']
tokens = byte_tokens + ['he', 'hel', '<|begin_of_text|>', '<|end_of_text|>', '<think>']
types = [1] * (len(tokens) - 3) + [3, 3, 4]
write(f'{out}/bpe-vocab-only', [
    ('tokenizer.ggml.model', STRING, 'gpt2'), ('tokenizer.ggml.pre', STRING, 'llama-bpe'),
    ('tokenizer.ggml.tokens', ARRAY, (STRING, tokens)), ('tokenizer.ggml.token_type', ARRAY, (I32, types)),
    ('tokenizer.ggml.merges', ARRAY, (STRING, ['h e', 'he l'])),
    ('tokenizer.ggml.bos_token_id', U32, len(tokens) - 3), ('tokenizer.ggml.eos_token_id', U32, len(tokens) - 2),
    ('tokenizer.ggml.add_bos_token', BOOL, 1)])
# SentencePiece style: <unk> <s> </s>, byte fallback for a few bytes, scored pieces.
pieces = ['<unk>', '<s>', '</s>'] + [f'<0x{b:02X}>' for b in (0x0A, 0x20, 0xC3, 0xA9, 0xFF)] + \
         ['▁', 'a', 'b', 'c', '▁a', 'ab', '▁ab', 'é']
ptypes = [2, 3, 3] + [6] * 5 + [1] * 8
scores = [0.0, 0.0, 0.0] + [0.0] * 5 + [-1.0, -2.0, -2.5, -3.0, -1.5, -1.2, -0.5, -4.0]
write(f'{out}/spm-vocab-only', [
    ('tokenizer.ggml.model', STRING, 'llama'),
    ('tokenizer.ggml.tokens', ARRAY, (STRING, pieces)), ('tokenizer.ggml.token_type', ARRAY, (I32, ptypes)),
    ('tokenizer.ggml.scores', ARRAY, (F32, scores)),
    ('tokenizer.ggml.bos_token_id', U32, 1), ('tokenizer.ggml.eos_token_id', U32, 2),
    ('tokenizer.ggml.unknown_token_id', U32, 0)])
# A header only: no keys, no tensors.
with open(f'{out}/empty-header', 'wb') as f:
    f.write(gguf([]))
