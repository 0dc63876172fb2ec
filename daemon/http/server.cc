#include "http/server.h"

#include <civetweb.h>

#include <cstring>
#include <mutex>
#include <stdexcept>

#include "http/basic_auth_gate.h"
#include "http/basic_auth_header.h"
#include "http/gzip_accept.h"
#include "http/gzip_body.h"
#include "http/listen_support.h"
#include "http/tls_context.h"
#include "util/log.h"

namespace seatwatch::http {

namespace {

const char* StatusText(int status) {
  switch (status) {
    case 200: return "OK";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
  }
  return "Unknown";
}

// The body as written: the parts themselves, or one gzip member built from
// their cached deflated bytes when the response allows it and the client
// accepts it. A HEAD gets the headers (and Content-Length) of the GET.
struct Body {
  bool gzip = false;
  GzipBody gzip_body;
  size_t length = 0;
};

Body EncodeBody(mg_connection* connection, const Response& response, std::string* extra) {
  Body body;
  if (response.compressible) {
    *extra += "Vary: Accept-Encoding\r\n";
    const char* accept = mg_get_header(connection, "Accept-Encoding");
    if (accept && AcceptsGzip(accept)) {
      try {
        body.gzip_body = EncodeGzip(response.parts, GzipPartCache::Shared());
        body.gzip = true;
        body.length = body.gzip_body.length;
        *extra += "Content-Encoding: gzip\r\n";
        return body;
      } catch (const std::exception& e) {
        // Identity is always acceptable: better a large scrape than none.
        log::Error("gzip encoding failed, sending identity", {{"error", e.what()}});
      }
    }
  }
  for (const auto& part : response.parts) body.length += part->size();
  return body;
}

void Send(mg_connection* connection, const Response& response, bool head) {
  std::string extra;
  for (const auto& [name, value] : response.headers) extra += name + ": " + value + "\r\n";
  Body body = EncodeBody(connection, response, &extra);
  mg_printf(connection,
            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
            "Cache-Control: no-store\r\n%s\r\n",
            response.status, StatusText(response.status), response.content_type.c_str(),
            body.length, extra.c_str());
  if (head) return;
  for (const auto& piece : body.gzip ? body.gzip_body.pieces : response.parts) {
    if (!piece->empty()) mg_write(connection, piece->data(), piece->size());
  }
}

std::once_flag g_civetweb_init;

std::string Millis(std::chrono::milliseconds value) { return std::to_string(value.count()); }

}  // namespace

void Response::Text(int code, std::string body, std::string type) {
  status = code;
  content_type = std::move(type);
  parts.clear();
  parts.push_back(std::make_shared<const std::string>(std::move(body)));
}

std::string ListeningPorts(const std::string& listen) {
  auto colon = listen.rfind(':');
  if (colon == std::string::npos) throw std::invalid_argument("listen address needs a port");
  std::string host = listen.substr(0, colon);
  std::string port = listen.substr(colon + 1);
  if (host.empty() || host == "0.0.0.0" || host == "*") return port;
  if (host.front() == '[') return "+" + host + ":" + port;  // CivetWeb's IPv6 form is [addr]:port
  if (host == "localhost") host = "127.0.0.1";
  return host + ":" + port;
}

Server::Server(std::string listen, ServerOptions options)
    : listen_(std::move(listen)), options_(options) {}

Server::~Server() { Stop(); }

void Server::Route(std::string path, Handler handler) { routes_[std::move(path)] = std::move(handler); }

void Server::Start() {
  std::call_once(g_civetweb_init, [] { mg_init_library(0); });
  // Without IPv6 CivetWeb would fail to bind with no reason given.
  if (std::string why = ListenUnsupported(listen_); !why.empty()) {
    throw std::runtime_error("cannot listen on " + listen_ + ": " + why);
  }
  std::string ports = ListeningPorts(listen_);
  if (ports.rfind("+[", 0) == 0) ports = ports.substr(1);
  if (options_.tls) {
    RequireCivetWebTls();
    ports += "s";  // CivetWeb: this port speaks TLS only
  }
  std::string threads = std::to_string(options_.threads);
  std::string request_timeout = Millis(options_.request_timeout);
  std::string keep_alive_timeout = Millis(options_.keep_alive_timeout);
  std::string queue = std::to_string(options_.connection_queue);
  std::string backlog = std::to_string(options_.listen_backlog);
  const char* options[] = {"listening_ports", ports.c_str(),
                           "num_threads", threads.c_str(),
                           "request_timeout_ms", request_timeout.c_str(),
                           "enable_keep_alive", "yes",
                           "keep_alive_timeout_ms", keep_alive_timeout.c_str(),
                           "connection_queue", queue.c_str(),
                           "listen_backlog", backlog.c_str(),
                           // Headers and body go out in separate writes; without
                           // this, Nagle plus delayed ACKs add ~40 ms to every
                           // keep-alive scrape.
                           "tcp_nodelay", "1",
                           nullptr};
  mg_callbacks callbacks;
  std::memset(&callbacks, 0, sizeof callbacks);
  // CivetWeb makes the SSL_CTX; the certificate is ours to give (InitTls).
  if (options_.tls) callbacks.init_ssl = &Server::InitTls;
  mg_init_data init{&callbacks, this, options};
  char error_text[256] = "";
  mg_error_data error{nullptr, error_text, sizeof error_text};
  context_ = mg_start2(&init, &error);
  if (!context_) {
    // CivetWeb's own reason when it gives one (a failed bind, TLS set-up).
    throw std::runtime_error("cannot listen on " + listen_ +
                             (error_text[0] ? std::string(": ") + error_text
                                            : std::string(" (address in use, or not an address of this host?)")));
  }
  // One catch-all handler: routing by exact path is ours, so /metricsfoo is a
  // 404 rather than a prefix match.
  mg_set_request_handler(context_, "/", &Server::Dispatch, this);
  log::Info("http server listening",
            {{"listen", listen_},
             {"tls", options_.tls ? "on" : "off"},
             {"basic_auth", options_.auth && options_.auth->enabled() ? "on" : "off"},
             {"threads", threads},
             {"request_timeout_ms", request_timeout},
             {"keep_alive_timeout_ms", keep_alive_timeout}});
}

void Server::Stop() {
  if (!context_) return;
  mg_stop(context_);
  context_ = nullptr;
}

int Server::Dispatch(mg_connection* connection, void* self) {
  return static_cast<Server*>(self)->Serve(connection);
}

// 1: the callback set the certificate up (CivetWeb loads none itself).
int Server::InitTls(void* ssl_context, void* self) {
  const ServerOptions& options = static_cast<Server*>(self)->options_;
  return ConfigureTlsContext(static_cast<SSL_CTX*>(ssl_context), options.tls.get(), options.tls_min_version)
             ? 1
             : -1;
}

int Server::Serve(mg_connection* connection) {
  const mg_request_info* request = mg_get_request_info(connection);
  std::string method = request->request_method ? request->request_method : "";
  bool head = method == "HEAD";
  Response response;
  try {
    std::string path = request->local_uri ? request->local_uri : "/";
    auto route = routes_.find(path);
    if (method != "GET" && !head) {
      response.Text(405, "only GET and HEAD are supported\n");
      response.headers.emplace_back("Allow", "GET, HEAD");
    } else {
      AuthVerdict verdict = options_.auth ? options_.auth->Admit(path, mg_get_header(connection, "Authorization"))
                                          : AuthVerdict::kAllowed;
      if (verdict == AuthVerdict::kDenied) {
        response.Text(401, "unauthorized: valid Basic credentials are required\n");
        response.headers.emplace_back("WWW-Authenticate", kBasicChallenge);
      } else if (verdict == AuthVerdict::kBusy) {
        // Not a 401: the credentials may well be right (see BasicAuth).
        response.Text(503, "busy: too many credentials are being checked; retry shortly\n");
        response.headers.emplace_back("Retry-After", "1");
      } else if (route == routes_.end()) {
        response.Text(404, "not found: " + path + "\n");
      } else {
        response = route->second();
      }
    }
  } catch (const std::exception& e) {
    log::Error("http handler failed", {{"error", e.what()}});
    response = Response();
    response.Text(500, "internal error\n");
  } catch (...) {
    log::Error("http handler failed", {{"error", "unknown exception"}});
    response = Response();
    response.Text(500, "internal error\n");
  }
  try {
    Send(connection, response, head);
  } catch (...) {
    // A client that went away mid-response is not worth more than a debug line.
    log::Debug("http write failed");
  }
  return response.status;
}

}  // namespace seatwatch::http
