#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

struct mg_context;
struct mg_connection;

namespace seatwatch::http {

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  // The body as pieces written in order, so a large pre-rendered text is sent
  // from the snapshot that owns it, without a copy.
  std::vector<std::shared_ptr<const std::string>> parts;

  void Text(int code, std::string body, std::string type = "text/plain; charset=utf-8");
  void Append(std::shared_ptr<const std::string> part) { parts.push_back(std::move(part)); }
};

using Handler = std::function<Response()>;

// CivetWeb behind a small routing table of exact paths. Handlers run on
// CivetWeb's worker threads and must be thread-safe; any exception they throw
// becomes a 500 (CivetWeb itself catches nothing). GET and HEAD only.
class Server {
 public:
  Server(std::string listen, int threads);
  ~Server();

  void Route(std::string path, Handler handler);
  // Throws std::runtime_error if the address cannot be bound.
  void Start();
  void Stop();
  const std::string& listen() const { return listen_; }

 private:
  static int Dispatch(mg_connection* connection, void* self);
  int Serve(mg_connection* connection);

  std::string listen_;
  int threads_;
  std::map<std::string, Handler> routes_;
  mg_context* context_ = nullptr;
};

// Converts "HOST:PORT" into CivetWeb's listening_ports syntax.
std::string ListeningPorts(const std::string& listen);

}  // namespace seatwatch::http
