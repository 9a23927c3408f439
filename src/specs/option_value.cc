#include "torchx/specs/option_value.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "core/strings.h"

namespace torchx::specs {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string_view CfgTypeShortName(CfgType t) {
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
      return "list";
    case CfgType::kDictStr:
      return "dict";
  }
  return "str";
}

Result<CfgVal> DecodeOptionValue(CfgType type, std::string_view text, OptionSyntax syntax, std::string_view name) {
  // Component help and errors speak the declarations' short type names; -cfg and config errors
  // speak TorchX's Python ones (typing.List[str]).
  std::string_view type_name = syntax == OptionSyntax::kComponentArg ? CfgTypeShortName(type) : CfgTypeName(type);
  auto bad = [&](std::string_view expected) {
    return InvalidArgumentError(fmt::format("{}: invalid {} value '{}'{}", name, type_name, text, expected));
  };
  if (syntax == OptionSyntax::kConfigFile && text == "None") return CfgVal{};
  switch (type) {
    case CfgType::kStr:
      return CfgVal(std::string(text));
    case CfgType::kBool: {
      std::string v = Lower(text);
      // Component arguments: TorchX takes anything but "true" as false. -cfg and config files take
      // the INI vocabulary and refuse anything else (TorchX HEAD).
      if (syntax == OptionSyntax::kComponentArg) return CfgVal(v == "true");
      if (v == "1" || v == "yes" || v == "true" || v == "on") return CfgVal(true);
      if (v == "0" || v == "no" || v == "false" || v == "off") return CfgVal(false);
      return bad(", must be one of [true, false, yes, no, on, off, 1, 0]");
    }
    case CfgType::kInt: {
      std::string s(internal::Strip(text));
      char* end = nullptr;
      errno = 0;
      long long n = std::strtoll(s.c_str(), &end, 10);
      if (s.empty() || *end != '\0' || errno == ERANGE) return bad(", expected an integer");
      if (syntax == OptionSyntax::kComponentArg && (n < INT32_MIN || n > INT32_MAX)) {
        return bad(", out of range (must fit in 32 bits)");
      }
      return CfgVal(static_cast<std::int64_t>(n));
    }
    case CfgType::kFloat: {
      std::string s(internal::Strip(text));
      char* end = nullptr;
      double d = std::strtod(s.c_str(), &end);
      if (s.empty() || *end != '\0') return bad(", expected a number");
      return CfgVal(d);
    }
    case CfgType::kListStr: {
      CfgList items;
      switch (syntax) {
        case OptionSyntax::kComponentArg:
          for (const std::string& item : internal::SplitAny(text, ",")) items.emplace_back(internal::Strip(item));
          break;
        case OptionSyntax::kCfgString:
          for (std::string& item : internal::SplitAny(text, ",;")) {
            if (!item.empty()) items.push_back(std::move(item));
          }
          break;
        case OptionSyntax::kConfigFile:
          items = internal::SplitAny(text, ";");
          break;
      }
      return CfgVal(std::move(items));
    }
    case CfgType::kDictStr: {
      CfgDict d;
      if (syntax == OptionSyntax::kComponentArg) {
        auto pairs = CfgStringToPairs(text);
        if (!pairs) return bad(", expected k1=v1,k2=v2");
        for (auto& [k, v] : *pairs) d[k] = std::move(v);
        return CfgVal(std::move(d));
      }
      for (const std::string& item : internal::SplitAny(text, ",;")) {
        size_t colon = item.find(':');
        if (colon == std::string::npos) return bad(fmt::format(": item '{}' is not of the form key:value", item));
        d[item.substr(0, colon)] = item.substr(colon + 1);
      }
      return CfgVal(std::move(d));
    }
  }
  return bad("");
}

}  // namespace torchx::specs
