#include "grammar/schema_keywords.h"

#include <array>

namespace r1pi {
namespace {

constexpr std::array kKeywords = {
    SchemaKeyword{"title", KeywordRole::Annotation, ""},
    SchemaKeyword{"description", KeywordRole::Annotation, ""},
    SchemaKeyword{"default", KeywordRole::Annotation, ""},
    SchemaKeyword{"examples", KeywordRole::Annotation, ""},
    SchemaKeyword{"$schema", KeywordRole::Annotation, ""},
    SchemaKeyword{"$id", KeywordRole::Annotation, ""},
    SchemaKeyword{"$comment", KeywordRole::Annotation, ""},
    SchemaKeyword{"type", KeywordRole::Structural, ""},
    SchemaKeyword{"enum", KeywordRole::Structural, ""},
    SchemaKeyword{"const", KeywordRole::Structural, ""},
    SchemaKeyword{"anyOf", KeywordRole::Structural, ""},
    SchemaKeyword{"oneOf", KeywordRole::Structural, ""},
    SchemaKeyword{"allOf", KeywordRole::Structural, ""},
    SchemaKeyword{"$ref", KeywordRole::Structural, ""},
    SchemaKeyword{"$defs", KeywordRole::Structural, ""},
    SchemaKeyword{"definitions", KeywordRole::Structural, ""},
    SchemaKeyword{"properties", KeywordRole::Typed, "object"},
    SchemaKeyword{"required", KeywordRole::Typed, "object"},
    SchemaKeyword{"additionalProperties", KeywordRole::Typed, "object"},
    SchemaKeyword{"items", KeywordRole::Typed, "array"},
    SchemaKeyword{"prefixItems", KeywordRole::Typed, "array"},
    SchemaKeyword{"minItems", KeywordRole::Typed, "array"},
    SchemaKeyword{"maxItems", KeywordRole::Typed, "array"},
    SchemaKeyword{"pattern", KeywordRole::Typed, "string"},
    SchemaKeyword{"minLength", KeywordRole::Typed, "string"},
    SchemaKeyword{"maxLength", KeywordRole::Typed, "string"},
    SchemaKeyword{"format", KeywordRole::Typed, "string"},
    SchemaKeyword{"minimum", KeywordRole::Typed, "integer"},
    SchemaKeyword{"maximum", KeywordRole::Typed, "integer"},
    SchemaKeyword{"exclusiveMinimum", KeywordRole::Typed, "integer"},
    SchemaKeyword{"exclusiveMaximum", KeywordRole::Typed, "integer"},
};

}  // namespace

const SchemaKeyword* find_schema_keyword(std::string_view name) {
  for (const SchemaKeyword& k : kKeywords)
    if (k.name == name) return &k;
  return nullptr;
}

}  // namespace r1pi
