#!/usr/bin/env python3
"""o200k_tokenizer_json.py RANKS_JS OUT: gpt-oss's tokenizer.json (o200k_harmony) from OpenAI's o200k_base
ranks as npm js-tiktoken ships them (dist/ranks/o200k_base.js), laid out as transformers' TikTokenConverter
lays out the published one: the byte-level vocabulary by rank, the merges of every split of a token into two
tokens ordered by the token's rank then the parts' ranks, the harmony specials at 199998..201087
(shared/data/gptoss/ARCH_FACTS.md section 6; 200018 is <|endofprompt|>), and the o200k split regex.
The ranks are OpenAI's (the README of shared/data/gptoss checks their sha256)."""
import base64
import json
import sys

# The pattern of o200k_base (openai/harmony's public_encodings.rs), as the tokenizer.json spells it.
PATTERN = "|".join([
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"\p{N}{1,3}", r" ?[^\s\p{L}\p{N}]+[\r\n/]*", r"\s*[\r\n]+", r"\s+(?!\S)", r"\s+"])

NAMED = {199998: "<|startoftext|>", 199999: "<|endoftext|>", 200002: "<|return|>", 200003: "<|constrain|>",
         200005: "<|channel|>", 200006: "<|start|>", 200007: "<|end|>", 200008: "<|message|>",
         200012: "<|call|>", 200018: "<|endofprompt|>"}
N_VOCAB = 201088


def byte_text():
    """GPT-2's map of bytes to printable characters (the byte-level vocabulary's spelling)."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def main():
    source = open(sys.argv[1], encoding="utf-8").read()
    data = json.loads(source[source.index("{"):source.rindex("}") + 1])
    ranks = {}
    for line in data["bpe_ranks"].split("\n"):
        if not line:
            continue
        _, first, *tokens = line.split(" ")
        for i, token in enumerate(tokens):
            ranks[base64.b64decode(token)] = int(first) + i
    assert len(ranks) == 199998 and sorted(ranks.values()) == list(range(199998)), "not o200k_base's ranks"
    table = byte_text()
    text = lambda b: "".join(table[x] for x in b)
    merges = []
    for token, rank in ranks.items():
        splits = [(token[:i], token[i:]) for i in range(1, len(token)) if token[:i] in ranks and token[i:] in ranks]
        splits.sort(key=lambda s: (ranks[s[0]], ranks[s[1]]))
        merges.extend((rank, left, right) for left, right in splits)
    merges.sort(key=lambda m: m[0])
    added = [{"id": i, "content": NAMED.get(i, "<|reserved_%d|>" % i), "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": True} for i in range(199998, N_VOCAB)]
    doc = {
        "version": "1.0",
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": PATTERN}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "byte_fallback": False,
                  "vocab": {text(t): r for t, r in sorted(ranks.items(), key=lambda kv: kv[1])},
                  "merges": [[text(l), text(r)] for _, l, r in merges]},
    }
    with open(sys.argv[2], "w", encoding="utf-8") as out:
        json.dump(doc, out, ensure_ascii=False)
    print("%s: %d tokens, %d merges" % (sys.argv[2], N_VOCAB, len(merges)))


if __name__ == "__main__":
    main()
