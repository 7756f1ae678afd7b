// A program of a project that uses clanorb from its installed prefix only.
//   consumer server [ORB options]       serves a Greeter, prints its IOR, runs until killed
//   consumer client IOR [ORB options]   makes one call, prints "reply: <text>", exits 0 if it matches
// It names no clanorb header or symbol: linking clanorb::transports (or
// pkg-config's clanorb) is all a program does to get giop:clan.
#include <cstring>
#include <iostream>

#include "greeter.hh"

namespace {

class GreeterImpl : public POA_Greeter {
 public:
  char* echo(const char* text) override { return CORBA::string_dup(text); }
};

int serve(CORBA::ORB_ptr orb) {
  CORBA::Object_var obj = orb->resolve_initial_references("RootPOA");
  PortableServer::POA_var poa = PortableServer::POA::_narrow(obj);
  PortableServer::Servant_var<GreeterImpl> servant = new GreeterImpl;
  PortableServer::ObjectId_var id = poa->activate_object(servant);
  CORBA::Object_var ref = poa->id_to_reference(id);
  CORBA::String_var ior = orb->object_to_string(ref);
  PortableServer::POAManager_var manager = poa->the_POAManager();
  manager->activate();
  std::cout << ior.in() << std::endl;
  orb->run();
  return 0;
}

int call(CORBA::ORB_ptr orb, const char* ior) {
  CORBA::Object_var obj = orb->string_to_object(ior);
  Greeter_var greeter = Greeter::_narrow(obj);
  if (CORBA::is_nil(greeter)) {
    std::cerr << "consumer client: the IOR is not a Greeter\n";
    return 1;
  }
  const char* text = "hello over clanorb";
  CORBA::String_var reply = greeter->echo(text);
  std::cout << "reply: " << reply.in() << std::endl;
  return std::strcmp(reply.in(), text) == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);
    if (argc == 2 && std::strcmp(argv[1], "server") == 0) return serve(orb);
    if (argc == 3 && std::strcmp(argv[1], "client") == 0) return call(orb, argv[2]);
    std::cerr << "usage: consumer server | consumer client IOR  [ORB options]\n";
    return 2;
  } catch (const CORBA::Exception& ex) {
    std::cerr << "consumer: CORBA::" << ex._name() << "\n";
    return 1;
  }
}
