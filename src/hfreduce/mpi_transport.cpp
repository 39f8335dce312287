// MpiTransport: MPI_Isend/MPI_Irecv on a duplicated communicator, polled with MPI_Test.
// SPDX-License-Identifier: Apache-2.0
#include "ffsim/hfreduce/mpi_transport.hpp"

#include <algorithm>
#include <climits>

namespace ffsim::hfreduce {

std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(length));
}

namespace {

class MpiRequest final : public Request {
 public:
  MpiRequest(MpiTransport& transport, MPI_Request request, bool receive, int peer, std::int64_t tag, std::size_t bytes)
      : transport_(transport), request_(request), receive_(receive), peer_(peer), tag_(tag), bytes_(bytes) {}
  MpiRequest(const MpiRequest&) = delete;
  MpiRequest& operator=(const MpiRequest&) = delete;
  ~MpiRequest() override {
    if (request_ == MPI_REQUEST_NULL) return;
    // Abandoned (the operation failed or timed out). Never block here: a receive whose transfer
    // from a dead peer had begun cannot finish cancelling (MPI_Wait would hang, as seen with
    // OpenMPI 4.1's shared-memory single-copy path), so cancel, test once, else just free it.
    auto lock = transport_.lock_if_serialized();
    if (receive_) {
      (void)MPI_Cancel(&request_);
      int flag = 0;
      (void)MPI_Test(&request_, &flag, MPI_STATUS_IGNORE);
      if (flag != 0) return;
    }
    (void)MPI_Request_free(&request_);
  }
  bool test() override {
    if (request_ == MPI_REQUEST_NULL) return true;
    int flag = 0;
    MPI_Status status{};
    int code = MPI_SUCCESS;
    {
      auto lock = transport_.lock_if_serialized();
      code = MPI_Test(&request_, &flag, &status);
    }
    if (code != MPI_SUCCESS) {
      FFSIM_KERNEL_THROW(KernelError, "mpi rank ", transport_.rank(), ": ", receive_ ? "receive from" : "send to",
                         " rank ", peer_, " (tag ", tag_, ", ", bytes_, " bytes) failed: ", mpi_error_string(code));
    }
    if (flag == 0) return false;
    if (receive_) {
      int count = 0;
      FFSIM_MPI_CHECK(MPI_Get_count(&status, MPI_BYTE, &count));
      if (static_cast<std::size_t>(count) != bytes_) {
        FFSIM_KERNEL_THROW(KernelError, "mpi rank ", transport_.rank(), ": message from rank ", peer_, " tag ", tag_,
                           " has ", count, " bytes, the receive expects ", bytes_);
      }
    }
    return true;
  }

 private:
  MpiTransport& transport_;
  MPI_Request request_;
  bool receive_;
  int peer_;
  std::int64_t tag_;
  std::size_t bytes_;
};

const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
    default:
      return "an unknown thread level";
  }
}

}  // namespace

MpiTransport::MpiTransport(MPI_Comm comm, bool serialize) {
  int initialized = 0;
  FFSIM_MPI_CHECK(MPI_Initialized(&initialized));
  if (initialized == 0) FFSIM_KERNEL_THROW(KernelError, "MpiTransport needs MPI to be initialised (MpiSession)");
  int level = MPI_THREAD_SINGLE;
  FFSIM_MPI_CHECK(MPI_Query_thread(&level));
  if (level < MPI_THREAD_SERIALIZED) {
    FFSIM_KERNEL_THROW(KernelError, "MPI runs at ", thread_level_name(level),
                       "; hfreduce's MPI transport needs MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE "
                       "(two tree threads call MPI)");
  }
  serialize_ = serialize || level < MPI_THREAD_MULTIPLE;
  FFSIM_MPI_CHECK(MPI_Comm_dup(comm, &comm_));
  FFSIM_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  FFSIM_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  FFSIM_MPI_CHECK(MPI_Comm_size(comm_, &size_));
  void* attribute = nullptr;
  int found = 0;
  FFSIM_MPI_CHECK(MPI_Comm_get_attr(comm_, MPI_TAG_UB, &attribute, &found));
  if (found != 0 && attribute != nullptr) max_tag_ = *static_cast<int*>(attribute);
  // The ranks of this node: a split by shared memory, its ranks translated back to comm_'s.
  MPI_Comm node = MPI_COMM_NULL;
  FFSIM_MPI_CHECK(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node));
  int node_size = 0;
  MPI_Group node_group = MPI_GROUP_NULL, group = MPI_GROUP_NULL;
  int status = MPI_Comm_size(node, &node_size);
  std::vector<int> local(static_cast<std::size_t>(std::max(node_size, 0))), global(local.size(), MPI_UNDEFINED);
  for (std::size_t i = 0; i < local.size(); ++i) local[i] = static_cast<int>(i);
  if (status == MPI_SUCCESS) status = MPI_Comm_group(node, &node_group);
  if (status == MPI_SUCCESS) status = MPI_Comm_group(comm_, &group);
  if (status == MPI_SUCCESS)
    status = MPI_Group_translate_ranks(node_group, node_size, local.data(), group, global.data());
  if (node_group != MPI_GROUP_NULL) (void)MPI_Group_free(&node_group);
  if (group != MPI_GROUP_NULL) (void)MPI_Group_free(&group);
  (void)MPI_Comm_free(&node);
  FFSIM_MPI_CHECK(status);
  same_node_.assign(static_cast<std::size_t>(size_), false);
  for (int r : global)
    if (r >= 0 && r < size_) same_node_[static_cast<std::size_t>(r)] = true;
}

bool MpiTransport::shares_memory_with(int peer) const noexcept {
  return peer >= 0 && peer < size_ && peer != rank_ && same_node_[static_cast<std::size_t>(peer)];
}

MpiTransport::~MpiTransport() {
  if (comm_ != MPI_COMM_NULL) (void)MPI_Comm_free(&comm_);
}

std::unique_lock<std::mutex> MpiTransport::lock_if_serialized() {
  return serialize_ ? std::unique_lock<std::mutex>(mutex_) : std::unique_lock<std::mutex>();
}

void MpiTransport::check(int peer, std::int64_t tag, std::size_t bytes) const {
  if (peer < 0 || peer >= size_ || peer == rank_) {
    FFSIM_KERNEL_THROW(KernelError, "mpi rank ", rank_, ": peer ", peer, " is not another rank of ", size_);
  }
  if (tag < 0 || tag > max_tag_) FFSIM_KERNEL_THROW(KernelError, "mpi tag ", tag, " outside [0, ", max_tag_, "]");
  if (bytes > static_cast<std::size_t>(INT_MAX)) {
    FFSIM_KERNEL_THROW(KernelError, "mpi message of ", bytes, " bytes exceeds INT_MAX; use smaller slices");
  }
}

std::unique_ptr<Request> MpiTransport::isend(int peer, std::int64_t tag, const void* data, std::size_t bytes) {
  check(peer, tag, bytes);
  MPI_Request request = MPI_REQUEST_NULL;
  {
    auto lock = lock_if_serialized();
    FFSIM_MPI_CHECK(MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, peer, static_cast<int>(tag), comm_, &request));
  }
  return std::make_unique<MpiRequest>(*this, request, false, peer, tag, bytes);
}

std::unique_ptr<Request> MpiTransport::irecv(int peer, std::int64_t tag, void* data, std::size_t bytes) {
  check(peer, tag, bytes);
  MPI_Request request = MPI_REQUEST_NULL;
  {
    auto lock = lock_if_serialized();
    FFSIM_MPI_CHECK(MPI_Irecv(data, static_cast<int>(bytes), MPI_BYTE, peer, static_cast<int>(tag), comm_, &request));
  }
  return std::make_unique<MpiRequest>(*this, request, true, peer, tag, bytes);
}

MpiSession::MpiSession(int* argc, char*** argv) {
  FFSIM_MPI_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided_));
}

MpiSession::~MpiSession() { (void)MPI_Finalize(); }

}  // namespace ffsim::hfreduce
