#include "torchx/specs/runopts.h"

#include "torchx/specs/option_value.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/pystr.h"
#include "core/spelling.h"
#include "core/strings.h"

namespace torchx::specs {
namespace {

std::string_view PyTypeName(const CfgVal& v) {
  static constexpr std::string_view kNames[] = {"NoneType", "str", "int", "float", "bool", "list", "dict"};
  return kNames[v.index()];
}

// Replaces every quoted run ('...' or "...", backslash escapes allowed, no newline) with a
// placeholder, exactly where TorchX's regex `(['"])((?:\\.|(?!\1).)*?)\1` matches. The regex's
// lazy loop backtracks over escapes, so the end of a quote starting at i is computed right to
// left: end[j] = the first way to close from j trying "close", then "escape pair", then "char".
std::string MaskQuoted(std::string_view s, std::vector<std::string>& quoted) {
  std::string out;
  constexpr size_t kNone = std::string_view::npos;
  std::vector<size_t> end(s.size() + 2, kNone);
  size_t i = 0;
  while (i < s.size()) {
    char q = s[i];
    if (q != '\'' && q != '"') {
      out += q;
      ++i;
      continue;
    }
    for (size_t j = s.size(); j-- > i + 1;) {
      size_t r = kNone;
      if (s[j] == q) {
        r = j;
      } else if (s[j] != '\n') {
        if (s[j] == '\\' && j + 1 < s.size() && s[j + 1] != '\n') r = end[j + 2];
        if (r == kNone) r = end[j + 1];
      }
      end[j] = r;
    }
    end[s.size()] = kNone;
    size_t close = i + 1 < s.size() ? end[i + 1] : kNone;
    if (close == kNone) {
      out += q;
      ++i;
      continue;
    }
    quoted.emplace_back(s.substr(i, close - i + 1));
    out += fmt::format("__QUOTED_{}__", quoted.size() - 1);
    i = close + 1;
  }
  return out;
}

std::string Unmask(std::string s, const std::vector<std::string>& quoted) {
  for (size_t i = 0; i < quoted.size(); ++i) {
    std::string token = fmt::format("__QUOTED_{}__", i);
    size_t pos = 0;
    while ((pos = s.find(token, pos)) != std::string::npos) {
      s.replace(pos, token.size(), quoted[i]);
      pos += quoted[i].size();
    }
  }
  return s;
}

std::string Unquote(const std::string& v) {
  if (v.size() >= 2 && ((v.front() == '\'' && v.back() == '\'') || (v.front() == '"' && v.back() == '"'))) {
    return v.substr(1, v.size() - 2);
  }
  if (v == "'" || v == "\"") return "";
  return v;
}

}  // namespace

std::string_view CfgTypeName(CfgType t) {
  switch (t) {
    case CfgType::kStr:
      return "str";
    case CfgType::kInt:
      return "int";
    case CfgType::kFloat:
      return "float";
    case CfgType::kBool:
      return "bool";
    case CfgType::kListStr:
      return "typing.List[str]";
    case CfgType::kDictStr:
      return "typing.Dict[str, str]";
  }
  return "str";
}

bool CfgValIsNone(const CfgVal& v) { return std::holds_alternative<std::monostate>(v); }

bool CfgValIs(const CfgVal& v, CfgType t) {
  if (CfgValIsNone(v)) return true;
  switch (t) {
    case CfgType::kStr:
      return std::holds_alternative<std::string>(v);
    // Python's bool is an int subclass: isinstance(True, int) holds, and TorchX inherits that.
    case CfgType::kInt:
      return std::holds_alternative<std::int64_t>(v) || std::holds_alternative<bool>(v);
    case CfgType::kFloat:
      return std::holds_alternative<double>(v);
    case CfgType::kBool:
      return std::holds_alternative<bool>(v);
    case CfgType::kListStr:
      return std::holds_alternative<CfgList>(v);
    case CfgType::kDictStr:
      return std::holds_alternative<CfgDict>(v);
  }
  return false;
}

std::string CfgValToString(const CfgVal& v) {
  struct Visitor {
    std::string operator()(std::monostate) const { return "None"; }
    std::string operator()(const std::string& s) const { return s; }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return torchx::internal::PyFloatStr(d); }
    std::string operator()(bool b) const { return b ? "True" : "False"; }
    std::string operator()(const CfgList& l) const {
      std::string out = "[";
      for (size_t i = 0; i < l.size(); ++i) out += (i ? ", " : "") + torchx::internal::PyRepr(l[i]);
      return out + "]";
    }
    std::string operator()(const CfgDict& d) const {
      std::string out = "{";
      bool first = true;
      for (const auto& [k, val] : d) {
        out += (first ? "" : ", ") + torchx::internal::PyRepr(k) + ": " + torchx::internal::PyRepr(val);
        first = false;
      }
      return out + "}";
    }
  };
  return std::visit(Visitor{}, v);
}

std::string CfgValRepr(const CfgVal& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return torchx::internal::PyRepr(*s);
  return CfgValToString(v);
}

std::string CfgRepr(const Cfg& cfg) {
  if (cfg.empty()) return "<EMPTY>";
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : cfg) {
    out += (first ? "" : ", ") + torchx::internal::PyRepr(k) + ": " + CfgValRepr(v);
    first = false;
  }
  return out + "}";
}

std::string SnakeToCamel(std::string_view name) {
  // TorchX: the first piece as is, each later piece str.title()d ("hpc_cluster_uuid" -> "hpcClusterUuid").
  std::string out;
  bool first_piece = true;
  bool word_start = false;
  for (char c : name) {
    if (c == '_') {
      first_piece = false;
      word_start = true;
      continue;
    }
    bool alpha = std::isalpha(static_cast<unsigned char>(c)) != 0;
    if (first_piece) {
      out += c;
    } else {
      out += static_cast<char>(word_start ? std::toupper(static_cast<unsigned char>(c))
                                          : std::tolower(static_cast<unsigned char>(c)));
    }
    word_start = !alpha;
  }
  return out;
}

std::string CamelToSnake(std::string_view name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    if (i > 0 && std::isupper(c)) {
      unsigned char prev = static_cast<unsigned char>(name[i - 1]);
      if (std::islower(prev) || std::isdigit(prev)) out += '_';
    }
    out += static_cast<char>(std::tolower(c));
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> CfgStringToPairs(std::string_view arg) {
  std::vector<std::pair<std::string, std::string>> out;
  if (arg.empty()) return out;
  auto put = [&out](std::string key, std::string val) {
    for (auto& [k, v] : out) {
      if (k == key) {
        v = std::move(val);
        return;
      }
    }
    out.emplace_back(std::move(key), std::move(val));
  };

  std::vector<std::string> quoted;
  std::string masked = MaskQuoted(arg, quoted);
  std::vector<std::string> parts;
  for (const std::string& p : torchx::internal::SplitAny(masked, "=")) {
    std::string_view stripped = torchx::internal::Strip(p);
    if (!stripped.empty()) parts.emplace_back(stripped);
  }
  if (parts.size() < 2) {
    return InvalidArgumentError(fmt::format("cfg: `{}` does not have at least one `key=value` pair", arg));
  }
  std::string key = Unmask(parts[0], quoted);
  for (size_t i = 1; i + 1 < parts.size(); ++i) {
    const std::string& vk = parts[i];  // "<value><delim><next key>"
    size_t comma = vk.rfind(',');
    size_t semi = vk.rfind(';');
    size_t idx = comma == std::string::npos ? semi : semi == std::string::npos ? comma : std::max(comma, semi);
    if (idx == std::string::npos || idx == 0 || idx + 1 == vk.size()) {
      return InvalidArgumentError(fmt::format(
          "cfg: `{}` cannot be split into `val<delim>key` with delims [',', ';'] (in `{}`)", Unmask(vk, quoted), arg));
    }
    std::string val(torchx::internal::Strip(std::string_view(vk).substr(0, idx)));
    put(key, Unquote(Unmask(val, quoted)));
    key = Unmask(std::string(torchx::internal::Strip(std::string_view(vk).substr(idx + 1))), quoted);
  }
  put(key, Unquote(Unmask(parts.back(), quoted)));
  return out;
}

Status RunOpts::Add(std::string key, CfgType type, std::string help, CfgVal default_value, bool required) {
  if (required && !CfgValIsNone(default_value)) {
    return InvalidArgumentError(fmt::format("runopts: required option: {} must not specify default value. Given: {}",
                                            key, CfgValToString(default_value)));
  }
  if (!CfgValIs(default_value, type)) {
    return InvalidArgumentError(fmt::format("runopts: option: {}, must be of type: {}. Given: {} ({})", key,
                                            CfgTypeName(type), CfgValToString(default_value),
                                            PyTypeName(default_value)));
  }
  RunOpt opt{type, std::move(default_value), required, std::move(help)};
  for (auto& [k, existing] : opts_) {
    if (k == key) {
      existing = std::move(opt);
      return OkStatus();
    }
  }
  opts_.emplace_back(std::move(key), std::move(opt));
  return OkStatus();
}

const RunOpt* RunOpts::Find(std::string_view key) const {
  for (const auto& [k, opt] : opts_) {
    if (k == key) return &opt;
  }
  return nullptr;
}

const RunOpt* RunOpts::Get(std::string_view key) const {
  if (const RunOpt* opt = Find(key)) return opt;
  std::string snake = CamelToSnake(key);  // TorchX HEAD: `clusterName` finds `cluster_name`
  return snake == key ? nullptr : Find(snake);
}

void RunOpts::Update(const RunOpts& other) {
  for (const auto& [k, opt] : other.opts_) {
    (void)Add(k, opt.type, opt.help, opt.default_value, opt.is_required);
  }
}

Status RunOpts::UnknownOptionError(std::string_view key, const Cfg& given) const {
  std::vector<std::string> names;
  for (const auto& [name, opt] : opts_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return InvalidArgumentError(
      fmt::format("Unknown run option `{}`. Valid options are: {}. Given: {}.{}", key,
                  names.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(names, ", ")), CfgRepr(given),
                  ::torchx::internal::DidYouMeanSuffix(key, names)));
}

const std::string* RunOpts::CanonicalKey(std::string_view given) const {
  for (const auto& [name, opt] : opts_) {
    if (name == given || SnakeToCamel(name) == given) return &name;
  }
  return nullptr;
}

Result<ResolvedCfg> RunOpts::Resolve(const Cfg& cfg, UnknownKeys unknown) const {
  Cfg resolved = cfg;
  std::map<std::string, CfgType, std::less<>> types;
  for (const auto& [given, value] : cfg) {
    const std::string* canonical = CanonicalKey(given);
    if (canonical == nullptr) {
      if (unknown == UnknownKeys::kRefuse) return UnknownOptionError(given, cfg);
      continue;
    }
    if (*canonical == given) continue;
    const std::string& key = *canonical;
    if (auto both = cfg.find(key); both != cfg.end() && !(both->second == value)) {
      return InvalidArgumentError(
          fmt::format("Run option `{}` was passed under two spellings (`{}` and `{}`) with conflicting values. Pass it "
                      "once, as `{}`",
                      key, key, given, key));
    }
    resolved.emplace(key, value);
    resolved.erase(given);
  }
  for (const auto& [key, opt] : opts_) {
    auto it = resolved.find(key);
    bool unset = it == resolved.end() || CfgValIsNone(it->second);
    if (opt.is_required && unset) {
      return InvalidArgumentError(
          fmt::format("Required run option: {}, must be provided and not `None`. Given: {}", key, CfgRepr(cfg)));
    }
    if (!unset && !CfgValIs(it->second, opt.type)) {
      return InvalidArgumentError(fmt::format("Run option: {}, must be of type: {}, but was: {} ({}). Given: {}", key,
                                              CfgTypeName(opt.type), CfgValToString(it->second), PyTypeName(it->second),
                                              CfgRepr(cfg)));
    }
    if (unset) resolved[key] = opt.default_value;
    types.emplace(key, opt.type);
  }
  return ResolvedCfg(std::move(resolved), std::move(types));
}

const CfgVal* ResolvedCfg::Declared(std::string_view key, CfgType type) const {
  auto t = types_.find(key);
  if (t == types_.end() || t->second != type) {
    // A back-end reading an option it did not declare (or as another type) is a programming
    // error that every run would hit; fail loudly where it happens.
    std::fprintf(
        stderr, "torchx: internal error: run option '%.*s' read as %.*s but %s\n", static_cast<int>(key.size()),
        key.data(), static_cast<int>(CfgTypeName(type).size()), CfgTypeName(type).data(),
        t == types_.end() ? "it is not declared" : fmt::format("declared as {}", CfgTypeName(t->second)).c_str());
    std::abort();
  }
  auto it = values_.find(t->first);
  return it == values_.end() || CfgValIsNone(it->second) ? nullptr : &it->second;
}

Status ResolvedCfg::CheckResolvedBy(const RunOpts& opts, std::string_view owner) const {
  for (const auto& [key, opt] : opts.options()) {
    auto t = types_.find(key);
    if (t == types_.end() || t->second != opt.type) {
      return InvalidArgumentError(
          fmt::format("cfg: resolved against other options than {}'s (its option `{}` ({}) is {}); resolve it for {}",
                      owner, key, CfgTypeName(opt.type),
                      t == types_.end() ? "missing" : fmt::format("typed {}", CfgTypeName(t->second)), owner));
    }
  }
  return OkStatus();
}

std::optional<std::string> ResolvedCfg::Str(std::string_view key) const {
  const CfgVal* v = Declared(key, CfgType::kStr);
  return v ? std::optional<std::string>(std::get<std::string>(*v)) : std::nullopt;
}
std::optional<bool> ResolvedCfg::Bool(std::string_view key) const {
  const CfgVal* v = Declared(key, CfgType::kBool);
  return v ? std::optional<bool>(std::get<bool>(*v)) : std::nullopt;
}
std::optional<std::int64_t> ResolvedCfg::Int(std::string_view key) const {
  const CfgVal* v = Declared(key, CfgType::kInt);
  if (!v) return std::nullopt;
  if (const bool* b = std::get_if<bool>(v)) return std::int64_t{*b};  // Python: True is an int
  return std::get<std::int64_t>(*v);
}
std::optional<double> ResolvedCfg::Float(std::string_view key) const {
  const CfgVal* v = Declared(key, CfgType::kFloat);
  return v ? std::optional<double>(std::get<double>(*v)) : std::nullopt;
}
std::optional<CfgList> ResolvedCfg::List(std::string_view key) const {
  const CfgVal* v = Declared(key, CfgType::kListStr);
  return v ? std::optional<CfgList>(std::get<CfgList>(*v)) : std::nullopt;
}
std::optional<CfgDict> ResolvedCfg::Dict(std::string_view key) const {
  const CfgVal* v = Declared(key, CfgType::kDictStr);
  return v ? std::optional<CfgDict>(std::get<CfgDict>(*v)) : std::nullopt;
}

Result<CfgVal> RunOpts::Cast(std::string_view key, const RunOpt& opt, std::string_view value) const {
  return DecodeOptionValue(opt.type, value, OptionSyntax::kCfgString, fmt::format("cfg: option {}", key));
}

Result<Cfg> RunOpts::CfgFromString(std::string_view s, std::vector<std::string>* unknown) const {
  TORCHX_ASSIGN_OR_RETURN(auto pairs, CfgStringToPairs(s));
  Cfg cfg;
  for (const auto& [key, val] : pairs) {
    const std::string* canonical = CanonicalKey(key);
    if (!canonical) {
      if (unknown) unknown->push_back(fmt::format("{}={}", key, val));
      continue;
    }
    TORCHX_ASSIGN_OR_RETURN(cfg[*canonical], Cast(*canonical, *Get(*canonical), val));
  }
  return cfg;
}

Result<Cfg> RunOpts::CfgFromJson(std::string_view json) const {
  auto j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgumentError("cfg: JSON run config must be an object of option values");
  }
  auto as_string = [](const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  Cfg cfg;
  for (const auto& [key, v] : j.items()) {
    const RunOpt* opt = Get(key);
    if (!opt) continue;
    if (v.is_null()) {
      cfg[key] = std::monostate{};
    } else if (opt->type == CfgType::kListStr && v.is_array()) {
      CfgList l;
      for (const auto& item : v) l.push_back(as_string(item));
      cfg[key] = std::move(l);
    } else if (opt->type == CfgType::kDictStr && v.is_object()) {
      CfgDict d;
      for (const auto& [k, item] : v.items()) d[k] = as_string(item);
      cfg[key] = std::move(d);
    } else if (v.is_string()) {
      cfg[key] = v.get<std::string>();
    } else if (v.is_boolean()) {
      cfg[key] = v.get<bool>();
    } else if (v.is_number_integer()) {
      cfg[key] = v.get<std::int64_t>();
    } else if (v.is_number()) {
      cfg[key] = v.get<double>();
    } else {
      return InvalidArgumentError(
          fmt::format("cfg: option {}: unsupported JSON value {}, must "
                      "be a string, number, bool, list or object",
                      key, v.dump()));
    }
  }
  return cfg;
}

std::string RunOpts::Render() const {
  std::vector<const std::pair<std::string, RunOpt>*> required, optional;
  for (const auto& entry : opts_) (entry.second.is_required ? required : optional).push_back(&entry);
  auto upper = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
  };
  std::string out = "    usage:\n        ";
  size_t i = 0;
  for (const auto* group : {&required, &optional}) {
    for (const auto* e : *group) {
      std::string item = fmt::format("{}={}", e->first, upper(e->first));
      if (!e->second.is_required) item = "[" + item + "]";
      out += (i++ > 0 ? "," : "") + item;
    }
  }
  for (const auto& [title, group] : {std::pair{"required", &required}, {"optional", &optional}}) {
    if (group->empty()) continue;
    out += fmt::format("\n\n    {} arguments:", title);
    for (const auto* e : *group) {
      std::string def = e->second.is_required ? "" : ", " + CfgValToString(e->second.default_value);
      out += fmt::format("\n        {}={} ({}{})", e->first, upper(e->first), CfgTypeName(e->second.type), def);
      out += fmt::format("\n            {}", e->second.help);
    }
  }
  return out;
}

namespace {

nlohmann::json CfgValToJson(const CfgVal& v) {
  return std::visit(
      [](const auto& x) -> nlohmann::json {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::monostate>) {
          return nullptr;
        } else {
          return x;
        }
      },
      v);
}

}  // namespace

std::string RunOptsToJson(const RunOpts& opts) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [name, opt] : opts.options()) {
    out.push_back({{"name", name},
                   {"type", CfgTypeName(opt.type)},
                   {"help", opt.help},
                   {"default", CfgValToJson(opt.default_value)},
                   {"required", opt.is_required}});
  }
  return out.dump();
}

Result<RunOpts> RunOptsFromJson(std::string_view text) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_array()) return InvalidArgumentError("runopts JSON: expected a list of options");
  RunOpts opts;
  for (size_t i = 0; i < j.size(); ++i) {
    const auto& o = j[i];
    auto where = fmt::format("runopts JSON: [{}]", i);
    if (!o.is_object() || !o.contains("name") || !o["name"].is_string()) {
      return InvalidArgumentError(where + ": expected an object with a string `name`");
    }
    std::string type_name = o.value("type", "str");
    std::optional<CfgType> type;
    for (CfgType t :
         {CfgType::kStr, CfgType::kInt, CfgType::kFloat, CfgType::kBool, CfgType::kListStr, CfgType::kDictStr}) {
      if (CfgTypeName(t) == type_name) type = t;
    }
    if (!type) {
      return InvalidArgumentError(
          fmt::format("{}.type: `{}` is not one of str, int, float, bool, typing.List[str], typing.Dict[str, str]",
                      where, type_name));
    }
    CfgVal def;
    const nlohmann::json d = o.value("default", nlohmann::json());
    if (d.is_boolean()) {
      def = d.get<bool>();
    } else if (d.is_number_integer()) {
      def = d.get<std::int64_t>();
    } else if (d.is_number()) {
      def = d.get<double>();
    } else if (d.is_string()) {
      def = d.get<std::string>();
    } else if (d.is_array()) {
      CfgList l;
      for (const auto& x : d) l.push_back(x.is_string() ? x.get<std::string>() : x.dump());
      def = std::move(l);
    } else if (d.is_object()) {
      CfgDict m;
      for (const auto& [k, x] : d.items()) m[k] = x.is_string() ? x.get<std::string>() : x.dump();
      def = std::move(m);
    }
    std::string help = o.contains("help") && o["help"].is_string() ? o["help"].get<std::string>() : "";
    TORCHX_RETURN_IF_ERROR(opts.Add(o["name"].get<std::string>(), *type, help, def, o.value("required", false)));
  }
  return opts;
}

std::string CfgToJson(const Cfg& cfg) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [k, v] : cfg) out[k] = CfgValToJson(v);
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace torchx::specs
