// The rule a request's answer must follow, as the generation loop's constraint: its GBNF
// `grammar`, its JSON Schema's grammar (response_format, json_schema), or, with tool_choice
// required or a named function, the grammar of a valid call of the given tools in the model's own
// call syntax. Null when the answer is free. A bad grammar or schema is an ApiError 400 naming the
// field and what is wrong with it.
#pragma once
#include <memory>
#include <string>

#include "chat/reasoning_split.h"
#include "chat/tool_call_format.h"
#include "sampling/token_constraint.h"
#include "server/api_request.h"
#include "tokenizer/tokenizer.h"

namespace r1pi {

std::shared_ptr<const TokenConstraint> request_constraint(const ApiRequest& r, const Tokenizer& tokenizer,
                                                          ReasoningStart start, const ToolCallFormat& format);

// The GBNF of a forced call (tool_choice required or named) of the request's tools.
std::string tool_call_gbnf(const ApiRequest& r, const ToolCallFormat& format);

}  // namespace r1pi
