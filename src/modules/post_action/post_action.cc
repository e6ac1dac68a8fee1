#include "modules/post_action/post_action.h"

#include "config/config.h"
#include "http/exchange.h"
#include "modules/mirror/mirrors.h"

namespace torii::post_action {

void after_response(http::Exchange& ex) {
  // The client's own requests only: not a subrequest, a mirror, a
  // background update or a post action itself.
  if (!ex.server || ex.status == 0 || ex.subrequest_depth > 0 || ex.access.subrequest || ex.background) return;
  const std::string& target = ex.settings().post_action;
  if (target.empty() || !ex.services().mirrors) return;
  ex.services().mirrors->start_post_action(ex, target);
}

}  // namespace torii::post_action
