// A Jinja2 engine for chat templates: renders a GGUF's tokenizer.chat_template byte for byte as
// Python's jinja2 does in Hugging Face transformers (an ImmutableSandboxedEnvironment with
// trim_blocks, lstrip_blocks and loop controls; tojson as json.dumps with ensure_ascii=False;
// the globals raise_exception and strftime_now). docs/chat-templates.md lists what it supports.
#pragma once
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/error.h"

namespace r1pi::jinja {

// A template that does not parse ("line L, column C: ..."), or that fails while rendering: an
// undefined value misused, a type error, a sandbox refusal (say where in the template).
struct Error : r1pi::Error {
  using r1pi::Error::Error;
};

// The template called raise_exception(message): what() is the message, as the template wrote it.
struct RaisedError : Error {
  using Error::Error;
};

struct RenderOptions {
  // The clock strftime_now reads (as local time, as Python's datetime.now() does); now when unset.
  std::optional<std::time_t> now;
};

struct Node;

class Template {
 public:
  explicit Template(std::string_view source);  // parses; throws Error
  ~Template();
  Template(Template&&) noexcept;
  Template& operator=(Template&&) noexcept;

  // The variables (messages, tools, add_generation_prompt, bos_token, ...) as the template sees
  // them: objects keep their key order, ints and floats stay distinct.
  std::string render(const nlohmann::ordered_json& variables, const RenderOptions& options = {}) const;

 private:
  std::unique_ptr<Node> root_;
};

}  // namespace r1pi::jinja
