#include "server/request_constraint.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "chat/grammar_constraint.h"
#include "chat/harmony_constraint.h"
#include "chat/tool_call_bodies.h"
#include "chat/tool_call_markers.h"
#include "common/error.h"
#include "grammar/gbnf_parser.h"
#include "grammar/gbnf_text.h"
#include "grammar/json_schema_grammar.h"
#include "server/api_error.h"

namespace r1pi {

namespace {

bool name_char(char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_'; }

// GBNF text whose rules are renamed prefix + name (references too), so that several grammars can
// live in one: the JSON Schema converter writes one rule per line, "name ::= body".
std::string prefixed(const std::string& gbnf, const std::string& prefix) {
  std::set<std::string> names;
  for (size_t line = 0; line < gbnf.size();) {
    const size_t end = gbnf.find(" ::= ", line);
    const size_t eol = gbnf.find('\n', line);
    if (end != std::string::npos && end < eol) names.insert(gbnf.substr(line, end - line));
    line = eol == std::string::npos ? gbnf.size() : eol + 1;
  }
  std::string out;
  for (size_t i = 0; i < gbnf.size();) {
    const char ch = gbnf[i];
    if (ch == '"' || ch == '[') {  // a literal or a class: copied as it is, escapes included
      const char close = ch == '"' ? '"' : ']';
      size_t j = i + 1;
      while (j < gbnf.size() && gbnf[j] != close) j += gbnf[j] == '\\' ? 2 : 1;
      out.append(gbnf, i, j + 1 - i);
      i = j + 1;
    } else if (name_char(ch)) {
      size_t j = i;
      while (j < gbnf.size() && name_char(gbnf[j])) ++j;
      const std::string word = gbnf.substr(i, j - i);
      out += names.count(word) ? prefix + word : word;
      i = j;
    } else {
      out += ch;
      ++i;
    }
  }
  return out;
}

std::string tool_name(const nlohmann::ordered_json& tool) {
  const nlohmann::ordered_json& f = tool.contains("function") ? tool["function"] : tool;
  return f.value("name", "");
}

using tool_markers::kParameterClose;
using tool_markers::kParameterOpen;

// Text without "</parameter>", where the parser ends a value: a '<' may start anything but that
// (a value cannot end in '<' or a longer start of it, which the next "\n</parameter>" would extend).
std::string xml_text_rule(const std::string& name) {
  std::string rule = name + " ::= ([^<]";
  for (size_t n = 1; n < kParameterClose.size(); ++n)
    rule += " | " + gbnf_literal(std::string(kParameterClose.substr(0, n))) + " [^" + kParameterClose[n] + "]";
  return rule + ")*\n";
}

// Qwen3-Coder's call body after "<function=f>\n": a "<parameter=KEY>\nVALUE\n</parameter>\n" per
// declared parameter, in the schema's order, the required ones always. A value the parser reads as
// text (xml_value_is_text) is text (or one of an enum's strings), any other JSON of its schema
// (with the parameters' $defs, for its references). Rules are named prefix + ...; the body is
// prefix + "root".
std::string xml_parameters_gbnf(const nlohmann::ordered_json& parameters, const std::string& prefix) {
  const nlohmann::ordered_json properties = parameters.value("properties", nlohmann::ordered_json::object());
  const nlohmann::ordered_json required = parameters.value("required", nlohmann::ordered_json::array());
  std::string root = prefix + "root ::=", rules;
  int i = 0;
  for (const auto& [key, schema] : properties.items()) {
    const std::string value = prefix + "v" + std::to_string(i++) + "-";
    const bool text = xml_value_is_text(schema);
    if (text && schema.is_object() && schema.contains("enum") && schema["enum"].is_array()) {
      std::string choices;  // the enum's values as the parser reads text back: strings bare
      for (const nlohmann::ordered_json& v : schema["enum"])
        choices += (choices.empty() ? "" : " | ") + gbnf_literal(v.is_string() ? v.get<std::string>() : v.dump());
      if (choices.empty()) throw Error("'" + key + "': an empty 'enum' allows no value");
      rules += value + "root ::= " + choices + "\n";
    } else if (text) {
      rules += xml_text_rule(value + "root");
    } else {
      nlohmann::ordered_json own = schema.is_object() ? schema : nlohmann::ordered_json::object();
      for (const char* defs : {"$defs", "definitions"})
        if (parameters.contains(defs) && !own.contains(defs)) own[defs] = parameters[defs];
      rules += prefixed(json_schema_to_gbnf(own), value);
    }
    const bool needed = std::find(required.begin(), required.end(), key) != required.end();
    root += " (" + gbnf_literal(std::string(kParameterOpen) + key + ">\n") + " " + value + "root " +
            gbnf_literal("\n" + std::string(kParameterClose) + "\n") + ")" + (needed ? "" : "?");
  }
  if (properties.empty()) root += " \"\"";
  return root + "\n" + rules;
}

}  // namespace

std::string tool_call_gbnf(const ApiRequest& r, const ToolCallFormat& format) {
  const ToolCallLayout layout = tool_call_layout(format, r.parallel_tool_calls);
  std::string calls, rules;
  int k = 0;
  for (const nlohmann::ordered_json& tool : r.tools) {
    if (r.tool_choice == ToolChoice::Function && tool_name(tool) != r.tool_choice_name) continue;
    const ToolCallShape shape = tool_call_shape(format, tool);
    const std::string prefix = "t" + std::to_string(k++) + "-";
    try {
      rules += format.syntax == ToolCallSyntax::QwenXml ? xml_parameters_gbnf(tool_parameters(tool), prefix)
                                                        : prefixed(json_schema_to_gbnf(shape.schema), prefix);
    } catch (const Error& e) {
      throw ApiError(400, "'tools' (" + tool_name(tool) + ".parameters): " + e.what());
    }
    calls += std::string(calls.empty() ? "" : " | ") + "(" + (shape.open.empty() ? "" : gbnf_literal(shape.open) + " ") +
             prefix + "root" + (shape.close.empty() ? "" : " " + gbnf_literal(shape.close)) + ")";
  }
  auto literal = [](const std::string& text) { return text.empty() ? std::string() : gbnf_literal(text) + " "; };
  std::string root = "root ::= " + literal(layout.before) + "call ";
  if (layout.parallel) root += "(" + (layout.between.empty() ? std::string() : literal(layout.between)) + "call)* ";
  root += literal(layout.after) + "\n";
  return root + "call ::= " + calls + "\n" + rules;
}

namespace {

// Harmony's constraint: the final channel's message under the grammar or schema, or a message to
// one of the tools (the named one) whose arguments follow its parameters' schema.
std::shared_ptr<const TokenConstraint> harmony_constraint(const ApiRequest& r, const Tokenizer& tokenizer,
                                                          std::shared_ptr<const Grammar> grammar) {
  std::vector<HarmonyAnswer> answers;
  if (grammar) answers.push_back({harmony_final_header(), std::move(grammar)});
  else
    for (const nlohmann::ordered_json& tool : r.tools) {
      if (r.tool_choice == ToolChoice::Function && tool_name(tool) != r.tool_choice_name) continue;
      try {
        const std::shared_ptr<const Grammar> arguments = json_schema_grammar(tool_parameters(tool));
        for (const std::string& header : harmony_call_headers(tool_name(tool))) answers.push_back({header, arguments});
      } catch (const Error& e) {
        throw ApiError(400, "'tools' (" + tool_name(tool) + ".parameters): " + e.what());
      }
    }
  return std::make_shared<HarmonyConstraint>(std::move(answers), token_trie_of(tokenizer), harmony_markers(tokenizer));
}

}  // namespace

std::shared_ptr<const TokenConstraint> request_constraint(const ApiRequest& r, const Tokenizer& tokenizer,
                                                          ReasoningStart start, const ToolCallFormat& format) {
  std::shared_ptr<const Grammar> grammar;
  if (!r.grammar.empty()) {
    try {
      grammar = parse_gbnf(r.grammar);
    } catch (const Error& e) {
      throw ApiError(400, std::string("'grammar': ") + e.what());
    }
  } else if (!r.json_schema.is_null()) {
    try {
      grammar = json_schema_grammar(r.json_schema);
    } catch (const Error& e) {
      throw ApiError(400, std::string("'response_format' (json_schema): ") + e.what());
    }
  } else if ((r.tool_choice == ToolChoice::Required || r.tool_choice == ToolChoice::Function) &&
             start == ReasoningStart::Harmony) {
    return harmony_constraint(r, tokenizer, nullptr);
  } else if (r.tool_choice == ToolChoice::Required || r.tool_choice == ToolChoice::Function) {
    const std::string gbnf = tool_call_gbnf(r, format);
    try {
      grammar = parse_gbnf(gbnf);
    } catch (const Error& e) {
      throw ApiError(400, std::string("'tools': their call grammar: ") + e.what());
    }
  } else {
    return nullptr;
  }
  if (start == ReasoningStart::Harmony) return harmony_constraint(r, tokenizer, grammar);
  return std::make_shared<GrammarConstraint>(grammar, token_trie_of(tokenizer), start);
}

}  // namespace r1pi
