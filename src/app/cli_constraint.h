// --grammar / --json-schema for `r1pi -p` and the chat: the text checked when the options are read
// (an error names the line and column, or the schema's keyword and path), the constraint made once
// the model's vocabulary is known.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "sampling/token_constraint.h"
#include "tokenizer/tokenizer.h"

namespace r1pi {

// Empty texts: no constraint (an empty function). Throws r1pi::Error for a grammar or schema
// that cannot be read.
std::function<std::shared_ptr<const TokenConstraint>(const Tokenizer&)> cli_constraint(const std::string& gbnf,
                                                                                      const std::string& schema);

}  // namespace r1pi
