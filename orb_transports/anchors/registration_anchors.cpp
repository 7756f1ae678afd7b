// Linked into every program that uses clanorb::transports or
// libclanorb_transports: a regular object's references to the three anchors
// make the linker keep each plugin's registration object, whether the plugin
// comes from a static archive or from a shared library under --as-needed
// (where -Wl,--undefined alone does not keep the library).
extern "C" {
extern int clanorb_clan_anchor;
extern int clanorb_otp_anchor;
extern int clanorb_via_anchor;
}

namespace {
// Internal and kept: two copies in one link neither clash nor get discarded.
[[gnu::used]] int* const registration_anchors[] = {&clanorb_clan_anchor, &clanorb_otp_anchor,
                                                   &clanorb_via_anchor};
}  // namespace
