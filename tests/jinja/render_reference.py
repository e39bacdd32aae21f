#!/usr/bin/env python3
"""Renders every chat template of the shared data over a corpus of conversations with Python's
jinja2 set up as Hugging Face transformers sets it up, and writes the cases with what each gave
(the text, the message of the template's raise_exception, or another error) as JSON for
test_jinja_templates, which renders the same cases with r1pi's engine (src/jinja).

usage: render_reference.py SHARED_DATA_DIR OUT.json
"""
import hashlib
import json
import os
import sys
from datetime import datetime

try:
    import jinja2
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment
except ImportError:
    sys.exit("error: render_reference.py needs Python's jinja2 (Debian: python3-jinja2)")

# The fixed clock of strftime_now; the C++ side reads it from the JSON.
NOW = 1735787045  # 2025-01-02 03:04:05 UTC


class RaisedByTemplate(Exception):
    """What transformers' raise_exception raises (jinja2.exceptions.TemplateError there)."""


def environment():
    """transformers' _compile_jinja_template: the sandbox, the whitespace options, loop controls,
    tojson as json.dumps with ensure_ascii=False, raise_exception and strftime_now."""

    def raise_exception(message):
        raise RaisedByTemplate(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return datetime.fromtimestamp(NOW).strftime(format)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


# ---- the corpus

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.  ",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city, e.g. Paris"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Unit", "default": "celsius"},
                "days": {"type": "integer", "description": "How many days", "default": 1},
            },
            "required": ["city"],
        },
    },
}
SEARCH = {
    "type": "function",
    "function": {
        "name": "search_docs",
        "description": "Search the documents — ünïcödé welcome.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for"},
                "limit": {"type": "number", "description": "At most this many", "default": 2.5, "nullable": True},
                "tags": {"type": "array", "items": {"type": "string"}, "description": "Tags to match"},
                "filters": {
                    "type": "object",
                    "description": "Extra filters",
                    "properties": {"lang": {"type": "string", "description": "Language"}},
                    "required": ["lang"],
                },
                "mode": {"type": ["string", "null"], "description": "Mode"},
                "target": {"oneOf": [{"type": "string"}, {"type": "integer"}], "description": "Target"},
                "exact": {"type": "boolean", "description": "Exact match"},
            },
            "required": ["query", "tags"],
        },
    },
}
NO_PARAMS = {
    "type": "function",
    "function": {"name": "get_time", "description": "The time now.", "parameters": {"type": "object", "properties": {}}},
}


def call(call_id, name, arguments, as_string=False):
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False) if as_string else arguments},
    }


def conversations():
    """(name, messages, tools or None, extra variables) for every template."""
    sys_msg = {"role": "system", "content": "You are a concise assistant."}
    user = {"role": "user", "content": "What is the capital of France?"}
    answer = {"role": "assistant", "content": "Paris."}
    user2 = {"role": "user", "content": "And of Germany?"}
    weather_call = call("call12345", "get_weather", {"city": "Paris", "days": 2})
    weather_result = {"role": "tool", "tool_call_id": "call12345", "content": "{\"temp\": 21.5, \"sky\": \"clear\"}"}
    out = [
        ("plain", [user], None, {}),
        ("system", [sys_msg, user], None, {}),
        ("multi_turn", [user, answer, user2], None, {}),
        ("system_multi_turn", [sys_msg, user, answer, user2], None, {}),
        ("ends_with_assistant", [user, answer], None, {}),
        ("developer", [{"role": "developer", "content": "Answer in French."}, user], None, {}),
        ("non_ascii", [{"role": "user", "content": "Héllo wörld — 你好, 🌍! \"quotes\" and 'single' \\ back\tslash"},
                       {"role": "assistant", "content": "Bonjour 👋 ça va?"},
                       {"role": "user", "content": "Ещё раз\r\nplease\u2028"}], None, {}),
        ("whitespace", [{"role": "system", "content": "  padded system /think  \n"},
                        {"role": "user", "content": "\n\n  spaced  \n"},
                        {"role": "assistant", "content": "\n\nanswer with leading newlines\n"},
                        {"role": "user", "content": ""}], None, {}),
        ("reasoning", [user, {"role": "assistant", "content": "Paris.", "reasoning_content": "The user asks about France."},
                       user2], None, {}),
        ("think_in_content", [user, {"role": "assistant", "content": "<think>\nFrance's capital.\n</think>\n\nParis."},
                              user2], None, {}),
        ("thinking_field", [user, {"role": "assistant", "content": "Paris.", "thinking": "Easy one."}], None, {}),
        ("tools_offered", [user], [WEATHER, SEARCH, NO_PARAMS], {}),
        ("tools_system", [sys_msg, user], [WEATHER], {}),
        ("tools_none", [user], None, {"tools": None}),
        ("tool_call_object", [{"role": "user", "content": "Weather in Paris?"},
                              {"role": "assistant", "content": "", "tool_calls": [weather_call]}, weather_result],
         [WEATHER], {}),
        ("tool_call_string", [{"role": "user", "content": "Weather in Paris?"},
                              {"role": "assistant", "content": "",
                               "tool_calls": [call("call12345", "get_weather", {"city": "Paris"}, as_string=True)]},
                              weather_result], [WEATHER], {}),
        ("tool_call_then_answer", [sys_msg, {"role": "user", "content": "Weather in Paris?"},
                                   {"role": "assistant", "content": None, "tool_calls": [weather_call]}, weather_result,
                                   {"role": "assistant", "content": "It is 21.5 °C and clear."},
                                   {"role": "user", "content": "Thanks!"}], [WEATHER, SEARCH], {}),
        ("two_tool_calls", [{"role": "user", "content": "Paris and Berlin?"},
                            {"role": "assistant", "content": "Let me check.",
                             "tool_calls": [weather_call, call("call67890", "get_weather", {"city": "Berlin", "unit": "fahrenheit"})]},
                            weather_result,
                            {"role": "tool", "tool_call_id": "call67890", "content": "cloudy, 60F"}], [WEATHER], {}),
        ("tool_call_reasoning", [{"role": "user", "content": "Search for cats"},
                                 {"role": "assistant", "content": "", "reasoning_content": "I should search.",
                                  "tool_calls": [call("abcde1234", "search_docs",
                                                      {"query": "cats", "tags": ["pets", "ü"], "limit": 3,
                                                       "filters": {"lang": "en"}, "exact": False, "mode": None})]},
                                 {"role": "tool", "tool_call_id": "abcde1234", "content": "[\"doc1\", \"doc2\"]"}],
         [SEARCH], {}),
        ("tool_result_last_no_tools", [user, {"role": "assistant", "content": "", "tool_calls": [weather_call]},
                                       weather_result], None, {}),
        ("long_chat", [sys_msg] + [m for k in range(10) for m in (
            {"role": "user", "content": f"Question {k}: what is {k} + {k}?"},
            {"role": "assistant", "content": f"{k} + {k} = {2 * k}."})] + [user2], None, {}),
        ("builtin_tools", [user], [WEATHER], {"builtin_tools": ["brave_search", "wolfram_alpha", "code_interpreter"]}),
        ("extra_kwargs", [user], None, {"reasoning_effort": "high", "model_identity": "You are a test model.",
                                        "date_string": "01 Jan 2025", "tools_in_user_message": False}),
        ("documents", [user], None, {"documents": [{"doc_id": 1, "title": "A", "text": "Paris is in France."},
                                                   {"doc_id": "d2", "text": "Berlin is in Germany."}],
                                     "controls": {"citations": True, "length": "short"}, "thinking": True}),
        ("content_blocks", [{"role": "user", "content": [{"type": "text", "text": "Describe"},
                                                         {"type": "image_url", "image_url": {"url": "x"}}]}], None, {}),
        ("system_only", [sys_msg], None, {}),
        ("numbers_in_content", [{"role": "user", "content": "2 < 3 && 5 > 4 ' \" & <b>"}], None, {}),
        # What templates refuse: Gemma a system role, Mistral tool-call ids that are not 9
        # characters, roles out of order, gpt-oss channel tags in content.
        ("bad_tool_call_id", [{"role": "user", "content": "Weather?"},
                              {"role": "assistant", "content": "", "tool_calls": [call("call_0123456789", "get_weather", {"city": "Oslo"})]},
                              {"role": "tool", "tool_call_id": "call_0123456789", "content": "snow"}], [WEATHER], {}),
        ("roles_out_of_order", [user, user2], None, {}),
        ("assistant_first", [answer, user], None, {}),
        ("channel_tags", [user, {"role": "assistant", "content": "<|channel|>final<|message|>hi"}], None, {}),
        ("unknown_role", [{"role": "critic", "content": "Hmm."}, user], None, {}),
    ]
    return out


def cases_for(messages, tools, extra):
    """The variable sets one conversation is rendered with."""
    base = {"messages": messages, "bos_token": "<BOS>", "eos_token": "<EOS>"}
    if tools is not None:
        base["tools"] = tools
    variants = []
    for agp in (True, False):
        for thinking in ("absent", True, False):
            v = dict(base)
            v["add_generation_prompt"] = agp
            if thinking != "absent":
                v["enable_thinking"] = thinking
            v.update(extra)
            variants.append((f"agp={agp},thinking={thinking}", v))
    return variants


def template_files(shared):
    """The .jinja files of templates/ (all of them), then those of qwen/templates/ and the R1
    distill's whose text is not among them already."""
    paths = sorted(os.path.join(shared, "templates", f) for f in os.listdir(os.path.join(shared, "templates"))
                   if f.endswith(".jinja"))
    seen = {hashlib.sha256(open(p, "rb").read()).hexdigest() for p in paths}
    extras = sorted(os.path.join(shared, "qwen", "templates", f)
                    for f in os.listdir(os.path.join(shared, "qwen", "templates")) if f.endswith(".jinja"))
    extras.append(os.path.join(shared, "deepseek-r1-distill-llama-8b.chat_template.jinja"))
    for p in extras:
        digest = hashlib.sha256(open(p, "rb").read()).hexdigest()
        if digest not in seen:
            seen.add(digest)
            paths.append(p)
    return paths


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    shared, out_path = sys.argv[1], sys.argv[2]
    env = environment()
    cases = []
    for path in template_files(shared):
        with open(path, encoding="utf-8") as f:
            template = env.from_string(f.read())
        for conv_name, messages, tools, extra in conversations():
            for variant, variables in cases_for(messages, tools, extra):
                case = {"template": path, "name": f"{os.path.basename(path)}:{conv_name}:{variant}",
                        "variables": variables}
                try:
                    case["expected"] = template.render(**variables)
                except RaisedByTemplate as e:
                    case["raised"] = str(e)
                except Exception as e:  # the template fails on this input in Python too
                    case["error"] = f"{type(e).__name__}: {e}"
                cases.append(case)
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump({"now": NOW, "jinja2_version": jinja2.__version__, "cases": cases}, f, ensure_ascii=False)
    outcomes = {k: sum(k in c for c in cases) for k in ("expected", "raised", "error")}
    print(f"{len(cases)} cases from {len(template_files(shared))} templates: {outcomes}")


if __name__ == "__main__":
    main()
