#include "runtime/mpi/nccl_setup.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "runtime/executor.h"

namespace gg::runtime {
namespace {

// Every process's text (at most `width` bytes each), in rank order.
std::vector<std::string> AllgatherText(const std::string& mine, MPI_Comm comm) {
  constexpr size_t width = 512;
  int size = 0;
  MPI_Comm_size(comm, &size);
  std::vector<char> send(width, '\0');
  std::memcpy(send.data(), mine.data(), std::min(mine.size(), width - 1));
  std::vector<char> all(width * static_cast<size_t>(size), '\0');
  if (MPI_Allgather(send.data(), static_cast<int>(width), MPI_CHAR, all.data(),
                    static_cast<int>(width), MPI_CHAR, comm) != MPI_SUCCESS) {
    throw std::runtime_error("MPI error in MPI_Allgather");
  }
  std::vector<std::string> texts;
  for (int r = 0; r < size; ++r) texts.emplace_back(all.data() + width * static_cast<size_t>(r));
  return texts;
}

}  // namespace

std::unique_ptr<NcclBackend> MakeNcclBackend(const ir::Program& program, MpiCollectives& mpi,
                                             at::Device device, std::string* why_not) {
  MPI_Comm world = mpi.world();
  // Every process states whether it can take part ("bus <id>") or why not; all decide alike.
  std::string mine = NcclUnavailableReason(device);
  if (mine.empty()) {
    std::string bus = DeviceBusId(device);
    mine = bus.empty() ? "the PCI bus id of " + device.str() + " is unknown" : "bus " + bus;
  }
  std::vector<std::string> states = AllgatherText(mine, world);
  for (size_t r = 0; r < states.size(); ++r) {
    if (states[r].rfind("bus ", 0) != 0) {
      *why_not = states.size() == 1 ? states[r] : "rank " + std::to_string(r) + ": " + states[r];
      return nullptr;
    }
  }
  std::vector<std::vector<int32_t>> groups = CommunicatorGroups(program);
  for (const std::vector<int32_t>& members : groups) {
    for (size_t i = 0; i < members.size(); ++i) {
      for (size_t j = i + 1; j < members.size(); ++j) {
        const std::string& a = states.at(static_cast<size_t>(members[i]));
        if (a == states.at(static_cast<size_t>(members[j]))) {
          *why_not = "NCCL needs a GPU per process: ranks " + std::to_string(members[i]) + " and " +
                     std::to_string(members[j]) + " share " + a.substr(4);
          return nullptr;
        }
      }
    }
  }
  std::unique_ptr<NcclBackend> backend;
  std::string failure;
  try {
    backend = std::make_unique<NcclBackend>(
        groups, mpi.rank(), device,
        [&mpi](const std::vector<int32_t>& members, void* id, size_t bytes) {
          MPI_Comm comm = mpi.GroupComm(members);
          if (comm == MPI_COMM_NULL ||
              MPI_Bcast(id, static_cast<int>(bytes), MPI_BYTE, 0, comm) != MPI_SUCCESS) {
            throw std::runtime_error("the NCCL unique id could not be broadcast over MPI");
          }
        });
  } catch (const std::exception& e) {
    failure = ErrorText(e);
    backend.reset();
  }
  // Every process falls back together when one failed.
  std::vector<std::string> failures = AllgatherText(failure, world);
  for (size_t r = 0; r < failures.size(); ++r) {
    if (!failures[r].empty()) {
      *why_not = "rank " + std::to_string(r) + ": " + failures[r];
      return nullptr;
    }
  }
  why_not->clear();
  return backend;
}

}  // namespace gg::runtime
