// giop:clan transport: registers itself with omniORB when the library is
// linked (see clan_anchor.cpp for keeping it linked).
#pragma once

#include <omniORB4/CORBA.h>
#include <omniORB4/giopEndpoint.h>

namespace clanorb {

// Our IOR component tag ("CLA0"), outside omniORB's 0x414154xx range.
constexpr CORBA::ULong kClanIorTag = 0x434c4130;

class ClanTransportImpl : public omni::giopTransportImpl {
 public:
  ClanTransportImpl();
  omni::giopEndpoint* toEndpoint(const char* param) override;
  omni::giopAddress* toAddress(const char* param) override;
  CORBA::Boolean isValid(const char* param) override;
  CORBA::Boolean addToIOR(const char* param, _OMNI_NS(IORPublish)* eps) override;
  const omnivector<const char*>* getInterfaceAddress() override { return &no_interfaces_; }

 private:
  omnivector<const char*> no_interfaces_;
};

}  // namespace clanorb
