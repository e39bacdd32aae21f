// Runs a parsed template: evaluates expressions and renders statements with jinja2's scoping
// (each loop iteration and macro call gets its own scope; if does not; a top-level set is seen by
// macros), loop controls, and the globals transformers gives (raise_exception, strftime_now,
// namespace, range, dict).
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jinja/ast.h"
#include "jinja/jinja.h"

namespace r1pi::jinja {

struct Scope {
  std::shared_ptr<Scope> parent;
  Fields vars;
  const Value* find(std::string_view name) const;
  void set(std::string_view name, Value value);
};
using ScopePtr = std::shared_ptr<Scope>;

class Renderer {
 public:
  explicit Renderer(const RenderOptions& options) : options_(options) {}
  std::string render(const Node& root, const nlohmann::ordered_json& variables);

 private:
  enum class Flow { Normal, Break, Continue };

  Flow exec(const Body& body, const ScopePtr& scope, std::string& out);
  Flow exec_node(const Node& node, const ScopePtr& scope, std::string& out);
  Flow exec_for(const Node& node, const ScopePtr& scope, std::string& out);
  void assign(const Target& target, Value value, Scope& scope);
  Value define_macro(const Node& node, const ScopePtr& scope);
  std::string render_block(const Body& body, const ScopePtr& scope);

  Value eval(const Expr& e, const ScopePtr& scope);
  Value eval_call(const Expr& e, const ScopePtr& scope);
  Value eval_compare(const Expr& e, const ScopePtr& scope);
  CallArgs eval_args(const Expr& e, const ScopePtr& scope);
  Value filter(const Expr& e, Value input, const ScopePtr& scope);
  void add_globals(Scope& globals);

  const RenderOptions& options_;
  int macro_depth_ = 0;  // calls in progress: a template recursing without end fails, as Python's does
};

}  // namespace r1pi::jinja
