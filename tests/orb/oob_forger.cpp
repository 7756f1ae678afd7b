// oob_forger: a hostile local process of the same user, for the end-to-end
// tests of out-of-band identity.
//
//   oob_forger SERVER_PID VICTIM_PID
//
// Reads node names from the runtime directory ($CLAN_RUNTIME_DIR, else
// /tmp/clanorb-<uid>), as anyone of the user can, and sends every node of
// process SERVER_PID a well-formed HEARTBEAT that names each node of process
// VICTIM_PID with a new instance id (what a restart of the victim would
// send). Then, as a node of its own, a CONNECT_REQ to a port nobody listens
// on: the server judges its frames in order, so its REJECT says the forged
// ones were judged. Prints "judged" and exits 0 once every server answered;
// exits 1 if one did not within 20 s, 2 on bad usage or setup.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "clan_emul/oob_core.hpp"
#include "clan_emul/oob_wire.hpp"

using namespace clan::oob_wire;

namespace {

// The nodes of process `pid`: names ending in its pid after a non-digit.
std::vector<std::string> nodes_of(const std::string& dir, const std::string& pid) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    std::string f = e->d_name;
    if (f.size() <= 5 || f.substr(f.size() - 5) != ".lock") continue;
    std::string node = f.substr(0, f.size() - 5);
    if (node.size() > pid.size() && node.substr(node.size() - pid.size()) == pid &&
        !std::isdigit(static_cast<unsigned char>(node[node.size() - pid.size() - 1]))) {
      out.push_back(node);
    }
  }
  ::closedir(d);
  return out;
}

bool hold_lock(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  return fd >= 0 && ::fcntl(fd, F_OFD_SETLK, &fl) == 0;  // held until exit
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const std::string dir = clan::oob_detail::default_runtime_dir();
  const auto servers = nodes_of(dir, argv[1]);
  const auto victims = nodes_of(dir, argv[2]);
  if (servers.empty() || victims.empty()) {
    std::fprintf(stderr, "oob_forger: no node of pid %s or %s in %s\n", argv[1], argv[2], dir.c_str());
    return 2;
  }
  const std::string self = "forger" + std::to_string(::getpid());
  if (!hold_lock(dir + "/" + self + ".lock")) return 2;
  zmq::context_t ctx;
  zmq::socket_t inbox(ctx, zmq::socket_type::router);
  inbox.set(zmq::sockopt::linger, 0);
  inbox.bind("ipc://" + dir + "/" + self + ".oob");

  std::vector<zmq::socket_t> out;
  for (const auto& server : servers) {
    zmq::socket_t& s = out.emplace_back(ctx, zmq::socket_type::dealer);
    s.set(zmq::sockopt::linger, 1000);
    s.connect("ipc://" + dir + "/" + server + ".oob");
    for (const auto& victim : victims) {
      Message hb;
      hb.hdr.type = MsgType::kHeartbeat;
      hb.hdr.node = victim;
      hb.hdr.instance = 0x5eed5eed5eedull;
      hb.hdr.pid = std::stoi(argv[2]);
      s.send(zmq::buffer(encode(hb)), zmq::send_flags::none);
    }
    Message marker;
    marker.hdr.type = MsgType::kConnectReq;
    marker.hdr.node = self;
    marker.hdr.instance = 1;
    marker.hdr.pid = ::getpid();
    marker.src_conn = 1;
    marker.port = 65535;
    marker.dst_node = server;
    s.send(zmq::buffer(encode(marker)), zmq::send_flags::none);
  }
  std::size_t answers = 0;
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (answers < servers.size() && std::chrono::steady_clock::now() < end) {
    zmq::pollitem_t item{inbox.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(100));
    zmq::message_t id, frame;
    if (!inbox.recv(id, zmq::recv_flags::dontwait) || !inbox.recv(frame, zmq::recv_flags::dontwait)) continue;
    auto m = decode({frame.data<std::byte>(), frame.size()});
    if (m && m->hdr.type == MsgType::kReject) ++answers;
  }
  ::unlink((dir + "/" + self + ".oob").c_str());
  ::unlink((dir + "/" + self + ".lock").c_str());
  if (answers < servers.size()) return 1;
  std::printf("judged\n");
  return 0;
}
