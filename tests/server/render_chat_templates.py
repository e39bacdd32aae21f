#!/usr/bin/env python3
"""Renders the chat templates in shared/data with Jinja2, as Hugging Face's apply_chat_template
does, into tests/server/chat_template_cases.json: test_chat_text compares r1pi's C++ renderings
with these strings. Run it again (python3 tests/server/render_chat_templates.py) after changing
a case; the JSON is checked in so that the tests need neither Python nor Jinja2.

Each case names the template file, the messages, the variables Jinja gets (enable_thinking when
set) and what r1pi is given for them (`thinking`: --reasoning, chat_template_kwargs). Where the
two differ it is r1pi's reading of Qwen3's soft switch: a "/no_think" in the latest message that
has a switch renders as enable_thinking=false (the empty think block Qwen3 would write itself).

The messages are r1pi's (ChatMessage: reasoning_content, tool_calls with their arguments as JSON
text, tool_call_id); Jinja gets them as r1pi's chat_format.cpp passes them to a model's template
(the arguments as objects, gpt-oss's reasoning as `thinking`). gpt-oss's cases also give `tools`
and `reasoning_effort`; its template's "Current date" line is taken out, as r1pi leaves it out
(the prompt stays a function of the request).
"""
import datetime
import json
import os
import re
import sys

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.environ.get("R1PI_SHARED_DATA", os.path.join(ROOT, "..", "shared", "data"))
OUT = os.path.join(ROOT, "tests", "server", "chat_template_cases.json")

# template file under shared/data, r1pi's name for it, the BOS text the template writes (r1pi's
# tokenizer adds BOS instead: the test puts it in front of r1pi's rendering).
TEMPLATES = {
    "qwen3": ("qwen/templates/qwen3-chat_template.extracted.jinja", ""),
    "qwen2.5": ("qwen/templates/Qwen-Qwen2.5-7B-Instruct.jinja", ""),
    "deepseek-r1": ("qwen/templates/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "<｜begin▁of▁sentence｜>"),
    "harmony": ("templates/openai-gpt-oss-120b.jinja", ""),
}


def user(text):
    return {"role": "user", "content": text}


def system(text):
    return {"role": "system", "content": text}


def assistant(text):
    return {"role": "assistant", "content": text}


ANSWER = "<think>\nTwo and two make four.\n</think>\n\nIt is 4."
MULTI_TURN = [system("Be brief."), user("2+2?"), assistant(ANSWER), user("And 3+3?")]

# gpt-oss's tools: every parameter shape its template's TypeScript rendering knows.
TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Get the weather in a city.",
        "parameters": {"type": "object", "required": ["city"], "properties": {
            "city": {"type": "string", "description": "The city, e.g. Oslo"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
            "days": {"type": "integer", "default": 1},
            "tags": {"type": "array", "items": {"type": "string"}},
            "points": {"type": "array", "items": {"type": "object", "required": ["x"],
                                                  "properties": {"x": {"type": "number"}, "y": {"type": "number"}}}},
            "pairs": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
            "where": {"type": "object", "required": ["lat", "lon"],
                      "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}}},
            "mode": {"type": ["string", "null"]},
            "either": {"oneOf": [{"type": "string", "description": "a name"}, {"type": "number", "default": 3}],
                       "default": "x"},
            "shape": {"oneOf": [{"type": "object"}, {"type": "string"}]},
            "note": {"type": "string", "nullable": True},
            "flag": {"type": "boolean", "default": False},
            "anything": {}}}}},
    {"type": "function", "function": {"name": "now", "description": "The time.",
                                      "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {"name": "bare", "description": "No parameters at all."}},
]


def call(call_id, name, arguments):
    return {"id": call_id, "name": name, "arguments": json.dumps(arguments)}


WEATHER_CALL = [system("Be brief."), user("Weather in Oslo?"),
                {"role": "assistant", "content": "", "reasoning_content": "I should call get_weather.",
                 "tool_calls": [call("call_1", "get_weather", {"city": "Oslo", "days": 2})]},
                {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": \"4 C\"}\nsnow \"ok\""}]
WEATHER_ANSWERED = WEATHER_CALL + [assistant("It is 4 C."), user("Thanks")]

# (name, template, messages, enable_thinking for Jinja (None: undefined), thinking for r1pi[,
# other variables: tools, reasoning_effort])
CASES = [
    ("qwen3_one_question", "qwen3", [user("Hi")], None, True),
    ("qwen3_thinking_off", "qwen3", [user("Hi")], False, False),
    ("qwen3_thinking_on_explicitly", "qwen3", [user("Hi")], True, True),
    ("qwen3_system", "qwen3", [system("You are terse."), user("Hi")], None, True),
    ("qwen3_multi_turn_drops_reasoning", "qwen3", MULTI_TURN, None, True),
    ("qwen3_multi_turn_thinking_off", "qwen3", MULTI_TURN, False, False),
    ("qwen3_answers_in_every_shape", "qwen3",
     [user("a"), assistant("plain answer"),
      user("b"), assistant("reasoning without an opening</think>\n\n\nanswer b"),
      user("c"), assistant("<think>one</think>two</think>\nthree"),
      user("d"), assistant("\n\nleading newlines, no think block"),
      user("e")], None, True),
    ("qwen3_middle_system", "qwen3",
     [user("a"), assistant("b"), system("Now in French."), user("c")], None, True),
    ("qwen3_answer_after_the_last_question_keeps_reasoning", "qwen3",
     [user("q"), assistant("<think>\n\nr1\n\n</think>\n\na1"), assistant("<think>r2</think>a2"),
      assistant("no reasoning here"), assistant("last, no reasoning")], None, True),
    ("qwen3_tool_response_is_not_a_question", "qwen3",
     [user("q"), assistant("<think>r</think>a"), user("<tool_response>\n42\n</tool_response>")], None, True),
    ("qwen3_no_think_switch", "qwen3", [user("Hi /no_think")], False, True),
    ("qwen3_no_think_in_system", "qwen3", [system("/no_think"), user("Hi")], False, True),
    ("qwen3_think_after_no_think", "qwen3",
     [user("a /no_think"), assistant("<think>\n\n</think>\n\nA"), user("b /think")], None, True),
    ("qwen3_no_think_stays", "qwen3",
     [user("a /think"), assistant("<think>\nr\n</think>\n\nA"), user("b /no_think"), assistant("B"), user("c")],
     False, True),
    ("qwen3_last_switch_in_a_message_wins", "qwen3", [user("/no_think or /think?")], None, True),
    ("qwen3_think_switch_does_not_undo_off", "qwen3", [user("Hi /think")], False, False),
    ("qwen3_unicode", "qwen3", [user("¿Qué es 2+2? 日本語 🙂")], None, True),
    ("qwen2.5_default_system", "qwen2.5", [user("Hi")], None, True),
    ("qwen2.5_system", "qwen2.5", [system("You are terse."), user("Hi")], None, True),
    ("qwen2.5_multi_turn_keeps_answers", "qwen2.5", MULTI_TURN, None, True),
    ("qwen2.5_middle_system", "qwen2.5", [user("a"), assistant("b"), system("S"), user("c")], None, True),
    ("qwen2.5_ignores_thinking_and_switches", "qwen2.5", [user("Hi /no_think")], False, False),
    ("deepseek-r1_one_question", "deepseek-r1", [user("Hi")], None, True),
    ("deepseek-r1_multi_turn", "deepseek-r1",
     [system("old"), user("2+2?"), assistant("sum</think>a</think>\n\n4"), system("Be brief."), user("3+3?")],
     None, True),
    ("deepseek-r1_ignores_thinking_and_switches", "deepseek-r1", [user("Hi /no_think")], False, False),
    ("harmony_one_question", "harmony", [user("Hi")], None, True),
    ("harmony_multi_turn_high", "harmony", [system("Be brief."), user("2+2?"), assistant("4"), user("3+3?")],
     None, True, {"reasoning_effort": "high"}),
    ("harmony_developer", "harmony", [{"role": "developer", "content": "Answer in French."}, user("Hi")],
     None, True, {"reasoning_effort": "low"}),
    ("harmony_tools_listed", "harmony", [user("Hi")], None, True, {"tools": TOOLS}),
    ("harmony_call_and_result", "harmony", WEATHER_CALL, None, True, {"tools": TOOLS}),
    ("harmony_answer_after_a_call", "harmony", WEATHER_ANSWERED, None, True,
     {"tools": TOOLS, "reasoning_effort": "high"}),
]

# strftime_now's clock for the templates that print the date.
NOW = datetime.datetime(2025, 1, 2, 3, 4, 5)


def jinja_message(m):
    """A message as chat_format.cpp gives it to a model's template."""
    out = {k: v for k, v in m.items() if k not in ("reasoning_content", "tool_calls")}
    if m.get("reasoning_content"):
        out["reasoning_content"] = out["thinking"] = m["reasoning_content"]
    if m.get("tool_calls"):
        out["tool_calls"] = [{"id": c["id"], "type": "function",
                              "function": {"name": c["name"], "arguments": json.loads(c["arguments"])}}
                             for c in m["tool_calls"]]
    return out


def render(template_text, messages, bos_token, enable_thinking, extra):
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = lambda x, **kw: json.dumps(x, ensure_ascii=False, **kw)
    env.globals["strftime_now"] = NOW.strftime
    variables = {"messages": [jinja_message(m) for m in messages], "add_generation_prompt": True,
                 "bos_token": bos_token, "eos_token": "", **extra}
    if enable_thinking is not None:
        variables["enable_thinking"] = enable_thinking
    text = env.from_string(template_text).render(**variables)
    return re.sub(r"Current date: [0-9-]+\n", "", text, count=1)


def main():
    cases = []
    for name, template, messages, enable_thinking, thinking, *rest in CASES:
        extra = rest[0] if rest else {}
        path, bos = TEMPLATES[template]
        with open(os.path.join(SHARED, path), encoding="utf-8") as f:
            text = f.read()
        cases.append({"name": name, "template": template, "file": path, "bos_token": bos,
                      "messages": messages, "jinja_enable_thinking": enable_thinking,
                      "thinking": thinking, **extra,
                      "expected": render(text, messages, bos, enable_thinking, extra)})
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump({"generator": "tests/server/render_chat_templates.py, jinja2 " + jinja2.__version__,
                   "cases": cases}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote %d cases to %s" % (len(cases), OUT), file=sys.stderr)


if __name__ == "__main__":
    main()
