// JSON Schema -> grammar, for response_format json_schema / --json-schema (and json_object): the
// JSON texts the schema's grammar allows all validate against the schema (oneOf excepted, see
// below), so a model constrained by it can only write valid output.
//
// Supported (everything OpenAI structured outputs' strict mode accepts, and more):
//   type (one or a list; absent: inferred from the type keywords present, else any value),
//   object: properties (in their order; those not in required optional), required,
//     additionalProperties false / true / a schema (absent: none when properties are given, any
//     when not); array: items (a schema or false), prefixItems, minItems, maxItems;
//   string: minLength, maxLength, pattern (schema_pattern.h's subset), format date, time,
//     date-time, uuid, email; integer: minimum, maximum, exclusiveMinimum, exclusiveMaximum;
//   number, boolean, null; enum, const (beside "type" only); anyOf; oneOf (as anyOf: a value
//   may match more than one branch when the branches overlap); allOf when it is a plain merge of
//   objects' keywords (other keywords must agree); $ref to "#/..." pointers such as
//   #/$defs/name and #/definitions/name, recursion included; annotations (title, description,
//   default, examples, $schema, $id, $comment) ignored.
// Refused with r1pi::Error naming the keyword and its JSON pointer ("json_schema: unsupported
// keyword 'patternProperties' at /properties/a"): every other keyword, bounds on a number,
// pattern or format beside length bounds, unsupported pattern features and formats.
#pragma once
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "grammar/grammar.h"

namespace r1pi {

// The schema's grammar as GBNF text (root rule "root"). An ordered_json keeps the order of
// "properties" as written, which the grammar follows: parse the request with
// nlohmann::ordered_json (a nlohmann::json converts, but its objects are sorted by name).
std::string json_schema_to_gbnf(const nlohmann::ordered_json& schema);
// parse_gbnf(json_schema_to_gbnf(schema)).
std::shared_ptr<const Grammar> json_schema_grammar(const nlohmann::ordered_json& schema);
// Any JSON object (response_format json_object); built once, shared.
std::shared_ptr<const Grammar> json_object_grammar();

}  // namespace r1pi
