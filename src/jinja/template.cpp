#include "jinja/jinja.h"

#include "jinja/lexer.h"
#include "jinja/parser.h"
#include "jinja/renderer.h"

namespace r1pi::jinja {

Template::Template(std::string_view source) : root_(parse(tokenize(source))) {}
Template::~Template() = default;
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;

std::string Template::render(const nlohmann::ordered_json& variables, const RenderOptions& options) const {
  return Renderer(options).render(*root_, variables);
}

}  // namespace r1pi::jinja
