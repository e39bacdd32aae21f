#include "jinja/builtins.h"
#include "jinja/python_text.h"

namespace r1pi::jinja {

Bound::Bound(std::string_view function, CallArgs& args, std::initializer_list<const char*> names)
    : values_(names.size()), given_(names.size(), false), function_(function) {
  if (args.positional.size() > names.size())
    fail(function_ + "() takes at most " + std::to_string(names.size()) + " argument(s), got " +
         std::to_string(args.positional.size()));
  for (size_t k = 0; k < args.positional.size(); ++k) {
    values_[k] = std::move(args.positional[k]);
    given_[k] = true;
  }
  for (auto& [name, value] : args.keyword) {
    size_t k = 0;
    for (const char* n : names) {
      if (name == n) break;
      ++k;
    }
    if (k == names.size()) fail(function_ + "() got an unexpected keyword argument '" + name + "'");
    if (given_[k]) fail(function_ + "() got multiple values for argument '" + name + "'");
    values_[k] = std::move(value);
    given_[k] = true;
  }
}

int64_t Bound::integer(size_t k, int64_t fallback) const {
  if (!given_[k] || values_[k].is_none()) return fallback;
  if (!values_[k].is_integral()) fail(function_ + "(): expected an int, got " + type_name(values_[k]));
  return values_[k].as_int();
}

std::string Bound::string(size_t k, std::string fallback) const {
  if (!given_[k]) return fallback;
  if (values_[k].is_undefined()) fail_undefined(values_[k]);
  return to_str(values_[k]);
}

}  // namespace r1pi::jinja
