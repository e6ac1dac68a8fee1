// A request body read whole (in memory, or in a temporary file past
// client_body_buffer_size) and handed again to any number of readers: the
// client's own content handler and each mirror read it from here
// (http/whole_body.h reads it).
#pragma once

#include <memory>

#include "handlers/request_body_buffer.h"
#include "http/exchange.h"

namespace torii::core {
class EventLoop;
}

namespace torii::http {

using StoredBody = handlers::RequestBodyBuffer;

// An Exchange::BodySource over a stored body: pieces of at most 64 KB,
// delivered from the loop (never inside the reader's own call), paused when
// the reader says so until it resumes.
class BodyReplay final : public Exchange::BodySource {
 public:
  BodyReplay(core::EventLoop& loop, std::shared_ptr<const StoredBody> body) : loop_(loop), body_(std::move(body)) {}

  void read_body(BodyReader* reader) override;
  void resume_body() override;
  const std::shared_ptr<const StoredBody>& body() const { return body_; }

 private:
  void schedule();
  void pump();

  core::EventLoop& loop_;
  std::shared_ptr<const StoredBody> body_;
  BodyReader* reader_ = nullptr;
  int64_t offset_ = 0;
  bool paused_ = false;
  bool resumed_ = false;    // resume_body() came while the reader had a piece
  bool scheduled_ = false;
  bool ended_ = false;
  std::shared_ptr<char> alive_ = std::make_shared<char>();
};

}  // namespace torii::http
