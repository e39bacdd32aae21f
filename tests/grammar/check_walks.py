#!/usr/bin/env python3
"""Runs test_grammar_walks (random walks under the token mask) and validates every output it
writes against its schema with python3-jsonschema (formats checked where the module can), so a
grammar that lets a model write schema-invalid JSON fails the suite.

usage: check_walks.py TEST_BINARY OUT_DIR
"""
import glob
import json
import os
import shutil
import subprocess
import sys

import jsonschema

MIN_OUTPUTS = 25  # 5 schemas x 6 walks: fewer means the walks did not run


def main():
    binary, out_dir = sys.argv[1], sys.argv[2]
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    env = dict(os.environ, R1PI_GRAMMAR_WALK_DIR=out_dir)
    run = subprocess.run([binary, "--gtest_filter=GrammarRandomWalk.*"], env=env)
    if run.returncode != 0:
        print(f"FAIL: {binary} exited with {run.returncode}")
        return 1
    failures, checked = 0, 0
    for schema_path in sorted(glob.glob(os.path.join(out_dir, "*.schema.json"))):
        name = os.path.basename(schema_path)[: -len(".schema.json")]
        with open(schema_path, encoding="utf-8") as f:
            schema = json.load(f)
        validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
        for output_path in sorted(glob.glob(os.path.join(out_dir, name + ".[0-9]*.json"))):
            with open(output_path, encoding="utf-8") as f:
                text = f.read()
            checked += 1
            try:
                validator.validate(json.loads(text))
            except (ValueError, jsonschema.ValidationError) as e:
                failures += 1
                print(f"FAIL: {output_path}: {e}\n{text}")
    print(f"check_walks: {checked} outputs checked, {failures} invalid")
    if checked < MIN_OUTPUTS:
        print(f"FAIL: only {checked} outputs (expected at least {MIN_OUTPUTS})")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
