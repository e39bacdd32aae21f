#include "jinja/renderer.h"

#include <ctime>

#include "jinja/builtins.h"
#include "jinja/python_text.h"

namespace r1pi::jinja {

namespace {

[[noreturn]] void located(int line, int column, const std::exception& e) {
  throw Error("template error at line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + e.what());
}

Value undefined_name(std::string_view name) { return Value::undefined("'" + std::string(name) + "' is undefined"); }

// namespace(mapping?, **attributes): the one object a template may change.
Value make_namespace(CallArgs& args) {
  Value ns = Value::make_object("Namespace", true);
  for (auto& a : args.positional) {
    if (a.kind != Kind::Dict) fail("namespace() takes a mapping, not " + type_name(a));
    for (auto& [k, v] : a.dict->items) ns.object->set(to_str(k), v);
  }
  for (auto& [k, v] : args.keyword) ns.object->set(k, v);
  return ns;
}

Value make_range(CallArgs& args) {
  Bound b("range", args, {"start", "stop", "step"});
  int64_t start = 0, stop = b.integer(0, 0), step = b.integer(2, 1);
  if (b.given(1)) {
    start = stop;
    stop = b.integer(1, 0);
  }
  if (step == 0) fail("range() arg 3 must not be zero");
  List items;
  for (int64_t k = start; step > 0 ? k < stop : k > stop; k += step) {
    if (items.size() >= 100000) fail("range too big, the sandbox allows at most 100000 items");
    items.push_back(Value::integer(k));
  }
  return Value::make_list(std::move(items));
}

List unpack(const Value& v, size_t n) {
  if (v.is_undefined()) fail_undefined(v);
  List items = iterate(v);
  if (items.size() < n)
    fail("not enough values to unpack (expected " + std::to_string(n) + ", got " + std::to_string(items.size()) + ")");
  if (items.size() > n) fail("too many values to unpack (expected " + std::to_string(n) + ")");
  return items;
}

}  // namespace

const Value* Scope::find(std::string_view name) const {
  for (const Scope* s = this; s; s = s->parent.get())
    if (const Value* v = find_field(s->vars, name)) return v;
  return nullptr;
}

void Scope::set(std::string_view name, Value value) { set_field(vars, name, std::move(value)); }

void Renderer::add_globals(Scope& globals) {
  globals.set("raise_exception", Value::callable("raise_exception", [](CallArgs& args) -> Value {
                Bound b("raise_exception", args, {"message"});
                throw RaisedError(b.string(0, ""));
              }));
  globals.set("strftime_now", Value::callable("strftime_now", [this](CallArgs& args) {
                Bound b("strftime_now", args, {"format"});
                std::time_t now = options_.now.value_or(std::time(nullptr));
                std::tm local{};
                localtime_r(&now, &local);
                std::string format = b.string(0, "");
                if (format.empty()) return Value::string("");
                std::string buf(format.size() * 8 + 64, '\0');
                size_t n = std::strftime(buf.data(), buf.size(), format.c_str(), &local);
                buf.resize(n);
                return Value::string(std::move(buf));
              }));
  globals.set("namespace", Value::callable("namespace", make_namespace));
  globals.set("range", Value::callable("range", make_range));
  globals.set("dict", Value::callable("dict", [](CallArgs& args) {
                if (!args.positional.empty()) fail("dict() takes keyword arguments only");
                Value d = Value::make_dict();
                for (auto& [k, v] : args.keyword) d.dict->set(Value::string(k), v);
                return d;
              }));
}

std::string Renderer::render(const Node& root, const nlohmann::ordered_json& variables) {
  if (!variables.is_object()) throw Error("template variables must be a JSON object");
  auto globals = std::make_shared<Scope>();
  add_globals(*globals);
  auto scope = std::make_shared<Scope>();
  scope->parent = globals;
  try {
    for (auto& [k, v] : variables.items()) scope->set(k, from_json(v));
  } catch (const ValueError& e) {
    throw Error(std::string("template variables: ") + e.what());
  }
  std::string out;
  exec(root.body, scope, out);
  return out;
}

Renderer::Flow Renderer::exec(const Body& body, const ScopePtr& scope, std::string& out) {
  for (auto& node : body) {
    Flow flow = exec_node(*node, scope, out);
    if (flow != Flow::Normal) return flow;
  }
  return Flow::Normal;
}

std::string Renderer::render_block(const Body& body, const ScopePtr& scope) {
  auto inner = std::make_shared<Scope>();
  inner->parent = scope;
  std::string text;
  exec(body, inner, text);
  return text;
}

Renderer::Flow Renderer::exec_node(const Node& node, const ScopePtr& scope, std::string& out) {
  try {
    switch (node.type) {
      case Node::Type::Root:
      case Node::Type::Scope: return exec(node.body, scope, out);
      case Node::Type::Text: out += node.text; return Flow::Normal;
      case Node::Type::Output: out += to_str(eval(*node.expr, scope)); return Flow::Normal;
      case Node::Type::If:
        for (auto& [condition, body] : node.branches)
          if (truthy(eval(*condition, scope))) return exec(body, scope, out);
        return exec(node.else_body, scope, out);
      case Node::Type::For: return exec_for(node, scope, out);
      case Node::Type::Set: assign(node.target, eval(*node.expr, scope), *scope); return Flow::Normal;
      case Node::Type::SetBlock: {
        Value text = Value::string(render_block(node.body, scope));
        assign(node.target, node.filter ? filter(*node.filter, std::move(text), scope) : text, *scope);
        return Flow::Normal;
      }
      case Node::Type::FilterBlock:
        out += to_str(filter(*node.filter, Value::string(render_block(node.body, scope)), scope));
        return Flow::Normal;
      case Node::Type::Macro: scope->set(node.text, define_macro(node, scope)); return Flow::Normal;
      case Node::Type::Break: return Flow::Break;
      case Node::Type::Continue: return Flow::Continue;
    }
  } catch (const ValueError& e) {
    located(node.line, node.column, e);
  }
  return Flow::Normal;
}

Renderer::Flow Renderer::exec_for(const Node& node, const ScopePtr& scope, std::string& out) {
  List items = iterate(eval(*node.expr, scope));
  if (node.condition) {
    List kept;
    for (auto& item : items) {
      auto probe = std::make_shared<Scope>();
      probe->parent = scope;
      assign(node.target, item, *probe);
      if (truthy(eval(*node.condition, probe))) kept.push_back(item);
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    auto inner = std::make_shared<Scope>();
    inner->parent = scope;
    exec(node.else_body, inner, out);
    return Flow::Normal;
  }
  auto n = int64_t(items.size());
  for (int64_t k = 0; k < n; ++k) {
    auto inner = std::make_shared<Scope>();
    inner->parent = scope;
    Value loop = Value::make_object("LoopContext", false);
    Object& o = *loop.object;
    o.fields.reserve(12);
    o.fields.emplace_back("index", Value::integer(k + 1));
    o.fields.emplace_back("index0", Value::integer(k));
    o.fields.emplace_back("revindex", Value::integer(n - k));
    o.fields.emplace_back("revindex0", Value::integer(n - k - 1));
    o.fields.emplace_back("first", Value::boolean(k == 0));
    o.fields.emplace_back("last", Value::boolean(k == n - 1));
    o.fields.emplace_back("length", Value::integer(n));
    o.fields.emplace_back("depth", Value::integer(1));
    o.fields.emplace_back("depth0", Value::integer(0));
    o.fields.emplace_back("previtem", k > 0 ? items[size_t(k - 1)] : Value::undefined("there is no previous item"));
    o.fields.emplace_back("nextitem", k + 1 < n ? items[size_t(k + 1)] : Value::undefined("there is no next item"));
    o.fields.emplace_back("cycle", Value::callable("cycle", [k](CallArgs& args) {
                            if (args.positional.empty()) fail("no items for cycling given");
                            return args.positional[size_t(k) % args.positional.size()];
                          }));
    inner->vars.emplace_back("loop", std::move(loop));
    assign(node.target, items[size_t(k)], *inner);
    if (exec(node.body, inner, out) == Flow::Break) break;
  }
  return Flow::Normal;
}

void Renderer::assign(const Target& target, Value value, Scope& scope) {
  if (!target.attribute.empty()) {
    const Value* ns = scope.find(target.names[0]);
    if (!ns || ns->kind != Kind::Object || !ns->object->mutable_attributes)
      fail("can't set attribute '" + target.attribute + "' on '" + target.names[0] + "': not a namespace() object");
    ns->object->set(target.attribute, std::move(value));
    return;
  }
  if (target.names.size() == 1) {
    scope.set(target.names[0], std::move(value));
    return;
  }
  List items = unpack(value, target.names.size());
  for (size_t k = 0; k < items.size(); ++k) scope.set(target.names[k], std::move(items[k]));
}

Value Renderer::define_macro(const Node& node, const ScopePtr& scope) {
  // The macro sees the scope it was defined in as that scope is when it is called.
  std::weak_ptr<Scope> defining = scope;
  return Value::callable(node.text, [this, &node, defining](CallArgs& args) {
    constexpr int kMaxMacroDepth = 200;
    if (macro_depth_ >= kMaxMacroDepth) fail("maximum recursion depth exceeded in macro '" + node.text + "'");
    struct Depth {
      int& d;
      explicit Depth(int& depth) : d(++depth) {}
      ~Depth() { --d; }
    } depth(macro_depth_);
    auto inner = std::make_shared<Scope>();
    inner->parent = defining.lock();
    size_t np = node.params.size();
    List varargs;
    for (size_t k = np; k < args.positional.size(); ++k) varargs.push_back(args.positional[k]);
    Value kwargs = Value::make_dict();
    std::vector<const Value*> by_keyword(np, nullptr);
    for (auto& [name, v] : args.keyword) {
      size_t k = 0;
      while (k < np && node.params[k].first != name) ++k;
      if (k == np) {
        kwargs.dict->set(Value::string(name), v);
      } else {
        if (k < args.positional.size()) fail("macro '" + node.text + "' got multiple values for argument '" + name + "'");
        by_keyword[k] = &v;
      }
    }
    for (size_t k = 0; k < np; ++k) {
      const auto& [name, default_value] = node.params[k];
      if (k < args.positional.size()) inner->set(name, args.positional[k]);
      else if (by_keyword[k]) inner->set(name, *by_keyword[k]);
      else if (default_value) inner->set(name, eval(*default_value, inner));
      else inner->set(name, Value::undefined("parameter '" + name + "' was not provided"));
    }
    inner->set("varargs", Value::make_tuple(std::move(varargs)));
    inner->set("kwargs", std::move(kwargs));
    std::string text;
    exec(node.body, inner, text);
    return Value::string(std::move(text));
  });
}

Value Renderer::filter(const Expr& e, Value input, const ScopePtr& scope) {
  // A chain a | f | g is nested: apply the inner filters first.
  if (e.a) input = filter(*e.a, std::move(input), scope);
  CallArgs args = eval_args(e, scope);
  return apply_filter(e.name, input, args);
}

CallArgs Renderer::eval_args(const Expr& e, const ScopePtr& scope) {
  CallArgs args;
  args.positional.reserve(e.items.size());
  for (auto& a : e.items) args.positional.push_back(eval(*a, scope));
  for (auto& [name, a] : e.keywords) args.keyword.emplace_back(name, eval(*a, scope));
  return args;
}

Value Renderer::eval_call(const Expr& e, const ScopePtr& scope) {
  Value callee = eval(*e.a, scope);
  if (callee.is_undefined()) fail_undefined(callee);
  if (callee.kind != Kind::Callable) fail("'" + type_name(callee) + "' object is not callable");
  CallArgs args = eval_args(e, scope);
  return (*callee.fn)(args);
}

Value Renderer::eval_compare(const Expr& e, const ScopePtr& scope) {
  Value left = eval(*e.a, scope);
  for (auto& [op, operand] : e.comparisons) {
    Value right = eval(*operand, scope);
    bool ok = op == "==" ? equal(left, right)
              : op == "!=" ? !equal(left, right)
              : op == "<" ? less(left, right)
              : op == "<=" ? !less(right, left)
              : op == ">" ? less(right, left)
              : op == ">=" ? !less(left, right)
              : op == "in" ? contains(right, left)
                           : !contains(right, left);
    if (!ok) return Value::boolean(false);
    left = std::move(right);
  }
  return Value::boolean(true);
}

Value Renderer::eval(const Expr& e, const ScopePtr& scope) {
  try {
    switch (e.type) {
      case Expr::Type::Literal: return e.value;
      case Expr::Type::Name: {
        const Value* v = scope->find(e.name);
        return v ? *v : undefined_name(e.name);
      }
      case Expr::Type::ListLiteral:
      case Expr::Type::TupleLiteral: {
        List items;
        items.reserve(e.items.size());
        for (auto& item : e.items) items.push_back(eval(*item, scope));
        return e.type == Expr::Type::ListLiteral ? Value::make_list(std::move(items)) : Value::make_tuple(std::move(items));
      }
      case Expr::Type::DictLiteral: {
        Value d = Value::make_dict();
        for (size_t k = 0; k + 1 < e.items.size(); k += 2) d.dict->set(eval(*e.items[k], scope), eval(*e.items[k + 1], scope));
        return d;
      }
      case Expr::Type::Attribute: return get_attribute(eval(*e.a, scope), e.name);
      case Expr::Type::Subscript: return get_item(eval(*e.a, scope), eval(*e.b, scope));
      case Expr::Type::Slice: {
        Value bounds[3];
        for (size_t k = 0; k < 3; ++k)
          bounds[k] = e.items[k] ? eval(*e.items[k], scope) : Value::none();
        return slice(eval(*e.a, scope), bounds[0], bounds[1], bounds[2]);
      }
      case Expr::Type::Call: return eval_call(e, scope);
      case Expr::Type::Filter: {
        CallArgs args = eval_args(e, scope);
        return apply_filter(e.name, eval(*e.a, scope), args);
      }
      case Expr::Type::Test: {
        Value subject = eval(*e.a, scope);
        CallArgs args = eval_args(e, scope);
        return Value::boolean(apply_test(e.name, subject, args) != e.negated);
      }
      case Expr::Type::Negate: return negate(eval(*e.a, scope));
      case Expr::Type::Plus: {
        Value v = eval(*e.a, scope);
        if (!v.is_number()) fail("bad operand type for unary +: '" + type_name(v) + "'");
        return v.kind == Kind::Bool ? Value::integer(v.as_int()) : v;
      }
      case Expr::Type::Not: return Value::boolean(!truthy(eval(*e.a, scope)));
      case Expr::Type::And: {
        Value left = eval(*e.a, scope);
        return truthy(left) ? eval(*e.b, scope) : left;
      }
      case Expr::Type::Or: {
        Value left = eval(*e.a, scope);
        return truthy(left) ? left : eval(*e.b, scope);
      }
      case Expr::Type::Binary: return binary_op(e.name, eval(*e.a, scope), eval(*e.b, scope));
      case Expr::Type::Compare: return eval_compare(e, scope);
      case Expr::Type::Conditional:
        if (truthy(eval(*e.a, scope))) return eval(*e.b, scope);
        if (e.c) return eval(*e.c, scope);
        return Value::undefined("the inline if-expression on line " + std::to_string(e.line) +
                                " evaluated to false and no else section was defined.");
    }
  } catch (const ValueError& error) {
    located(e.line, e.column, error);
  }
  return Value();
}

}  // namespace r1pi::jinja
