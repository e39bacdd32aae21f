#!/usr/bin/env python3
"""What a JSON schema costs the decode: r1pi and a current llama.cpp, free and held to a nested schema
(bench/nested_schema.json), on the same GGUF files, interleaved in one run.

For every round and model, four greedy runs of N tokens after the prompt "Why is the sky blue?",
in an order that alternates between rounds: r1pi free (--ignore-eos) and with --json-schema-file,
llama.cpp (node-llama-cpp's prebuilt CPU library, bench/llamacpp_grammar_decode.mjs) free and
with its LlamaJsonSchemaGrammar. A warm-up round comes first. A constrained run ends where its
schema's object closes, or after N tokens; its rate is over the tokens it decoded (printed). Each
constrained answer is checked against the schema (python3-jsonschema) where it is whole.

  bench/grammar_cost.py -m llama8b.gguf qwen3-8b.gguf -t 2 -n 64 --rounds 5
"""
import json
import os
import statistics
import sys

import jsonschema

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from r1pibench import runs  # noqa: E402

SCHEMA = os.path.join(runs.SOURCE, "bench", "nested_schema.json")
PROMPT = "Why is the sky blue?"


def checked_json(text, schema):
    """Validates a whole constrained answer; a cut one (N reached) is only reported."""
    try:
        value = json.loads(text)
    except ValueError:
        return "cut"
    jsonschema.validate(value, schema)
    return "valid"


def main():
    a = runs.llamacpp_arguments(__doc__, 64).parse_args()
    build = runs.build_dir(a.build)
    schema = json.load(open(SCHEMA))
    script = runs.llamacpp_script(build, "llamacpp_grammar_decode.mjs")
    kinds = [("r1pi", False), ("r1pi", True), ("llama.cpp", False), ("llama.cpp", True)]
    rates = {m: {k: [] for k in kinds} for m in a.models}
    counts = {m: {k: [] for k in kinds} for m in a.models}
    answers = {}

    def one(model, tool, constrained):
        if tool == "r1pi":
            cmd = [os.path.join(build, "r1pi"), "-m", model, "-p", PROMPT, "-n", a.n, "--temp", 0, "-t", a.threads]
            cmd += ["--json-schema-file", SCHEMA] if constrained else ["--ignore-eos"]
            out, err = runs.checked(cmd)
            s = runs.r1pi_summary(err)
            # r1pi prints the prompt, then the answer.
            return s["decode"], s["decode_tokens"], out[out.find(PROMPT) + len(PROMPT):] if PROMPT in out else out
        out, _ = runs.checked(["node", script, model, a.threads, a.n] + ([SCHEMA] if constrained else []))
        r = json.loads(out.strip().splitlines()[-1])
        return r["decode_tok_s"], r["tokens"], r["text"]

    for r in range(-1, a.rounds):
        for m in a.models:
            for tool, constrained in (kinds if r % 2 == 0 else kinds[::-1]):
                rate, count, text = one(m, tool, constrained)
                if r >= 0:
                    rates[m][(tool, constrained)].append(rate)
                    counts[m][(tool, constrained)].append(count)
                if constrained:
                    answers[(m, tool)] = (checked_json(text, schema), count, text)
                runs.progress("round %d %s %s %s: %.2f tok/s over %d tokens" % (
                    r + 1, os.path.basename(m), tool, "schema" if constrained else "free", rate, count))
    print("threads %d, at most %d tokens per run, %d rounds, schema %s, %s\n"
          % (a.threads, a.n, a.rounds, os.path.relpath(SCHEMA, runs.SOURCE), runs.uptime()))
    print("| model | tool | free tok/s | schema tok/s (tokens) | schema / free |")
    print("|---|---|---|---|---|")
    for m in a.models:
        for tool in ("r1pi", "llama.cpp"):
            free, held = rates[m][(tool, False)], rates[m][(tool, True)]
            print("| %s | %s | %s | %s (%s) | %.3f |" % (
                os.path.basename(m), tool, " ".join("%.2f" % v for v in free), " ".join("%.2f" % v for v in held),
                " ".join(str(c) for c in counts[m][(tool, True)]), statistics.mean(held) / statistics.mean(free)))
    print()
    for (m, tool), (verdict, count, text) in answers.items():
        print("%s %s: %s answer of %d tokens: %s" % (os.path.basename(m), tool, verdict, count, json.dumps(text[:160])))


if __name__ == "__main__":
    main()
