#include "convert.h"

#include <nlohmann/json.hpp>

#include "errors.h"
#include "torchx/specs/serialize.h"

namespace torchx::python {
namespace py = pybind11;

specs::Cfg CfgFromPy(const py::handle& cfg) {
  specs::Cfg out;
  if (cfg.is_none()) return out;
  for (auto [k, v] : py::reinterpret_borrow<py::dict>(cfg)) {
    std::string key = py::str(k);
    if (v.is_none()) {
      out[key] = std::monostate{};
    } else if (py::isinstance<py::bool_>(v)) {
      out[key] = v.cast<bool>();
    } else if (py::isinstance<py::int_>(v)) {
      out[key] = v.cast<std::int64_t>();
    } else if (py::isinstance<py::float_>(v)) {
      out[key] = v.cast<double>();
    } else if (py::isinstance<py::str>(v)) {
      out[key] = v.cast<std::string>();
    } else if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
      specs::CfgList l;
      for (auto item : v) l.push_back(py::str(item));
      out[key] = std::move(l);
    } else if (py::isinstance<py::dict>(v)) {
      specs::CfgDict d;
      for (auto [ik, iv] : py::reinterpret_borrow<py::dict>(v)) d[py::str(ik)] = py::str(iv);
      out[key] = std::move(d);
    } else {
      throw py::type_error("cfg[" + key + "]: expected None, bool, int, float, str, list[str] or dict[str, str], got " +
                           std::string(py::str(py::type::of(v).attr("__name__"))));
    }
  }
  return out;
}

py::object CfgValToPy(const specs::CfgVal& v) {
  return std::visit(
      [](const auto& x) -> py::object {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return py::none();
        } else if constexpr (std::is_same_v<T, specs::CfgList>) {
          py::list l;
          for (const auto& s : x) l.append(py::str(s));
          return l;
        } else if constexpr (std::is_same_v<T, specs::CfgDict>) {
          py::dict d;
          for (const auto& [k, s] : x) d[py::str(k)] = py::str(s);
          return d;
        } else {
          return py::cast(x);
        }
      },
      v);
}

py::dict CfgToPy(const specs::Cfg& cfg) {
  py::dict d;
  for (const auto& [k, v] : cfg) d[py::str(k)] = CfgValToPy(v);
  return d;
}

namespace {
nlohmann::json FirstRole(specs::Role role) {
  specs::AppDef app;
  app.roles.push_back(std::move(role));
  return nlohmann::json::parse(specs::AppDefToJson(app, -1))["roles"][0];
}
}  // namespace

std::string MountsToJson(const std::vector<specs::Mount>& mounts) {
  specs::Role role;
  role.mounts = mounts;
  return FirstRole(std::move(role))["mounts"].dump();
}

}  // namespace torchx::python
