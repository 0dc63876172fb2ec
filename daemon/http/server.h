#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

struct mg_context;
struct mg_connection;

namespace seatwatch::http {

class BasicAuthGate;
class TlsStore;

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  // Extra header lines, e.g. {"Allow", "GET, HEAD"} on a 405.
  std::vector<std::pair<std::string, std::string>> headers;
  // The body as pieces written in order, so a large pre-rendered text is sent
  // from the snapshot that owns it, without a copy.
  std::vector<std::shared_ptr<const std::string>> parts;
  // Sent gzip-encoded when the client's Accept-Encoding allows it (and with
  // Vary: Accept-Encoding either way). Worth it for large bodies whose parts
  // live across requests: each part is deflated once (http/gzip_cache.h).
  bool compressible = false;

  void Text(int code, std::string body, std::string type = "text/plain; charset=utf-8");
  void Append(std::shared_ptr<const std::string> part) { parts.push_back(std::move(part)); }
};

using Handler = std::function<Response()>;

// How the server is sized against idle and hostile connections. CivetWeb
// (1.15) gives each connection one worker thread for its whole life and starts
// all workers at once, so a socket that sends nothing holds a worker until a
// timeout: enough workers that a few hundred such sockets leave some free,
// and timeouts short enough that they let go soon. The figures behind these
// defaults (attack and memory) are in docs/http-attack.md.
struct ServerOptions {
  // Workers: concurrent connections served, more than the 200 hostile
  // sockets the defaults are measured against. About 23 KiB of RSS each at
  // idle (all are started at once), about 27 KiB more each once it has
  // served a request (header buffer, stack); 8 MiB of address space each.
  int threads = 256;
  // A new connection must deliver its whole request header within this
  // (measured from when a worker takes it, so time spent queued does not
  // count); also the longest a response write may make no progress. A
  // scraper sends its request at once; a silent or slowloris socket is cut
  // after this.
  std::chrono::milliseconds request_timeout{2000};
  // How long an idle kept-alive connection keeps its worker between
  // requests. Above Prometheus's usual 15 s scrape interval, so a running
  // Prometheus keeps its connection (and its worker) from scrape to scrape;
  // an idler costs one worker for this long.
  std::chrono::milliseconds keep_alive_timeout{20000};
  // Accepted connections waiting for a worker; when full, CivetWeb stops
  // accepting and further connections wait in the kernel's listen backlog.
  int connection_queue = 64;
  int listen_backlog = 1024;

  // Set: the port speaks HTTPS only (CivetWeb's TLS), each handshake served
  // the certificate this store holds then (SIGHUP swaps it), refusing
  // protocol versions below tls_min_version (an OpenSSL TLS1_x_VERSION).
  std::shared_ptr<TlsStore> tls;
  int tls_min_version = 0x0303;  // TLS1_2_VERSION
  // Set and enabled(): Basic credentials are required (see BasicAuthGate).
  std::shared_ptr<BasicAuthGate> auth;
};

// CivetWeb behind a small routing table of exact paths. Handlers run on
// CivetWeb's worker threads and must be thread-safe; any exception they throw
// becomes a 500 (CivetWeb itself catches nothing). GET and HEAD only; other
// methods get a 405 with Allow; then, with auth, missing or wrong
// credentials get a 401 with WWW-Authenticate, and credentials that cannot
// be checked now (too many being checked, BasicAuth) a 503 with Retry-After.
class Server {
 public:
  Server(std::string listen, ServerOptions options = {});
  ~Server();

  void Route(std::string path, Handler handler);
  // Throws std::runtime_error if the address cannot be bound, is IPv6 and
  // this build of CivetWeb has no IPv6, or TLS is asked for and CivetWeb
  // cannot load OpenSSL.
  void Start();
  void Stop();
  const std::string& listen() const { return listen_; }

 private:
  static int Dispatch(mg_connection* connection, void* self);
  static int InitTls(void* ssl_context, void* self);
  int Serve(mg_connection* connection);

  std::string listen_;
  ServerOptions options_;
  std::map<std::string, Handler> routes_;
  mg_context* context_ = nullptr;
};

// Converts "HOST:PORT" into CivetWeb's listening_ports syntax.
std::string ListeningPorts(const std::string& listen);

}  // namespace seatwatch::http
