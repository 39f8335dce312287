// The SimGrid engine: replays a schedule as SimGrid activities on a platform built from ours.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "eval/engine.hpp"

namespace ffsim::sim {

/// Replays schedules on SimGrid 3.32 (CM02, cross-traffic off, no TCP window cap): each platform
/// resource becomes a SHARED link of its capacity and latency 0; each (path, class weight) a pair
/// of hosts whose route is that path plus a FATPIPE penalty link of latency arbitration/weight
/// (CM02 shares a link in proportion to 1/route latency, which realises the class weights); rate
/// caps become Comm::set_rate; an operation's fixed latency is a bounded Exec on a timer host.
/// SimGrid allows one engine per process, so every run happens in a forked child process that
/// sends its timings back through a pipe.
class SimGridEngine final : public eval::Engine {
public:
  [[nodiscard]] eval::Result run(const sched::Schedule& s, const platform::Platform& p) override;
};

}  // namespace ffsim::sim
