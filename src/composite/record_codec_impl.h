// The definitions of record_codec.h's CodecOf, for the kinds' store sources (it brings in
// nlohmann/json): `template struct CodecOf<...>;` there instantiates a kind's codec.
#pragma once

#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "composite/record_codec.h"

namespace torchx::composite {

namespace codec_internal {
inline std::string Dump(const RecordJson& j) { return j.dump(-1, ' ', false, RecordJson::error_handler_t::replace); }
}  // namespace codec_internal

template <typename R, typename C, ChildList<C> R::*kMember, typename Parts>
std::string CodecOf<R, C, kMember, Parts>::HeaderLine(const R& r) {
  return WriteRecord(r, [&r](RecordJson& j) { Parts::WriteOwn(r, j); });
}

template <typename R, typename C, ChildList<C> R::*kMember, typename Parts>
std::string CodecOf<R, C, kMember, Parts>::ChildLine(const C& c) {
  RecordJson j = RecordJson::object();
  Parts::WriteChildJson(c, j);
  return codec_internal::Dump(j);
}

template <typename R, typename C, ChildList<C> R::*kMember, typename Parts>
Result<R> CodecOf<R, C, kMember, Parts>::FromLines(RecordLines& lines) {
  R r;
  TORCHX_RETURN_IF_ERROR(
      ReadRecord(lines.header, Parts::kNoun, r, [&r](const RecordJson& j) { return Parts::ReadOwn(j, r); }));
  ChildList<C>& children = r.*kMember;
  children.reserve(lines.children.size());
  for (size_t i = 0; i < lines.children.size(); ++i) {
    C c;
    try {
      TORCHX_RETURN_IF_ERROR(Parts::ReadChildJson(RecordJson::parse(lines.children[i]), c, r));
    } catch (const RecordJson::exception& e) {
      return InternalError(fmt::format("{} record: {}[{}]: {}", Parts::kNoun, Parts::kChildrenKey, i, e.what()));
    }
    children.push_back(std::move(c));
    std::string().swap(lines.children[i]);  // the text goes as the child comes: one copy at a time
  }
  return r;
}

template <typename R, typename C, ChildList<C> R::*kMember, typename Parts>
Result<RecordLines> CodecOf<R, C, kMember, Parts>::SplitLegacy(const std::string& text) {
  try {
    RecordJson j = RecordJson::parse(text);
    RecordLines out;
    auto it = j.find(Parts::kChildrenKey);
    if (it != j.end() && it->is_array()) {
      out.children.reserve(it->size());
      for (const RecordJson& c : *it) out.children.push_back(codec_internal::Dump(c));
      j.erase(it);
    }
    out.header = codec_internal::Dump(j);
    return out;
  } catch (const RecordJson::exception& e) {
    return InternalError(fmt::format("{} record: {}", Parts::kNoun, e.what()));
  }
}

template <typename R, typename C, ChildList<C> R::*kMember, typename Parts>
std::string CodecOf<R, C, kMember, Parts>::ToJson(const R& r) {
  return WriteRecord(r, [&r](RecordJson& j) {
    Parts::WriteOwn(r, j);
    RecordJson children = RecordJson::array();
    for (const C& c : r.*kMember) {
      RecordJson one = RecordJson::object();
      Parts::WriteChildJson(c, one);
      children.push_back(std::move(one));
    }
    j[Parts::kChildrenKey] = std::move(children);
  });
}

template <typename R, typename C, ChildList<C> R::*kMember, typename Parts>
Result<R> CodecOf<R, C, kMember, Parts>::FromJson(const std::string& text) {
  TORCHX_ASSIGN_OR_RETURN(RecordLines lines, SplitLegacy(text));
  return FromLines(lines);
}

}  // namespace torchx::composite
