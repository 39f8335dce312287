// Loopback transport: per (source, destination, tag) FIFO mailboxes in one process.
// SPDX-License-Identifier: Apache-2.0
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "ffsim/hfreduce/error.hpp"
#include "ffsim/hfreduce/transport.hpp"

namespace ffsim::hfreduce {

struct LoopbackHub::State {
  explicit State(int n) : ranks(n) {}
  using Key = std::tuple<int, int, std::int64_t>;  // source, destination, tag
  // Messages of one key are numbered as sent and receives as posted; receive n takes message n,
  // so matching follows posting order as in MPI.
  struct Mailbox {
    std::uint64_t sent = 0;
    std::uint64_t posted = 0;
    std::map<std::uint64_t, std::vector<std::byte>> messages;
  };
  int ranks;
  std::mutex mutex;
  std::map<Key, Mailbox> mailboxes;
};

namespace {

class DoneRequest final : public Request {
 public:
  bool test() override { return true; }
};

class LoopbackRecv final : public Request {
 public:
  LoopbackRecv(LoopbackHub::State& state, LoopbackHub::State::Key key, void* data, std::size_t bytes)
      : state_(state), key_(key), data_(data), bytes_(bytes) {
    std::lock_guard lock(state_.mutex);
    ticket_ = state_.mailboxes[key_].posted++;
  }
  bool test() override {
    if (done_) return true;
    std::lock_guard lock(state_.mutex);
    auto box = state_.mailboxes.find(key_);
    auto& messages = box->second.messages;
    auto found = messages.find(ticket_);
    if (found == messages.end()) return false;
    std::vector<std::byte> message = std::move(found->second);
    messages.erase(found);
    // as many receives as sends and nothing left unconsumed: every receive of the key is done
    if (messages.empty() && box->second.sent == box->second.posted) {
      state_.mailboxes.erase(box);
    }
    if (message.size() != bytes_) {
      FFSIM_KERNEL_THROW(KernelError, "loopback rank ", std::get<1>(key_), ": message from rank ", std::get<0>(key_),
                         " tag ", std::get<2>(key_), " has ", message.size(), " bytes, the receive expects ", bytes_);
    }
    if (bytes_ > 0) std::memcpy(data_, message.data(), bytes_);
    done_ = true;
    return true;
  }

 private:
  LoopbackHub::State& state_;
  LoopbackHub::State::Key key_;
  void* data_;
  std::size_t bytes_;
  std::uint64_t ticket_ = 0;
  bool done_ = false;
};

class LoopbackTransport final : public Transport {
 public:
  LoopbackTransport(LoopbackHub::State& state, int rank) : state_(state), rank_(rank) {}
  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return state_.ranks; }
  std::string_view name() const noexcept override { return "loopback"; }
  std::int64_t max_tag() const noexcept override { return std::numeric_limits<std::int64_t>::max(); }
  std::unique_ptr<Request> isend(int peer, std::int64_t tag, const void* data, std::size_t bytes) override {
    check_peer(peer);
    const auto* begin = static_cast<const std::byte*>(data);
    std::vector<std::byte> message(begin, begin + bytes);
    std::lock_guard lock(state_.mutex);
    LoopbackHub::State::Mailbox& box = state_.mailboxes[{rank_, peer, tag}];
    box.messages.emplace(box.sent++, std::move(message));
    return std::make_unique<DoneRequest>();
  }
  std::unique_ptr<Request> irecv(int peer, std::int64_t tag, void* data, std::size_t bytes) override {
    check_peer(peer);
    return std::make_unique<LoopbackRecv>(state_, LoopbackHub::State::Key{peer, rank_, tag}, data, bytes);
  }

 private:
  void check_peer(int peer) const {
    if (peer < 0 || peer >= state_.ranks || peer == rank_) {
      FFSIM_KERNEL_THROW(KernelError, "loopback rank ", rank_, ": peer ", peer, " is not another rank of ", state_.ranks);
    }
  }
  LoopbackHub::State& state_;
  int rank_;
};

}  // namespace

LoopbackHub::LoopbackHub(int ranks) : state_(std::make_unique<State>(ranks)) {
  FFSIM_KERNEL_CHECK(ranks >= 1, "a loopback hub needs at least 1 rank, got ", ranks);
}

LoopbackHub::~LoopbackHub() = default;

int LoopbackHub::size() const noexcept { return state_->ranks; }

std::unique_ptr<Transport> LoopbackHub::connect(int rank) {
  FFSIM_KERNEL_CHECK(rank >= 0 && rank < state_->ranks, "rank ", rank, " outside [0, ", state_->ranks, ")");
  return std::make_unique<LoopbackTransport>(*state_, rank);
}

}  // namespace ffsim::hfreduce
