#include "matmul.h"

#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>

namespace gpt {
namespace {

using dnnl::memory;

memory::desc Desc(const MatView& v) {
  memory::dims dims(v.dims.begin(), v.dims.begin() + v.rank);
  memory::dims strides(v.strides.begin(), v.strides.begin() + v.rank);
  return memory::desc(dims, memory::data_type::f32, strides);
}

std::string Key(const MatView& a, const MatView& b, const MatView& c, Post post, float scale) {
  std::string k = std::to_string(static_cast<int>(post)) + "/" + std::to_string(scale);
  for (const MatView* v : {&a, &b, &c}) {
    for (int i = 0; i < v->rank; ++i) {
      k += "," + std::to_string(v->dims[i]) + ":" + std::to_string(v->strides[i]);
    }
    k += "|";
  }
  return k;
}

}  // namespace

struct Matmul::Impl {
  struct Cached {
    dnnl::matmul prim;
    memory::desc a, b, c;
    memory scratch;
  };
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::unordered_map<std::string, Cached> cache;

  Cached Create(const MatView& a, const MatView& b, const MatView& c, Post post, float scale) {
    Cached e;
    e.a = Desc(a);
    e.b = Desc(b);
    e.c = Desc(c);
    dnnl::post_ops ops;
    switch (post) {
      case Post::kNone:
        break;
      case Post::kAccumulate:
        ops.append_sum(scale);
        break;
      case Post::kRelu:
        ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
        break;
      case Post::kReluSquare:
        ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
        ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_square, 0.0f, 0.0f);
        break;
      case Post::kGeluTanh:
        ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_tanh, 0.0f, 0.0f);
        break;
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    // Scratch memory per primitive and context: contexts never share one.
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(e.a, e.b, e.c), attr, engine);
    e.prim = dnnl::matmul(pd);
    e.scratch = memory(pd.scratchpad_desc(), engine);
    return e;
  }
};

Matmul::Matmul() : impl_(std::make_unique<Impl>()) {}
Matmul::~Matmul() = default;

void Matmul::operator()(const MatView& a, const MatView& b, const MatView& c, Post post,
                        float scale) {
  const std::string key = Key(a, b, c, post, scale);
  auto it = impl_->cache.find(key);
  if (it == impl_->cache.end()) {
    it = impl_->cache.emplace(key, impl_->Create(a, b, c, post, scale)).first;
  }
  Impl::Cached& e = it->second;
  memory ma(e.a, impl_->engine, const_cast<float*>(a.p));
  memory mb(e.b, impl_->engine, const_cast<float*>(b.p));
  memory mc(e.c, impl_->engine, const_cast<float*>(c.p));
  e.prim.execute(impl_->stream, {{DNNL_ARG_SRC, ma},
                                 {DNNL_ARG_WEIGHTS, mb},
                                 {DNNL_ARG_DST, mc},
                                 {DNNL_ARG_SCRATCHPAD, e.scratch}});
  impl_->stream.wait();
}

}  // namespace gpt
