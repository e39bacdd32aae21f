#include "app/cli_constraint.h"

#include <nlohmann/json.hpp>

#include "chat/grammar_constraint.h"
#include "common/error.h"
#include "grammar/gbnf_parser.h"
#include "grammar/json_schema_grammar.h"

namespace r1pi {

std::function<std::shared_ptr<const TokenConstraint>(const Tokenizer&)> cli_constraint(const std::string& gbnf,
                                                                                      const std::string& schema) {
  std::shared_ptr<const Grammar> grammar;
  if (!gbnf.empty()) {
    grammar = parse_gbnf(gbnf);
  } else if (!schema.empty()) {
    const nlohmann::ordered_json parsed = nlohmann::ordered_json::parse(schema, nullptr, false);
    if (parsed.is_discarded()) throw Error("--json-schema: not valid JSON");
    grammar = json_schema_grammar(parsed);
  } else {
    return {};
  }
  // The prompt is the caller's text: the answer starts right after it, under the grammar.
  return [grammar](const Tokenizer& tokenizer) -> std::shared_ptr<const TokenConstraint> {
    return std::make_shared<GrammarConstraint>(grammar, token_trie_of(tokenizer), ReasoningStart::None);
  };
}

}  // namespace r1pi
