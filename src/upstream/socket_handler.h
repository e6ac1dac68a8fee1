// The epoll handler of one upstream socket, registered once for the
// socket's life. It lives apart from its owner so that the owner can change
// (a request, the keep-alive pool while the connection is idle) without an
// epoll_ctl, and so that the owner can go away at any time: the socket's
// last owner retires it, and it is destroyed at the end of the loop turn,
// after any event for it that epoll already reported in this turn has been
// dispatched (to the owner of the moment, or ignored).
#pragma once

#include <cstdint>
#include <memory>

#include "core/event_loop.h"

namespace torii::upstream {

class SocketOwner {
 public:
  virtual ~SocketOwner() = default;
  virtual void on_socket_io(uint32_t events) = 0;
};

class SocketHandler final : public core::IoHandler {
 public:
  explicit SocketHandler(SocketOwner* owner) : owner_(owner) {}
  void on_io(uint32_t events) override {
    if (owner_) owner_->on_socket_io(events);
  }
  void set_owner(SocketOwner* owner) { owner_ = owner; }
  // Stops callbacks and frees this handler at the end of the turn.
  static void retire(core::EventLoop& loop, std::shared_ptr<SocketHandler>& h) {
    if (!h) return;
    h->owner_ = nullptr;
    loop.defer([keep = std::move(h)] {});
  }

 private:
  SocketOwner* owner_;
};

}  // namespace torii::upstream
