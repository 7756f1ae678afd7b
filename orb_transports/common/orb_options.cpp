// clanorb's ORB options, registered with omniORB from the option table. They
// must be registered before ORB_init parses its arguments, hence static
// registration. omniORB hands every value to visit() as text, whether it came
// from the command line, an environment variable (ORBclanSpinNs=...) or a
// configuration file (clanSpinNs = ...; omniORB strips the blanks around it):
// a value that is not a decimal integer in the option's range makes ORB_init
// fail (INITIALIZE, with the option, the accepted range and where the value
// came from logged) rather than being wrapped, clamped or failing at connect
// time.
#include <optional>
#include <string>

#include <omniORB4/CORBA.h>
#include <omniORB4/internal/initialiser.h>
#include <omniORB4/internal/orbOptions.h>

#include "orb_transports/common/fabric.hpp"
#include "orb_transports/common/option_table.hpp"

OMNI_USING_NAMESPACE(omni)

namespace clanorb {
namespace {

const char* where(orbOptions::Source source) {
  switch (source) {
    case orbOptions::fromFile: return "in the configuration file";
    case orbOptions::fromEnvironment: return "in an environment variable";
    case orbOptions::fromArgv: return "on the command line";
    default: return "in ORB_init's options";
  }
}

// omniORB keeps pointers to a handler's usage texts: they live beside it.
struct UsageTexts {
  explicit UsageTexts(const OrbOptionSpec& spec)
      : usage_text(std::string(spec.key) + (spec.names ? " = name: " : " = n: ") +
                   accepted_range(spec) + " (" + spec.transports + "). " + spec.what),
        argv_usage_text(std::string("-ORB") + spec.key + " < " + accepted_range(spec) + " >") {}
  std::string usage_text;
  std::string argv_usage_text;
};

class TableOption : private UsageTexts, public orbOptions::Handler {
 public:
  explicit TableOption(const OrbOptionSpec& spec)
      : UsageTexts(spec), Handler(spec.key, usage_text.c_str(), 1, argv_usage_text.c_str()), spec_(spec) {}
  void visit(const char* value, orbOptions::Source source) override {
    uint64_t v = 0;
    if (std::optional<std::string> why = check_value(spec_, value, v)) {
      *why += std::string(" (given ") + where(source) + ")";
      throw orbOptions::BadParam(key(), value, why->c_str());
    }
    spec_.set(fabric_options(), v);
  }
  void dump(orbOptions::sequenceString& result) override {
    const uint64_t v = spec_.get(fabric_options());
    if (spec_.names) return orbOptions::addKVString(key(), spec_.names[v], result);
    orbOptions::addKVULong(key(), static_cast<CORBA::ULong>(v), result);
  }

 private:
  const OrbOptionSpec& spec_;
};

// An option whose value is text, checked as it is read.
struct TextUsageTexts {
  explicit TextUsageTexts(const OrbTextOptionSpec& spec)
      : usage_text(std::string(spec.key) + " = text: " + spec.accepted + " (" + spec.transports + "). " +
                   spec.what),
        argv_usage_text(std::string("-ORB") + spec.key + " < " + spec.accepted + " >") {}
  std::string usage_text;
  std::string argv_usage_text;
};

class TextOption : private TextUsageTexts, public orbOptions::Handler {
 public:
  explicit TextOption(const OrbTextOptionSpec& spec)
      : TextUsageTexts(spec), Handler(spec.key, usage_text.c_str(), 1, argv_usage_text.c_str()), spec_(spec) {}
  void visit(const char* value, orbOptions::Source source) override {
    std::string why = spec_.problem(value);
    if (!why.empty()) {
      why += std::string("; ") + spec_.key + " takes " + spec_.accepted + " (given " + where(source) + ")";
      throw orbOptions::BadParam(key(), value, why.c_str());
    }
    fabric_options().*spec_.field = value;
  }
  void dump(orbOptions::sequenceString& result) override {
    orbOptions::addKVString(key(), (fabric_options().*spec_.field).c_str(), result);
  }

 private:
  const OrbTextOptionSpec& spec_;
};

// Options sharing a maximum are checked together once all are read: whichever
// omniORB visits first must not be judged against the other's old value.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnon-virtual-dtor"  // omniORB's base; ours is never deleted
class SharedMaximaCheck final : public omniInitialiser {
 public:
  void attach() override {
    const std::optional<SharedMaxProblem> p = check_shared_maxima(fabric_options());
    if (!p) return;
    if (omniORB::trace(1)) {
      omniORB::logger l;
      l << "ORB_init failed: Bad parameter (" << p->value.c_str()
        << ") for ORB configuration option " << p->spec->key << ", reason: " << p->why.c_str()
        << "\n";
    }
    throw CORBA::INITIALIZE(INITIALIZE_InvalidORBInitArgs, CORBA::COMPLETED_NO);
  }
  void detach() override {}
};
#pragma GCC diagnostic pop

}  // namespace

// Called by every transport's static registration (so this file is linked
// even from a static library, and before any ORB_init parses options).
void register_orb_options() {
  // Function-local: constructed on first call, whichever static calls first.
  static const bool done = [] {
    // omniORB holds the handlers until the process ends: never deleted.
    for (const OrbOptionSpec& spec : orb_option_table())
      orbOptions::singleton().registerHandler(*new TableOption(spec));
    for (const OrbTextOptionSpec& spec : orb_text_option_table())
      orbOptions::singleton().registerHandler(*new TextOption(spec));
    static SharedMaximaCheck shared_maxima;
    omniInitialiser::install(&shared_maxima);
    return true;
  }();
  (void)done;
}

}  // namespace clanorb
