#include "jinja/python_text.h"

#include "common/json_string.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace r1pi::jinja {

namespace {

void append_hex(std::string& out, const char* prefix, uint32_t c, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%s%0*x", prefix, digits, unsigned(c));
  out += buf;
}

// str.isprintable(), closely enough for chat text: controls, the separators other than the
// space, format characters and private use are not printable.
bool printable(char32_t c) {
  if (c < 0x20 || (c >= 0x7f && c < 0xa1) || c == 0xad) return false;
  if (c == 0x1680 || (c >= 0x2000 && c <= 0x200f) || (c >= 0x2028 && c <= 0x202f) || (c >= 0x205f && c <= 0x206f))
    return false;
  if (c == 0x3000 || c == 0xfeff || (c >= 0xfff9 && c <= 0xfffb) || (c >= 0xd800 && c <= 0xf8ff)) return false;
  return true;
}

std::string repr_string(const std::string& s) {
  bool has_single = s.find('\'') != std::string::npos, has_double = s.find('"') != std::string::npos;
  char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (char32_t c : decode_utf8(s)) {
    if (c == char32_t(quote) || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (printable(c)) {
      out += encode_utf8(std::u32string(1, c));
    } else if (c < 0x100) {
      append_hex(out, "\\x", c, 2);
    } else if (c < 0x10000) {
      append_hex(out, "\\u", c, 4);
    } else {
      append_hex(out, "\\U", c, 8);
    }
  }
  return out + quote;
}

std::string json_float(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return float_repr(d);
}

// A dict key as json.dumps writes it: str as is, numbers, bools and None as their JSON text.
std::string json_key(const Value& k) {
  switch (k.kind) {
    case Kind::String: return k.s;
    case Kind::Bool: return k.b ? "true" : "false";
    case Kind::None: return "null";
    case Kind::Int: return std::to_string(k.i);
    case Kind::Float: return json_float(k.f);
    default: fail("keys must be str, int, float, bool or None, not " + type_name(k));
  }
}

void dump(std::string& out, const Value& v, const JsonStyle& style, int depth) {
  auto newline = [&](int level) {
    if (!style.indent) return;
    out += '\n';
    for (int k = 0; k < level; ++k) out += *style.indent;
  };
  switch (v.kind) {
    case Kind::None: out += "null"; return;
    case Kind::Bool: out += v.b ? "true" : "false"; return;
    case Kind::Int: out += std::to_string(v.i); return;
    case Kind::Float: out += json_float(v.f); return;
    case Kind::String: append_json_string(out, v.s); return;
    case Kind::List:
    case Kind::Tuple: {
      if (v.generator) fail("Object of type generator is not JSON serializable");
      if (v.list->empty()) {
        out += "[]";
        return;
      }
      out += '[';
      bool first = true;
      for (auto& e : *v.list) {
        if (!first) out += style.item_separator;
        first = false;
        newline(depth + 1);
        dump(out, e, style, depth + 1);
      }
      newline(depth);
      out += ']';
      return;
    }
    case Kind::Dict: {
      if (v.dict->items.empty()) {
        out += "{}";
        return;
      }
      std::vector<std::pair<std::string, const Value*>> entries;
      for (auto& [k, e] : v.dict->items) entries.emplace_back(json_key(k), &e);
      if (style.sort_keys)
        std::stable_sort(entries.begin(), entries.end(), [](auto& x, auto& y) { return x.first < y.first; });
      out += '{';
      bool first = true;
      for (auto& [k, e] : entries) {
        if (!first) out += style.item_separator;
        first = false;
        newline(depth + 1);
        append_json_string(out, k);
        out += style.key_separator;
        dump(out, *e, style, depth + 1);
      }
      newline(depth);
      out += '}';
      return;
    }
    default: fail("Object of type " + type_name(v) + " is not JSON serializable");
  }
}

bool in_set(char32_t c, const std::u32string* chars) {
  return chars ? chars->find(c) != std::u32string::npos : is_space(c);
}

// The "key: value" items of a dict or an object's fields, comma separated, each key written by
// key_repr.
template <typename Pairs, typename KeyRepr>
std::string repr_pairs(const Pairs& pairs, KeyRepr key_repr) {
  std::string out;
  for (auto& [k, e] : pairs) {
    if (!out.empty()) out += ", ";
    out += key_repr(k) + ": " + repr(e);
  }
  return out;
}

}  // namespace

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // "-d.dddde+XX", shortest round-trip digits
  bool negative = sci[0] == '-';
  if (negative) sci.erase(0, 1);
  size_t e = sci.find('e');
  int exponent = std::stoi(sci.substr(e + 1));
  std::string digits = sci.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  std::string out = negative ? "-" : "";
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out += "0." + std::string(size_t(-exponent - 1), '0') + digits;
    } else if (size_t(exponent) + 1 >= digits.size()) {
      out += digits + std::string(size_t(exponent) + 1 - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, size_t(exponent) + 1) + "." + digits.substr(size_t(exponent) + 1);
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char exp[16];
  std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  return out + exp;
}

std::string to_str(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined: return "";
    case Kind::String: return v.s;
    default: return repr(v);
  }
}

std::string repr(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined: return "";
    case Kind::None: return "None";
    case Kind::Bool: return v.b ? "True" : "False";
    case Kind::Int: return std::to_string(v.i);
    case Kind::Float: return float_repr(v.f);
    case Kind::String: return v.safe ? "Markup(" + repr_string(v.s) + ")" : repr_string(v.s);
    case Kind::List:
    case Kind::Tuple: {
      // Python prints a generator as its address: nothing a template could want.
      if (v.generator) fail("a generator (from |map, |select, ...) has no printable value; add |list");
      bool tuple = v.kind == Kind::Tuple;
      std::string out = tuple ? "(" : "[";
      for (size_t k = 0; k < v.list->size(); ++k) {
        if (k) out += ", ";
        out += repr((*v.list)[k]);
      }
      if (tuple && v.list->size() == 1) out += ",";
      return out + (tuple ? ")" : "]");
    }
    case Kind::Dict: return "{" + repr_pairs(v.dict->items, [](const Value& k) { return repr(k); }) + "}";
    case Kind::Object:
      return "<" + v.object->type_name + " {" +
             repr_pairs(v.object->fields, [](const std::string& k) { return repr_string(k); }) + "}>";
    case Kind::Callable: return "<function " + v.s + ">";
  }
  return "";
}

std::string dumps(const Value& v, const JsonStyle& style) {
  std::string out;
  dump(out, v, style, 0);
  return out;
}

std::u32string decode_utf8(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t k = 0; k < s.size();) {
    auto c = static_cast<unsigned char>(s[k]);
    int extra = c < 0x80 ? 0 : c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : -1;
    if (extra < 0 || (extra > 0 && k + size_t(extra) >= s.size())) {
      out += char32_t(0xfffd);  // not UTF-8: Python would not have had this string
      ++k;
      continue;
    }
    char32_t cp = extra == 0 ? c : c & (0x3f >> extra);
    for (int n = 1; n <= extra; ++n) cp = (cp << 6) | (static_cast<unsigned char>(s[k + size_t(n)]) & 0x3f);
    out += cp;
    k += size_t(extra) + 1;
  }
  return out;
}

std::string encode_utf8(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) {
    if (c < 0x80) {
      out += char(c);
    } else if (c < 0x800) {
      out += char(0xc0 | (c >> 6));
      out += char(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
      out += char(0xe0 | (c >> 12));
      out += char(0x80 | ((c >> 6) & 0x3f));
      out += char(0x80 | (c & 0x3f));
    } else {
      out += char(0xf0 | (c >> 18));
      out += char(0x80 | ((c >> 12) & 0x3f));
      out += char(0x80 | ((c >> 6) & 0x3f));
      out += char(0x80 | (c & 0x3f));
    }
  }
  return out;
}

bool is_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

bool is_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

std::string strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right) {
  std::u32string text = decode_utf8(s);
  std::u32string set;
  if (chars) set = decode_utf8(*chars);
  const std::u32string* which = chars ? &set : nullptr;
  size_t begin = 0, end = text.size();
  if (left)
    while (begin < end && in_set(text[begin], which)) ++begin;
  if (right)
    while (end > begin && in_set(text[end - 1], which)) --end;
  return encode_utf8(std::u32string_view(text).substr(begin, end - begin));
}

std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit,
                               bool from_right) {
  std::vector<std::string> parts;
  if (sep) {
    if (sep->empty()) fail("empty separator");
    if (!from_right) {
      size_t pos = 0;
      for (int64_t n = 0; maxsplit < 0 || n < maxsplit; ++n) {
        size_t hit = s.find(*sep, pos);
        if (hit == std::string_view::npos) break;
        parts.emplace_back(s.substr(pos, hit - pos));
        pos = hit + sep->size();
      }
      parts.emplace_back(s.substr(pos));
      return parts;
    }
    size_t end = s.size();
    for (int64_t n = 0; maxsplit < 0 || n < maxsplit; ++n) {
      if (end < sep->size()) break;
      size_t hit = s.rfind(*sep, end - sep->size());
      if (hit == std::string_view::npos) break;
      parts.emplace_back(s.substr(hit + sep->size(), end - hit - sep->size()));
      end = hit;
    }
    parts.emplace_back(s.substr(0, end));
    std::reverse(parts.begin(), parts.end());
    return parts;
  }
  std::u32string text = decode_utf8(s);
  if (from_right) std::reverse(text.begin(), text.end());
  size_t k = 0;
  int64_t n = 0;
  while (true) {
    while (k < text.size() && is_space(text[k])) ++k;
    if (k == text.size()) break;
    if (maxsplit >= 0 && n == maxsplit) {
      size_t end = text.size();
      while (end > k && is_space(text[end - 1])) --end;
      parts.push_back(encode_utf8(text.substr(k, end - k)));
      break;
    }
    size_t start = k;
    while (k < text.size() && !is_space(text[k])) ++k;
    parts.push_back(encode_utf8(text.substr(start, k - start)));
    ++n;
  }
  if (from_right) {
    for (auto& p : parts) {
      std::u32string cps = decode_utf8(p);
      std::reverse(cps.begin(), cps.end());
      p = encode_utf8(cps);
    }
    std::reverse(parts.begin(), parts.end());
  }
  return parts;
}

std::string replace(std::string_view s, std::string_view old, std::string_view with, int64_t count) {
  std::string out;
  if (old.empty()) {  // Python puts `with` between every character and at both ends
    std::u32string text = decode_utf8(s);
    int64_t n = 0;
    for (size_t k = 0; k <= text.size(); ++k) {
      if (count < 0 || n < count) {
        out += with;
        ++n;
      }
      if (k < text.size()) out += encode_utf8(text.substr(k, 1));
    }
    return out;
  }
  size_t pos = 0;
  for (int64_t n = 0; count < 0 || n < count; ++n) {
    size_t hit = s.find(old, pos);
    if (hit == std::string_view::npos) break;
    out += s.substr(pos, hit - pos);
    out += with;
    pos = hit + old.size();
  }
  out += s.substr(pos);
  return out;
}

std::string ascii_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = char(c - 'a' + 'A');
  return out;
}

std::string str_title(std::string_view s) {
  std::string out(s);
  bool previous_cased = false;
  for (char& c : out) {
    auto u = static_cast<unsigned char>(c);
    bool lower = c >= 'a' && c <= 'z', upper = c >= 'A' && c <= 'Z';
    if (lower && !previous_cased) c = char(c - 'a' + 'A');
    if (upper && previous_cased) c = char(c - 'A' + 'a');
    previous_cased = lower || upper || u >= 0x80;  // bytes of non-ASCII letters: left as they are
  }
  return out;
}

std::string capitalize(std::string_view s) {
  std::string out = ascii_lower(s);
  if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = char(out[0] - 'a' + 'A');
  return out;
}

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace r1pi::jinja
