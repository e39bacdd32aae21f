// Tool calls in each family's syntax: the format each real chat template gets, the grammar's
// pieces, the generic format's system text, and the parser, whole and streamed (every cut of
// every case must add up to the whole parse).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <random>
#include <regex>

#include "chat/tool_call_format.h"
#include "chat/tool_call_parser.h"
#include "common/error.h"
#include "common/whole_file.h"
#include "test_support.h"

namespace r1pi {
namespace {

using nlohmann::ordered_json;

// ---- detection

struct Expected {
  std::string_view format;
  bool renders_tools;
};
// Every template in the shared data, and the format it must get.
const std::map<std::string, Expected> kExpectedFormats = {
    {"templates/HuggingFaceTB-SmolLM3-3B.jinja", {"generic", false}},  // Unsloth's copy has no tools
    {"templates/Mistral-Small-3.2-24B-Instruct-2506.jinja", {"mistral-small-3.2", true}},
    {"templates/NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja", {"hermes", true}},
    {"templates/Qwen-QwQ-32B.jinja", {"hermes", true}},
    {"templates/Qwen-Qwen2.5-7B-Instruct.jinja", {"hermes", true}},
    {"templates/Qwen-Qwen3-0.6B.jinja", {"hermes", true}},
    {"templates/Qwen3-Coder.jinja", {"qwen3-coder", true}},
    {"templates/deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja", {"generic", false}},
    {"templates/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", {"generic", false}},
    {"templates/deepseek-ai-DeepSeek-V3.1.jinja", {"deepseek-v3.1", false}},
    {"templates/google-gemma-2-2b-it.jinja", {"generic", false}},
    {"templates/ibm-granite-granite-3.3-2B-Instruct.jinja", {"granite", true}},
    {"templates/meta-llama-Llama-3.1-8B-Instruct.jinja", {"llama3", true}},
    {"templates/meta-llama-Llama-3.2-3B-Instruct.jinja", {"llama3", true}},
    {"templates/meta-llama-Llama-3.3-70B-Instruct.jinja", {"llama3", true}},
    {"templates/microsoft-Phi-3.5-mini-instruct.jinja", {"generic", false}},
    {"templates/mistralai-Mistral-Nemo-Instruct-2407.jinja", {"mistral-nemo", true}},
    {"templates/openai-gpt-oss-120b.jinja", {"harmony", true}},
    {"qwen/templates/Qwen-Qwen2.5-7B-Instruct.jinja", {"hermes", true}},
    {"qwen/templates/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", {"generic", false}},
    {"qwen/templates/llama-cpp-deepseek-r1.jinja", {"deepseek-r1", true}},
    {"qwen/templates/qwen3-chat_template.extracted.jinja", {"hermes", true}},
    {"deepseek-r1-distill-llama-8b.chat_template.jinja", {"generic", false}},
};

TEST(ToolCallFormat, EveryTemplateInTheSharedDataGetsItsFormat) {
  std::vector<std::string> files = {"deepseek-r1-distill-llama-8b.chat_template.jinja"};
  for (const char* folder : {"templates", "qwen/templates"})
    for (const auto& entry : std::filesystem::directory_iterator(test::shared_data(folder)))
      if (entry.path().extension() == ".jinja") files.push_back(std::string(folder) + "/" + entry.path().filename().string());
  EXPECT_EQ(files.size(), kExpectedFormats.size());
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    const auto expected = kExpectedFormats.find(file);
    ASSERT_NE(expected, kExpectedFormats.end()) << "a template the test does not list";
    const ToolCallFormat format = detect_tool_call_format(read_whole_file(test::shared_data(file), "template"));
    EXPECT_EQ(format.name, expected->second.format);
    EXPECT_EQ(format.renders_tools, expected->second.renders_tools);
  }
}

TEST(ToolCallFormat, NamesAndIds) {
  EXPECT_EQ(tool_call_format_named("hermes").syntax, ToolCallSyntax::Hermes);
  EXPECT_NE(test::error_of([] { tool_call_format_named("nope"); }).find("generic, hermes"), std::string::npos);
  EXPECT_TRUE(std::regex_match(new_tool_call_id(tool_call_format_named("hermes")), std::regex("call_[A-Za-z0-9]{24}")));
  EXPECT_TRUE(std::regex_match(new_tool_call_id(tool_call_format_named("mistral-nemo")), std::regex("[A-Za-z0-9]{9}")));
  EXPECT_NE(new_tool_call_id(tool_call_format_named("hermes")), new_tool_call_id(tool_call_format_named("hermes")));
}

// ---- the grammar's pieces and the system text

const ordered_json kWeather = ordered_json::parse(R"({"type": "function", "function": {"name": "get_weather",
  "description": "The weather in a city", "parameters": {"type": "object",
  "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}}})");
const ordered_json kParameters = kWeather["function"]["parameters"];
const ordered_json kTools = ordered_json::array({kWeather});  // not {kWeather}: that is a copy

TEST(ToolCallFormat, LayoutAndShapeForAGrammar) {
  const ToolCallShape hermes = tool_call_shape(tool_call_format_named("hermes"), kWeather);
  EXPECT_EQ(hermes.open, "<tool_call>\n");
  EXPECT_EQ(hermes.close, "\n</tool_call>");
  EXPECT_EQ(hermes.schema, (ordered_json{{"type", "object"},
                                         {"properties", {{"name", {{"const", "get_weather"}}}, {"arguments", kParameters}}},
                                         {"required", {"name", "arguments"}},
                                         {"additionalProperties", false}}));
  EXPECT_EQ(tool_call_shape(tool_call_format_named("llama3"), kWeather).schema["properties"]["parameters"], kParameters);

  const ToolCallShape deepseek = tool_call_shape(tool_call_format_named("deepseek-v3.1"), kWeather);
  EXPECT_EQ(deepseek.open, "<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>");
  EXPECT_EQ(deepseek.close, "<｜tool▁call▁end｜>");
  EXPECT_EQ(deepseek.schema, kParameters);
  const ToolCallShape r1 = tool_call_shape(tool_call_format_named("deepseek-r1"), kWeather["function"]);
  EXPECT_EQ(r1.open, "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n");
  EXPECT_EQ(r1.close, "\n```<｜tool▁call▁end｜>");
  EXPECT_EQ(tool_call_shape(tool_call_format_named("mistral-small-3.2"), kWeather).open, "[TOOL_CALLS]get_weather[ARGS]");
  const ToolCallShape harmony = tool_call_shape(tool_call_format_named("harmony"), kWeather);
  EXPECT_EQ(harmony.open + "{}" + harmony.close, "<|channel|>commentary to=functions.get_weather<|message|>{}<|call|>");
  EXPECT_EQ(harmony.schema, kParameters);
  EXPECT_FALSE(tool_call_layout(tool_call_format_named("harmony"), true).parallel);  // <|call|> ends the turn
  EXPECT_TRUE(tool_call_shape(tool_call_format_named("qwen3-coder"), kWeather).schema.is_null());
  EXPECT_NE(test::error_of([] { tool_call_shape(tool_call_format_named("hermes"), {{"type", "function"}}); })
                .find("no function name"),
            std::string::npos);

  const ToolCallLayout list = tool_call_layout(tool_call_format_named("mistral-nemo"), true);
  EXPECT_EQ(list.before + "C" + list.between + "C" + list.after, "[TOOL_CALLS][C, C]");
  const ToolCallLayout deepseek_list = tool_call_layout(tool_call_format_named("deepseek-v3.1"), true);
  EXPECT_EQ(deepseek_list.before, "<｜tool▁calls▁begin｜>");
  EXPECT_EQ(deepseek_list.after, "<｜tool▁calls▁end｜>");
  EXPECT_FALSE(tool_call_layout(tool_call_format_named("llama3"), true).parallel);
  const ToolCallLayout generic = tool_call_layout(tool_call_format_named("generic"), false);
  EXPECT_EQ(generic.before + "C" + generic.after, "{\"tool_call\": C}");
  const ToolCallLayout generic_parallel = tool_call_layout(tool_call_format_named("generic"), true);
  EXPECT_EQ(generic_parallel.before + "C" + generic_parallel.between + "C" + generic_parallel.after,
            "{\"tool_calls\": [C, C]}");
}

TEST(ToolCallFormat, GenericSystemTextListsTheToolsAndTheAnswerShapes) {
  const ToolCallFormat generic = tool_call_format_named("generic");
  const std::string single = tools_system_text(generic, kTools, false);
  EXPECT_EQ(ordered_json::parse(single.substr(single.find('['), single.find("\n]") + 2 - single.find('['))),
            ordered_json::array({kWeather["function"]}));
  EXPECT_NE(single.find(R"({"tool_call": {"name":"tool_name","arguments":{"argument":"value"}}})"), std::string::npos)
      << single;
  EXPECT_NE(single.find(R"({"response": "your answer"})"), std::string::npos);
  EXPECT_EQ(single.find("tool_calls"), std::string::npos);
  const std::string parallel = tools_system_text(generic, kTools, true);
  EXPECT_NE(parallel.find(R"({"tool_calls": [{"name":"tool_name",)"), std::string::npos) << parallel;
  // A format whose template does not list the tools shows its own syntax.
  const std::string deepseek = tools_system_text(tool_call_format_named("deepseek-v3.1"), kTools, false);
  EXPECT_NE(deepseek.find("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>tool_name<｜tool▁sep｜>{\"argument\":\"value\"}"),
            std::string::npos)
      << deepseek;
  EXPECT_NE(test::error_of([&] { tools_system_text(generic, kWeather, false); }).find("not a list"), std::string::npos);
}

// ---- parsing

std::function<std::string()> counting_ids() {
  return [n = 0]() mutable { return "id" + std::to_string(++n); };
}

struct Call {
  std::string name, arguments;
};
struct Case {
  std::string_view format;
  std::string text;
  std::string content;
  std::vector<Call> calls;
};

// Every format's single and parallel calls, calls among text, malformed and cut-off calls.
const std::vector<Case> kCases = {
    // Hermes
    {"hermes", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}\n</tool_call>",
     "", {{"get_weather", R"({"city":"Paris","days":3})"}}},
    {"hermes",
     "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"z\": 1, \"b\": [true, null]}}\n</tool_call>\n"
     "<tool_call>\n{\"name\": \"b\", \"arguments\": {}}\n</tool_call>",
     "", {{"a", R"({"z":1,"b":[true,null]})"}, {"b", "{}"}}},
    {"hermes", "Let me check.\n<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\nDone.",
     "Let me check.\n\nDone.", {{"a", "{}"}}},
    {"hermes", "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": }\n</tool_call> after",
     "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": }\n</tool_call> after", {}},
    {"hermes", "<tool_call>{\"arguments\": {}}</tool_call>", "<tool_call>{\"arguments\": {}}</tool_call>", {}},
    {"hermes", "<tool_call>\n{\"name\": \"a\", \"arguments\": \"{\\\"x\\\": 1}\"}\n</tool_call>", "", {{"a", R"({"x":1})"}}},
    {"hermes", "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}", "", {{"a", R"({"x":1})"}}},  // no closing tag
    {"hermes", "<tool_call>\n{\"name\": \"a\", \"argu", "<tool_call>\n{\"name\": \"a\", \"argu", {}},  // cut off
    {"hermes", "  \n Plain <b>answer</b> with <tool_ and < signs \n\n", "Plain <b>answer</b> with <tool_ and < signs", {}},
    {"hermes", "<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>", "",
     {{"a", R"({"x":"1"})"}}},
    // Qwen3-Coder's XML (the tools type "days" as an integer: see ParsesQwenXmlValuesByTheirDeclaredType)
    {"qwen3-coder",
     "I'll look.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nNew\nYork\n</parameter>\n"
     "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=now>\n</function>\n</tool_call>",
     "I'll look.", {{"get_weather", R"({"city":"New\nYork","days":"3"})"}, {"now", "{}"}}},
    {"qwen3-coder", "<tool_call>\n<function=a>\n<parameter=x>\n1\n</function>\n</tool_call>",
     "<tool_call>\n<function=a>\n<parameter=x>\n1\n</function>\n</tool_call>", {}},
    // Llama 3
    {"llama3", "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}", "",
     {{"get_weather", R"({"city":"Paris"})"}}},
    {"llama3", "<|python_tag|>{\"type\": \"function\", \"name\": \"a\", \"parameters\": {\"x\": 1.5}}", "",
     {{"a", R"({"x":1.5})"}}},
    {"llama3", "<|python_tag|>brave_search.call(query=\"weather, Paris\", n=2)", "",
     {{"brave_search", R"({"query":"weather, Paris","n":2})"}}},
    {"llama3", "Checking.<|python_tag|>{\"name\": \"a\", \"parameters\": {}}", "Checking.", {{"a", "{}"}}},
    {"llama3", "{Note} braces {\"name\": \"a\", \"parameters\": {}}", "{Note} braces {\"name\": \"a\", \"parameters\": {}}", {}},
    {"llama3", "{\"answer\": 42}", "{\"answer\": 42}", {}},
    {"llama3", "{\"name\": \"a\", \"parameters\": [1]}", "{\"name\": \"a\", \"parameters\": [1]}", {}},
    {"llama3", "<|python_tag|>print(\"hi\")", "<|python_tag|>print(\"hi\")", {}},
    // DeepSeek V3.1 and R1
    {"deepseek-v3.1",
     "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Paris\"}<｜tool▁call▁end｜>"
     "<｜tool▁call▁begin｜>now<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
     "", {{"get_weather", R"({"city":"Paris"})"}, {"now", "{}"}}},
    {"deepseek-v3.1",
     "Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>a<｜tool▁sep｜>{\"x\": }<｜tool▁call▁end｜>"
     "<｜tool▁call▁begin｜>b<｜tool▁sep｜>{\"y\": 2}<｜tool▁calls▁end｜>",
     "Sure.<｜tool▁call▁begin｜>a<｜tool▁sep｜>{\"x\": }<｜tool▁call▁end｜>", {{"b", R"({"y":2})"}}},
    {"deepseek-r1",
     "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\"}\n```"
     "<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>now\n```json\n{}\n```<｜tool▁call▁end｜>"
     "<｜tool▁calls▁end｜>",
     "", {{"get_weather", R"({"city":"Paris"})"}, {"now", "{}"}}},
    {"deepseek-r1", "<｜tool▁call▁begin｜>function<｜tool▁sep｜>a\n```<｜tool▁call▁end｜>",
     "<｜tool▁call▁begin｜>function<｜tool▁sep｜>a\n```<｜tool▁call▁end｜>", {}},
    {"deepseek-v3.1",  // either family's form reads in either format
     "<｜tool▁call▁begin｜>function<｜tool▁sep｜>a\n```json\n{\"x\": 1}\n```<｜tool▁call▁end｜>", "", {{"a", R"({"x":1})"}}},
    // Mistral, Granite
    {"mistral-nemo",
     "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}, "
     "{\"name\": \"now\", \"arguments\": {}, \"id\": \"abc123def\"}]",
     "", {{"get_weather", R"({"city":"Paris"})"}, {"now", "{}"}}},
    {"mistral-nemo", "Hm. [TOOL_CALLS] no list", "Hm. [TOOL_CALLS] no list", {}},
    {"mistral-nemo", "[TOOL_CALLS][]", "[TOOL_CALLS][]", {}},
    {"granite", "<|tool_call|>[{\"name\": \"a\", \"arguments\": {\"x\": \"y\"}}]", "", {{"a", R"({"x":"y"})"}}},
    {"mistral-small-3.2", "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}[TOOL_CALLS]now[CALL_ID]abc123def[ARGS]{}",
     "", {{"get_weather", R"({"city":"Paris"})"}, {"now", "{}"}}},
    {"mistral-small-3.2", "[TOOL_CALLS]get weather[ARGS]{}", "[TOOL_CALLS]get weather[ARGS]{}", {}},
    {"mistral-small-3.2", "[TOOL_CALLS]a[ARGS] oops [TOOL_CALLS]b[ARGS]{\"x\": 1} tail", "[TOOL_CALLS]a[ARGS] oops  tail",
     {{"b", R"({"x":1})"}}},
    // Harmony, as HarmonySplit passes a message to a function on
    {"harmony", "Checking.<|channel|>commentary to=functions.get_weather<|message|>{\"city\": \"Paris\"}<|call|>",
     "Checking.", {{"get_weather", R"({"city":"Paris"})"}}},
    {"harmony", "<|channel|>commentary to=functions.f<|message|>{\"a\": <|call|>",
     "<|channel|>commentary to=functions.f<|message|>{\"a\": <|call|>", {}},
    {"harmony", "<|channel|>commentary to=functions.f<|message|>[1]<|call|>",
     "<|channel|>commentary to=functions.f<|message|>[1]<|call|>", {}},
    // Generic
    {"generic", "{\"tool_call\": {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}}", "",
     {{"get_weather", R"({"city":"Paris"})"}}},
    {"generic", "\n{\"tool_calls\": [{\"name\": \"a\", \"arguments\": {}}, {\"name\": \"b\", \"arguments\": {\"x\": [1, 2]}}]}\n",
     "", {{"a", "{}"}, {"b", R"({"x":[1,2]})"}}},
    {"generic", R"({"response": "Hello, \"world\"\n\u00e9\ud83d\ude00 \q"})", "Hello, \"world\"\né\xF0\x9F\x98\x80 \\q", {}},
    {"generic", "{\"response\": \"Hi\"} and more", "Hi and more", {}},
    {"generic", "{\"response\": \"Cut \\u00", "Cut \\u00", {}},
    {"generic", "Just text {\"tool_call\": {}}", "Just text {\"tool_call\": {}}", {}},
    {"generic", "{\"tool_call\": {\"name\": \"a\", \"arguments\": 5}}", "{\"tool_call\": {\"name\": \"a\", \"arguments\": 5}}",
     {}},
    {"generic", "{\"answer\": 1}", "{\"answer\": 1}", {}},
};

ParsedOutput expected_output(const Case& c) {
  ParsedOutput out{c.content, {}};
  for (size_t i = 0; i < c.calls.size(); ++i)
    out.tool_calls.push_back({"id" + std::to_string(i + 1), c.calls[i].name, c.calls[i].arguments});
  return out;
}

void expect_same(const ParsedOutput& got, const ParsedOutput& want) {
  EXPECT_EQ(got.content, want.content);
  ASSERT_EQ(got.tool_calls.size(), want.tool_calls.size());
  for (size_t i = 0; i < got.tool_calls.size(); ++i) {
    EXPECT_EQ(got.tool_calls[i].id, want.tool_calls[i].id);
    EXPECT_EQ(got.tool_calls[i].name, want.tool_calls[i].name);
    EXPECT_EQ(got.tool_calls[i].arguments, want.tool_calls[i].arguments);
  }
}

TEST(ToolCallParser, EveryFormatsCallsWhole) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(std::string(c.format) + ": " + c.text);
    expect_same(parse_tool_calls(tool_call_format_named(c.format), c.text, counting_ids()), expected_output(c));
  }
}

// Feeds the pieces and checks the deltas' shape: a call's start, then its arguments.
ParsedOutput streamed(const ToolCallFormat& format, const std::vector<std::string_view>& pieces) {
  ToolCallStream stream(format, counting_ids());
  ParsedOutput out;
  auto take = [&](const std::vector<ToolCallDelta>& deltas) {
    for (const ToolCallDelta& delta : deltas) {
      if (delta.kind == ToolCallDelta::Kind::Arguments) {
        EXPECT_EQ(delta.index + 1, out.tool_calls.size());
      }
      if (delta.kind == ToolCallDelta::Kind::Content) {
        EXPECT_FALSE(delta.text.empty());
      }
      apply_delta(out, delta);
    }
  };
  for (std::string_view piece : pieces) take(stream.push(piece));
  take(stream.finish());
  return out;
}

TEST(ToolCallParser, StreamedCutAtEveryByteAddsUpToTheWholeParse) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(std::string(c.format) + ": " + c.text);
    const ToolCallFormat format = tool_call_format_named(c.format);
    const ParsedOutput whole = expected_output(c);
    const std::string_view text = c.text;
    for (size_t cut = 0; cut <= text.size(); ++cut) {
      SCOPED_TRACE(cut);
      expect_same(streamed(format, {text.substr(0, cut), text.substr(cut)}), whole);
      if (HasFailure()) return;
    }
    std::vector<std::string_view> bytes;
    for (size_t i = 0; i < text.size(); ++i) bytes.push_back(text.substr(i, 1));
    expect_same(streamed(format, bytes), whole);
  }
}

// Random texts made of the formats' markers and JSON's pieces: whatever the mix, no crash, and
// every cut of the stream adds up to the whole parse.
TEST(ToolCallParser, RandomMixesOfMarkersStreamAsTheyParseWhole) {
  const std::vector<std::string> pieces = {
      "<tool_call>", "</tool_call>", "<function=", "<parameter=", "</parameter>", "</function>", ">", "\n",
      "<|python_tag|>", "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>",
      "<｜tool▁calls▁end｜>", "```json", "```", "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", "<|tool_call|>", "{", "}", "[",
      "]", "\"", "\\", "\\u00e9", "\\ud83d", ":", ",", " ", "f", "function", "\"name\"", "\"arguments\"",
      "\"parameters\"", "\"tool_call\"", "\"tool_calls\"", "\"response\"", "1", "x.call(", ")", "é"};
  std::mt19937 random(1);
  for (std::string_view name : {"generic", "hermes", "qwen3-coder", "llama3", "deepseek-v3.1", "deepseek-r1",
                                "mistral-nemo", "granite", "mistral-small-3.2", "harmony"}) {
    SCOPED_TRACE(name);
    const ToolCallFormat format = tool_call_format_named(name);
    for (int n = 0; n < 300; ++n) {
      std::string text;
      for (size_t k = random() % 24; k > 0; --k) text += pieces[random() % pieces.size()];
      SCOPED_TRACE(text);
      const ParsedOutput whole = parse_tool_calls(format, text, counting_ids());
      const size_t a = random() % (text.size() + 1), b = a + random() % (text.size() - a + 1);
      const std::string_view view = text;
      expect_same(streamed(format, {view.substr(0, a), view.substr(a, b - a), view.substr(b)}), whole);
      std::vector<std::string_view> bytes;
      for (size_t i = 0; i < text.size(); ++i) bytes.push_back(view.substr(i, 1));
      expect_same(streamed(format, bytes), whole);
      if (HasFailure()) return;
    }
  }
}

TEST(ToolCallParser, ContentStreamsAtOnceAndOnlyAPossibleMarkerWaits) {
  ToolCallStream hermes(tool_call_format_named("hermes"), counting_ids());
  std::vector<ToolCallDelta> deltas = hermes.push("Hello wor");
  ASSERT_EQ(deltas.size(), 1u);
  EXPECT_EQ(deltas[0].text, "Hello wor");
  deltas = hermes.push("ld <tool_");  // "ld" goes; the space waits for text, "<tool_" for its end
  ASSERT_EQ(deltas.size(), 1u);
  EXPECT_EQ(deltas[0].text, "ld");
  deltas = hermes.push("call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>");
  ASSERT_EQ(deltas.size(), 2u);
  EXPECT_EQ(openai_delta(deltas[0]).dump(),
            R"({"tool_calls":[{"index":0,"id":"id1","type":"function","function":{"name":"a","arguments":""}}]})");
  EXPECT_EQ(openai_delta(deltas[1]).dump(), R"({"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]})");
  EXPECT_TRUE(hermes.finish().empty());

  ToolCallStream generic(tool_call_format_named("generic"), counting_ids());
  EXPECT_TRUE(generic.push("{\"respon").empty());
  deltas = generic.push("se\": \"Hel");
  ASSERT_EQ(deltas.size(), 1u);
  EXPECT_EQ(openai_delta(deltas[0]).dump(), R"({"content":"Hel"})");
}

TEST(ToolCallParser, ParsesQwenXmlValuesByTheirDeclaredType) {
  const std::string text =
      "<tool_call>\n<function=get_weather>\n<parameter=city>\n42\n</parameter>\n<parameter=days>\n3\n</parameter>\n"
      "</function>\n</tool_call>";
  const ParsedOutput typed = parse_tool_calls(tool_call_format_named("qwen3-coder"), text, counting_ids(), kTools);
  ASSERT_EQ(typed.tool_calls.size(), 1u);
  EXPECT_EQ(typed.tool_calls[0].arguments, R"({"city":"42","days":3})");
}

TEST(ToolCallParser, ReadsBackWhatEachFormatWrites) {
  const std::vector<ToolCall> calls = {{"", "get_weather", R"({"city":"Paris","days":3})"}, {"", "now", "{}"}};
  for (std::string_view name : {"generic", "hermes", "qwen3-coder", "llama3", "deepseek-v3.1", "deepseek-r1",
                                "mistral-nemo", "granite", "mistral-small-3.2", "harmony"}) {
    SCOPED_TRACE(name);
    const ToolCallFormat format = tool_call_format_named(name);
    const bool parallel = tool_call_layout(format, true).parallel;
    const std::vector<ToolCall> written = parallel ? calls : std::vector<ToolCall>{calls[0]};
    const ParsedOutput read =
        parse_tool_calls(format, render_tool_calls(format, written, parallel), counting_ids(), kTools);
    EXPECT_EQ(read.content, "");
    ASSERT_EQ(read.tool_calls.size(), written.size());
    for (size_t i = 0; i < written.size(); ++i) {
      EXPECT_EQ(read.tool_calls[i].name, written[i].name);
      EXPECT_EQ(read.tool_calls[i].arguments, written[i].arguments);
    }
  }
  EXPECT_NE(test::error_of([&] { render_tool_calls(tool_call_format_named("llama3"), calls, true); })
                .find("one call at a time"),
            std::string::npos);
}

}  // namespace
}  // namespace r1pi
