// A build-flag variant on the device: inputs uploaded once, outputs poisoned, checked after a launch.
#include "kernels/pitfalls/cuda/flag_run.h"

#include <vector>

#include "kernels/common/cuda/check.h"

namespace gtb::pitfalls {

namespace {
// One spare element: a buffer is never empty, whatever the workload leaves unused.
template <class T>
gtb::cuda::DeviceBuffer upload(const std::vector<T>& v) {
  gtb::cuda::DeviceBuffer b((v.size() + 1) * sizeof(T));
  if (!v.empty()) GTB_CUDA_CHECK(cudaMemcpy(b.get(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return b;
}
}  // namespace

DeviceFlagRun::DeviceFlagRun(const FlagData& d)
    : d_(d),
      x_(upload(d.x)),
      bias_(upload(d.bias)),
      g_(upload(d.g)),
      labels_(upload(d.labels)),
      out_((d.out_size() + 1) * sizeof(float)),
      out2_((d.out2_size() + 1) * sizeof(float)) {
  poison();
}

void DeviceFlagRun::poison() {
  GTB_CUDA_CHECK(cudaMemset(out_.get(), 0xFF, out_.bytes()));  // all-ones bits: a NaN
  GTB_CUDA_CHECK(cudaMemset(out2_.get(), 0xFF, out2_.bytes()));
  // The legacy-stream work must be done before a non-blocking stream touches the buffers.
  GTB_CUDA_CHECK(cudaDeviceSynchronize());
}

void DeviceFlagRun::enqueue(const DeviceKernels& k, cudaStream_t s) {
  const float* x = x_.as<float>();
  float* out = out_.as<float>();
  float* out2 = out2_.as<float>();
  cudaError_t e = cudaSuccess;
  switch (d_.work) {
    case FlagWork::chain: e = k.chain(x, out, d_.n, s); break;
    case FlagWork::act: e = k.act(x, bias_.as<float>(), g_.as<float>(), out, out2, d_.rows, kActWidth, s); break;
    case FlagWork::xent: e = k.xent(x, labels_.as<int>(), out, out2, d_.rows, kXentClasses, s); break;
    case FlagWork::reduce: e = k.reduce(x, out, d_.n, s); break;
  }
  GTB_CUDA_CHECK(e);
}

FlagCheck DeviceFlagRun::check() const {
  GTB_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> got(d_.out_size()), got2(d_.out2_size());
  GTB_CUDA_CHECK(cudaMemcpy(got.data(), out_.get(), got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  if (!got2.empty())
    GTB_CUDA_CHECK(cudaMemcpy(got2.data(), out2_.get(), got2.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return check_flag_output(d_, got.data(), got2.data());
}

}  // namespace gtb::pitfalls
