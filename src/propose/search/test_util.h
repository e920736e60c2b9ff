// Helpers for the search library's tests: parameter declarations in one line.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "propose/search/space.h"

namespace ratchet::testing {

inline ParamSpec Float(const std::string& name, double low, double high, bool log = false) {
  ParamSpec p;
  p.name = name;
  p.file = "train.cpp";
  p.type = ParamSpec::Type::kFloat;
  p.low = low;
  p.high = high;
  p.log = log;
  return p;
}

inline ParamSpec Int(const std::string& name, double low, double high, int64_t step = 1,
                     bool pow2 = false) {
  ParamSpec p = Float(name, low, high);
  p.type = ParamSpec::Type::kInt;
  p.step = step;
  p.pow2 = pow2;
  return p;
}

inline ParamSpec Choice(const std::string& name, std::vector<Literal> values) {
  ParamSpec p = Float(name, 0, 1);
  p.type = ParamSpec::Type::kChoice;
  p.choices = std::move(values);
  return p;
}

inline ParamSpec Choice(const std::string& name, const std::vector<std::string>& values) {
  std::vector<Literal> literals;
  for (const std::string& v : values) literals.push_back(Literal::String(v));
  return Choice(name, literals);
}

inline SearchSpace MakeSpace(std::vector<ParamSpec> params,
                             std::vector<std::string> constraints = {}) {
  SearchSpace s;
  std::string err;
  EXPECT_TRUE(SearchSpace::Create(std::move(params), std::move(constraints), &s, &err)) << err;
  return s;
}

}  // namespace ratchet::testing
