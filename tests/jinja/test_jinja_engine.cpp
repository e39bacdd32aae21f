// The corners of the Jinja engine (src/jinja): whitespace control, loop variables, scoping,
// Python's printing of values, filters, tests and methods, each expectation what Python's jinja2
// 3.1 gave for the same template and variables (set up as transformers sets it up); then errors
// with where they are, the sandbox's refusals and raise_exception.
#include <gtest/gtest.h>

#include "jinja/jinja.h"

namespace {

using nlohmann::ordered_json;
using r1pi::jinja::Template;

std::string render(std::string_view source, const ordered_json& vars = ordered_json::object()) {
  return Template(source).render(vars);
}

std::string error_of(std::string_view source, const ordered_json& vars = ordered_json::object()) {
  try {
    render(source, vars);
  } catch (const r1pi::jinja::Error& e) {
    return e.what();
  }
  return "no error";
}

struct Case {
  const char* source;
  const char* variables;  // JSON
  const char* python;  // what jinja2 rendered
};

const Case kCases[] = {
    {"a\n  {% if true %}\n  x\n  {% endif %}\nb",
     "{}",
     "a\n  x\nb"},
    {"a  {%- if true -%}  x  {%- endif -%}  b",
     "{}",
     "axb"},
    {"a\n  {%+ if true %}x{% endif +%}\nb",
     "{}",
     "a\n  x\nb"},
    {"  {# comment #}\nx\n{#- c -#}   y",
     "{}",
     "xy"},
    {"{{ 1 }}\n{{ 2 }}\n",
     "{}",
     "1\n2"},
    {"{% raw %}{{ not parsed }}{% endraw %}\n!",
     "{}",
     "{{ not parsed }}!"},
    {"line\r\nnext\r\n",
     "{}",
     "line\nnext"},
    {"{% for x in xs %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.revindex }}{{ loop.revindex0 }}|{% endfor %}",
     "{\"xs\": [\"a\", \"b\", \"c\"]}",
     "10TrueFalse332|21FalseFalse321|32FalseTrue310|"},
    {"{% for x in xs %}{{ loop.previtem }}-{{ loop.nextitem }};{% endfor %}",
     "{\"xs\": [1, 2, 3]}",
     "-2;1-3;2-;"},
    {"{% for x in xs if x is odd %}{{ x }}{{ loop.length }}{% else %}empty{% endfor %}",
     "{\"xs\": [1, 2, 3, 5]}",
     "133353"},
    {"{% for x in xs %}{{ x }}{% else %}empty{% endfor %}",
     "{\"xs\": []}",
     "empty"},
    {"{% for k, v in d.items() %}{{ k }}={{ v }},{% endfor %}",
     "{\"d\": {\"b\": 1, \"a\": 2}}",
     "b=1,a=2,"},
    {"{% for x in xs %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 4 %}{% break %}{% endif %}{{ x }}{% endfor %}",
     "{\"xs\": [1, 2, 3, 4, 5]}",
     "13"},
    {"{% set n = 0 %}{% for x in xs %}{% set n = n + x %}{% endfor %}{{ n }}",
     "{\"xs\": [1, 2]}",
     "0"},
    {"{% set ns = namespace(n=0) %}{% for x in xs %}{% set ns.n = ns.n + x %}{% endfor %}{{ ns.n }}",
     "{\"xs\": [1, 2]}",
     "3"},
    {"{% for x in 'abc' %}{{ loop.cycle('o', 'e') }}{{ x }}{% endfor %}",
     "{}",
     "oaeboc"},
    {"{{ none }} {{ true }} {{ 1.0 }} {{ 0.1 + 0.2 }} {{ 1e20 }} {{ 1.5e-7 }} {{ [1, 'a', none, 2.5] }} {{ {'k': 'v', 'n': [true]} }} {{ ('x',) }}",
     "{}",
     "None True 1.0 0.30000000000000004 1e+20 1.5e-07 [1, 'a', None, 2.5] {'k': 'v', 'n': [True]} ('x',)"},
    {"{{ x }}|{{ d }}",
     "{\"x\": \"it's \\\"q\\\"\", \"d\": {\"a\": \"it's\", \"b\": \"\\né \"}}",
     "it's \"q\"|{'a': \"it's\", 'b': '\\né\\xa0'}"},
    {"{{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }} {{ 'ab' * 3 }} {{ 1 ~ 'x' ~ none }}",
     "{}",
     "3 -4 2 3.5 1024 ababab 1xNone"},
    {"{{ s[1:3] }} {{ s[-2:] }} {{ s[::-1] }} {{ xs[:-1] }} {{ xs[::2] }} {{ s[0] }} {{ s[-1] }}",
     "{\"s\": \"héllo\", \"xs\": [1, 2, 3, 4]}",
     "él lo olléh [1, 2, 3] [1, 3] h o"},
    {"{{ 'a' in 'cat' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 'z' not in 'cat' }} {{ 1 < 2 < 3 }} {{ [1, 2] < [1, 3] }}",
     "{}",
     "True True True True True True"},
    {"{{ x if x else 'no' }} {{ 'y' if false }}|{{ none or 'a' }} {{ 0 and 1 }}",
     "{\"x\": \"\"}",
     "no |a 0"},
    {"{{ x is defined }} {{ y is defined }} {{ none is none }} {{ 's' is string }} {{ {} is mapping }} {{ [] is iterable }} {{ 1 is number }} {{ true is number }} {{ 's' is sequence }} {{ true is boolean }} {{ 1 is integer }} {{ 1.0 is float }} {{ 3 is divisibleby 3 }} {{ y is iterable }}",
     "{\"x\": 1}",
     "True False True True True True True True True True True True True True"},
    {"{{ d | tojson }}|{{ d | tojson(indent=2) }}|{{ d | tojson(separators=(',', ':'), sort_keys=true) }}",
     "{\"d\": {\"b\": [1, 2.5, null, true], \"a\": \"é\\\"\\n\"}}",
     "{\"b\": [1, 2.5, null, true], \"a\": \"é\\\"\\n\"}|{\n  \"b\": [\n    1,\n    2.5,\n    null,\n    true\n  ],\n  \"a\": \"é\\\"\\n\"\n}|{\"a\":\"é\\\"\\n\",\"b\":[1,2.5,null,true]}"},
    {"{{ '  x  ' | trim }}|{{ 'xxhixx' | trim('x') }}|{{ [1,2] | length }}|{{ 'abc' | upper }}|{{ 'hello world-foo' | title }}|{{ 'hELLO' | capitalize }}|{{ 'aaa' | replace('a', 'b', 2) }}",
     "{}",
     "x|hi|2|ABC|Hello World-Foo|Hello|bba"},
    {"{{ [1, 2, 3] | join(', ') }}|{{ x | default('d') }}|{{ '' | default('d', true) }}|{{ [3, 1] | first }}|{{ [3, 1] | last }}|{{ 'ab' | list }}|{{ {'a': 1} | items | list }}",
     "{}",
     "1, 2, 3|d|d|3|1|['a', 'b']|[('a', 1)]"},
    {"{{ xs | selectattr('r', 'equalto', 'u') | map(attribute='c') | join }}|{{ xs | rejectattr('r', 'eq', 'u') | list | length }}|{{ [1, 2, 3, 4] | select('even') | list }}|{{ [1, 2, 3] | reject('odd') | list }}|{{ ['a', 'A', 'b'] | unique | list }}",
     "{\"xs\": [{\"r\": \"u\", \"c\": \"x\"}, {\"r\": \"a\", \"c\": \"y\"}, {\"r\": \"u\", \"c\": \"z\"}]}",
     "xz|1|[2, 4]|[2]|['a', 'b']"},
    {"{{ 1 | string }}{{ '42' | int + 1 }}|{{ '4.5' | float }}|{{ 'x' | int }}|{{ 'a\nb\n\nc' | indent(2) }}|{{ 'a\nb' | indent(2, true) }}|{{ {'b': 1, 'a': 2} | dictsort }}|{{ ['b', 'A', 'c'] | sort }}|{{ [1, 2] | reverse | list }}|{{ 2.5 | round }}|{{ 3.14159 | round(2) }}|{{ -3 | abs }}|{{ '<a>' | e }}|{{ 'one two, three' | wordcount }}",
     "{}",
     "143|4.5|0|a\n  b\n\n  c|  a\n  b|[('a', 2), ('b', 1)]|['A', 'b', 'c']|[2, 1]|2.0|3.14|3|&lt;a&gt;|3"},
    {"{{ ['a', 'b'] | map('upper') | join('-') }}|{{ [1, 2] | sum }}|{{ [3, 1, 2] | max }}|{{ 'hi' | center(6) }}|",
     "{}",
     "A-B|3|3|  hi  |"},
    {"{{ s.strip() }}|{{ s.lstrip() }}|{{ s.rstrip() }}|{{ 'xxaxx'.strip('x') }}|{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'a,b,c'.rsplit(',', 1) }}|{{ 'abc'.startswith('ab') }}|{{ 'abc'.endswith(('x', 'c')) }}|{{ 'ab'.upper() }}|{{ 'hello world'.title() }}|{{ 'abcabc'.find('c') }}|{{ 'abcabc'.count('b') }}|{{ 'a-b'.replace('-', '+') }}",
     "{\"s\": \"  pad  \"}",
     "pad|pad  |  pad|a|['a', 'b', '', 'c']|['a', 'b']|['a,b', 'c']|True|True|AB|Hello World|2|2|a+b"},
    {"{{ d.get('a') }}|{{ d.get('z', 'no') }}|{{ d.get('z') }}|{{ d.keys() | list }}|{{ d.values() | list }}|{{ d['items'] }}|{{ d.items | string | length > 0 }}",
     "{\"d\": {\"a\": 1, \"items\": \"x\"}}",
     "1|no|None|['a', 'items']|[1, 'x']|x|True"},
    {"{% macro m(a, b='B', c=none) %}[{{ a }}{{ b }}{{ c }}]{% endmacro %}{{ m(1) }}{{ m(1, 2) }}{{ m(1, c=3) }}{{ m() }}",
     "{}",
     "[1BNone][12None][1B3][BNone]"},
    {"{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(3) }}",
     "{}",
     "321"},
    {"{% set top = 'T' %}{% macro m() %}{{ top }}{% endmacro %}{% set top = 'U' %}{{ m() }}",
     "{}",
     "U"},
    {"{% set x %}a{{ 1 }}b{% endset %}{{ x }}|{% set y | upper %}up{% endset %}{{ y }}|{% filter upper %}low{% endfilter %}",
     "{}",
     "a1b|UP|LOW"},
    {"{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set t = (1, 2) %}{{ t }}",
     "{}",
     "12(1, 2)"},
    {"[{{ missing }}][{{ d.missing }}][{{ missing | length }}][{% for x in missing %}x{% endfor %}][{{ missing is defined }}]",
     "{\"d\": {}}",
     "[][][0][][False]"},
    {"{{ xs.0 }}{{ xs[1] }}{{ d.a }}{{ d['a'] }}",
     "{\"xs\": [5, 6], \"d\": {\"a\": \"A\"}}",
     "56AA"},
};

TEST(JinjaEngine, RendersAsPythonJinja2) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.source);
    try {
      EXPECT_EQ(render(c.source, ordered_json::parse(c.variables)), c.python);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw: " << e.what();
    }
  }
}

TEST(JinjaEngine, SyntaxErrorsSayLineAndColumn) {
  EXPECT_NE(error_of("a\n{% if x %}\nb").find("line 3"), std::string::npos) << error_of("a\n{% if x %}\nb");
  std::string e = error_of("ok\n  {{ 1 + }}");
  EXPECT_NE(e.find("line 2, column 10"), std::string::npos) << e;
  EXPECT_NE(error_of("{% frobnicate %}").find("line 1, column 4"), std::string::npos);
  EXPECT_NE(error_of("{{ x | nosuchfilter }}").find("no filter named 'nosuchfilter'"), std::string::npos);
  EXPECT_NE(error_of("{{ x is nosuchtest }}").find("no test named 'nosuchtest'"), std::string::npos);
  EXPECT_NE(error_of("{% break %}").find("outside of a loop"), std::string::npos);
  EXPECT_NE(error_of("{# open").find("missing end of comment tag"), std::string::npos);
  EXPECT_NE(error_of("{{ 'open }}").find("unterminated string"), std::string::npos);
}

TEST(JinjaEngine, UndefinedMisuseFailsWhereJinja2Does) {
  EXPECT_NE(error_of("{{ missing.attr }}").find("'missing' is undefined"), std::string::npos);
  EXPECT_NE(error_of("\n{{ d.a.b }}", {{"d", ordered_json::object()}}).find("'dict object' has no attribute 'a'"),
            std::string::npos);
  EXPECT_NE(error_of("{{ d.a.b }}", {{"d", ordered_json::object()}}).find("line 1"), std::string::npos);
  EXPECT_NE(error_of("{{ missing + 1 }}").find("'missing' is undefined"), std::string::npos);
  EXPECT_NE(error_of("{{ 'a' + 1 }}").find("can only concatenate str (not \"int\") to str"), std::string::npos);
  EXPECT_NE(error_of("{{ 1 < 'a' }}").find("'<' not supported"), std::string::npos);
  EXPECT_NE(error_of("{{ [1] | map('upper') }}").find("add |list"), std::string::npos);
  EXPECT_NE(error_of("{{ [1] | select | tojson }}").find("not JSON serializable"), std::string::npos);
  EXPECT_NE(error_of("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}").find("recursion"), std::string::npos);
}

TEST(JinjaEngine, ImmutableSandboxRefusesChanges) {
  ordered_json vars = {{"xs", {1, 2}}, {"d", {{"a", 1}}}};
  for (const char* source : {"{{ xs.append(3) }}", "{{ xs.pop() }}", "{{ d.update({'b': 2}) }}", "{{ d.clear() }}",
                             "{% set ns = namespace() %}{{ xs.__class__ }}{{ ns.__init__() }}"}) {
    SCOPED_TRACE(source);
    EXPECT_NE(error_of(source, vars).find("is unsafe"), std::string::npos) << error_of(source, vars);
  }
  EXPECT_NE(error_of("{% set xs.a = 1 %}", vars).find("not a namespace() object"), std::string::npos);
  EXPECT_EQ(render("{{ xs }}{{ d }}", vars), "[1, 2]{'a': 1}");
}

TEST(JinjaEngine, RaiseExceptionGivesTheMessage) {
  try {
    render("{% if true %}{{ raise_exception('Roles must alternate: ' ~ 3) }}{% endif %}");
    FAIL() << "no exception";
  } catch (const r1pi::jinja::RaisedError& e) {
    EXPECT_STREQ(e.what(), "Roles must alternate: 3");
  }
}

TEST(JinjaEngine, StrftimeNowReadsTheGivenClock) {
  r1pi::jinja::RenderOptions options;
  options.now = 86400 * 365;  // 1971-01-01 00:00 UTC: the 1st or the 31st of December, by zone
  std::string date = Template("{{ strftime_now('%Y-%m-%d') }}").render(ordered_json::object(), options);
  EXPECT_TRUE(date == "1971-01-01" || date == "1970-12-31") << date;
}

TEST(JinjaEngine, KeyOrderAndNumberKindsSurvive) {
  ordered_json vars = ordered_json::parse(R"({"d": {"z": 1, "a": 2.0, "m": [1.5, 10000000000000000.0]}})");
  EXPECT_EQ(render("{{ d }}|{{ d | tojson }}", vars),
            "{'z': 1, 'a': 2.0, 'm': [1.5, 1e+16]}|{\"z\": 1, \"a\": 2.0, \"m\": [1.5, 1e+16]}");
}

TEST(JinjaEngine, ParsesOnceRendersMany) {
  Template t("{% for m in messages %}<{{ m.role }}>{{ m.content | trim }}{% endfor %}");
  ordered_json vars = {{"messages", ordered_json::array()}};
  for (int k = 0; k < 20; ++k) vars["messages"].push_back({{"role", k % 2 ? "assistant" : "user"}, {"content", " hi "}});
  std::string first = t.render(vars);
  for (int k = 0; k < 100; ++k) ASSERT_EQ(t.render(vars), first);
  EXPECT_EQ(first.substr(0, 20), "<user>hi<assistant>h");
}

}  // namespace
