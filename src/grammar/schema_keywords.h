// The JSON Schema keywords the converter (json_schema_grammar.h) knows, in one table: which are
// annotations it ignores, which shape the value whatever its type, and which belong to one type
// (ignored for the others, as JSON Schema says; they also name the type when "type" is absent).
// Every other keyword is refused.
#pragma once
#include <string_view>

namespace r1pi {

enum class KeywordRole {
  Annotation,  // title, description, default, ...: no effect on the grammar
  Structural,  // type, enum, const, anyOf, oneOf, allOf, $ref, $defs, definitions
  Typed,       // one type's keyword: properties (object), pattern (string), ...
};

struct SchemaKeyword {
  std::string_view name;
  KeywordRole role;
  std::string_view type;  // Typed: the JSON Schema type it constrains
};

// nullptr for a keyword the converter does not support.
const SchemaKeyword* find_schema_keyword(std::string_view name);

}  // namespace r1pi
