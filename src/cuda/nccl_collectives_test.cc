// The NCCL collectives against host computations: in one process (a group of one), and, when the
// binary runs under mpirun with a GPU per process, over the whole world and over a sub-group.
// Inputs are small integers, so every sum is exact and results compare exactly. Skipped without a
// CUDA device.
#include "cuda/nccl_collectives.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "cuda/device.h"
#include "cuda/gpu_test_util.h"

namespace gg::cuda {
namespace {

struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Rank r's input: integers in [-4, 4] depending on r and the position.
HostTensor InputOf(int r, const std::vector<int64_t>& shape) {
  HostTensor t{shape, {}};
  for (int64_t i = 0; i < Numel(shape); ++i) {
    t.values.push_back(static_cast<float>((i * 7 + r * 3) % 9 - 4));
  }
  return t;
}

// Concatenation along dim of the parts (equal shapes).
HostTensor Concat(const std::vector<HostTensor>& parts, int64_t dim) {
  HostTensor out{parts[0].shape, {}};
  out.shape[dim] *= static_cast<int64_t>(parts.size());
  int64_t outer = 1, block = 1;
  for (int64_t i = 0; i < dim; ++i) outer *= parts[0].shape[i];
  for (size_t i = dim; i < parts[0].shape.size(); ++i) block *= parts[0].shape[i];
  for (int64_t o = 0; o < outer; ++o) {
    for (const HostTensor& p : parts) {
      out.values.insert(out.values.end(), p.values.begin() + o * block,
                        p.values.begin() + (o + 1) * block);
    }
  }
  return out;
}

// Chunk i of n along dim.
HostTensor Chunk(const HostTensor& t, int64_t dim, int n, int i) {
  HostTensor out{t.shape, {}};
  out.shape[dim] /= n;
  int64_t outer = 1, block = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= t.shape[d];
  for (size_t d = dim; d < t.shape.size(); ++d) block *= t.shape[d];
  int64_t part = block / n;
  for (int64_t o = 0; o < outer; ++o) {
    auto start = t.values.begin() + o * block + i * part;
    out.values.insert(out.values.end(), start, start + part);
  }
  return out;
}

// A float32 tensor in device memory: a copy of a host tensor, or uninitialized of a shape.
struct Device {
  DeviceBuffer buffer;
  DeviceTensor tensor;
  explicit Device(const HostTensor& t) : buffer(t.values.size() * sizeof(float)) {
    buffer.CopyFromHost(t.values.data(), t.values.size() * sizeof(float));
    tensor = {buffer.data(), DataType::kFloat32, t.shape};
  }
  explicit Device(const std::vector<int64_t>& shape)
      : buffer(static_cast<size_t>(Numel(shape)) * sizeof(float)) {
    tensor = {buffer.data(), DataType::kFloat32, shape};
  }
  std::vector<float> Read() const {
    std::vector<float> v(static_cast<size_t>(tensor.numel()));
    buffer.CopyToHost(v.data(), v.size() * sizeof(float));
    return v;
  }
};

// Runs every collective in a group where this process is member `me` of `members.size()` and
// member m's inputs are InputOf(members[m], ...), against the host results.
void CheckEveryCollective(const NcclCommunicator& comm, const std::vector<int>& members) {
  const int n = static_cast<int>(members.size());
  const int me = comm.rank();
  ASSERT_EQ(comm.size(), n);
  Stream stream;
  const std::vector<int64_t> shape = {2 * n, 3, 4 * n};
  std::vector<HostTensor> inputs;
  for (int m : members) inputs.push_back(InputOf(m, shape));
  Device in(inputs[me]);

  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kAvg}) {
    SCOPED_TRACE("all_reduce " + std::to_string(static_cast<int>(op)));
    Device out(shape);
    AllReduce(in.tensor, out.tensor, op, comm, stream.get());
    stream.Synchronize();
    std::vector<float> got = out.Read();
    for (size_t i = 0; i < got.size(); ++i) {
      float want = inputs[0].values[i];
      for (int m = 1; m < n; ++m) {
        float v = inputs[m].values[i];
        want = op == ReduceOp::kMax ? std::max(want, v)
               : op == ReduceOp::kMin ? std::min(want, v)
                                      : want + v;
      }
      if (op == ReduceOp::kAvg) want /= static_cast<float>(n);
      ASSERT_FLOAT_EQ(got[i], want) << i;
    }
  }
  for (int64_t dim : {0, 1, 2}) {
    SCOPED_TRACE("dim " + std::to_string(dim));
    HostTensor gathered = Concat(inputs, dim);
    Device out(gathered.shape);
    AllGather(in.tensor, out.tensor, dim, comm, stream.get());
    stream.Synchronize();
    EXPECT_EQ(out.Read(), gathered.values);

    if (shape[dim] % n == 0) {
      HostTensor sum{shape, std::vector<float>(inputs[0].values.size(), 0.0f)};
      for (const HostTensor& t : inputs) {
        for (size_t i = 0; i < sum.values.size(); ++i) sum.values[i] += t.values[i];
      }
      HostTensor mine = Chunk(sum, dim, n, me);
      Device scattered(mine.shape);
      ReduceScatter(in.tensor, scattered.tensor, dim, ReduceOp::kSum, comm, stream.get());
      stream.Synchronize();
      EXPECT_EQ(scattered.Read(), mine.values);
    }
  }
  {
    Device out(shape);
    int root = n - 1;
    Broadcast(in.tensor, out.tensor, root, comm, stream.get());
    stream.Synchronize();
    EXPECT_EQ(out.Read(), inputs[root].values);
  }
  {
    Device out(shape);
    AllToAll(in.tensor, out.tensor, comm, stream.get());
    stream.Synchronize();
    std::vector<HostTensor> parts;
    for (int m = 0; m < n; ++m) parts.push_back(Chunk(inputs[m], 0, n, me));
    EXPECT_EQ(out.Read(), Concat(parts, 0).values);
  }
  Device wrong({1, 1});
  EXPECT_THROW(AllGather(in.tensor, wrong.tensor, 0, comm, stream.get()), std::invalid_argument);
}

TEST(Nccl, EveryCollectiveInAGroupOfOne) {
  GG_SKIP_WITHOUT_CUDA();
  std::unique_ptr<NcclCommunicator> comm = NcclCommunicator::CreateSingle();
  CheckEveryCollective(*comm, {MpiWorldActive() ? MpiWorldRank() : 0});
}

#if GG_HAVE_MPI
TEST(Nccl, EveryCollectiveOverTheMpiWorldAndASubGroup) {
  GG_SKIP_WITHOUT_CUDA();
  if (!MpiWorldActive() || MpiWorldSize() < 2) {
    GTEST_SKIP() << "not under mpirun with 2 or more processes";
  }
  if (DeviceCount() < MpiWorldSize()) {
    // NCCL needs a GPU per process of a communicator.
    GTEST_SKIP() << "fewer CUDA devices (" << DeviceCount() << ") than processes ("
                 << MpiWorldSize() << ")";
  }
  std::vector<int> world;
  for (int r = 0; r < MpiWorldSize(); ++r) world.push_back(r);
  std::unique_ptr<NcclCommunicator> all = NcclCommunicator::CreateForGroup(MPI_COMM_WORLD, world);
  ASSERT_NE(all, nullptr);
  CheckEveryCollective(*all, world);
  // The even ranks, in reverse order: group positions differ from world ranks.
  std::vector<int> evens;
  for (int r = MpiWorldSize() - 1; r >= 0; --r) {
    if (r % 2 == 0) evens.push_back(r);
  }
  std::unique_ptr<NcclCommunicator> sub = NcclCommunicator::CreateForGroup(MPI_COMM_WORLD, evens);
  EXPECT_EQ(sub != nullptr, MpiWorldRank() % 2 == 0);
  if (sub != nullptr) CheckEveryCollective(*sub, evens);
}
#endif

TEST(Device, LocalRankFromTheLaunchersEnvironment) {
  // Needs no device: reads the environment only.
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3", 1);
  EXPECT_EQ(LocalRankFromEnvironment(), 3);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "x", 1);
  unsetenv("MPI_LOCALRANKID");
  unsetenv("SLURM_LOCALID");
  unsetenv("LOCAL_RANK");
  EXPECT_EQ(LocalRankFromEnvironment(), -1);
  unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
}

TEST(Device, NoDeviceIsReportedNotThrown) {
  int count = DeviceCount();
  EXPECT_GE(count, 0);
  if (count == 0) {
    EXPECT_NE(NoDeviceReason().find("no CUDA device"), std::string::npos);
    EXPECT_THROW(SelectDeviceForLocalRank(0), std::runtime_error);
  } else {
    EXPECT_EQ(NoDeviceReason(), "");
    EXPECT_EQ(SelectDeviceForLocalRank(count), 0);
  }
}

TEST(Device, BuffersAndStreams) {
  GG_SKIP_WITHOUT_CUDA();
  DeviceBuffer a(64);
  std::vector<uint8_t> bytes(64);
  for (int i = 0; i < 64; ++i) bytes[i] = static_cast<uint8_t>(i);
  a.CopyFromHost(bytes.data(), 64);
  DeviceBuffer b = std::move(a);
  EXPECT_EQ(a.data(), nullptr);
  std::vector<uint8_t> back(64);
  b.CopyToHost(back.data(), 64);
  EXPECT_EQ(back, bytes);
  EXPECT_THROW(b.CopyToHost(back.data(), 65), std::invalid_argument);
  Stream s;
  s.Synchronize();
}

}  // namespace
}  // namespace gg::cuda
